// The type stripper, started by the host as `node stripper.js --max-message-bytes=<N>` with its
// requests on fd 3; the protocol and the loop are in stripper-loop.js.
import { serveStripper } from './stripper-loop.js';

serveStripper();
