// Wires the child together after `hello`: warning filter, environment confinement, output
// capture, failure hooks and the fd-3 reader feeding the control loop.

import { ChildLoop } from './child-loop.js';
import { readControl } from './control-reader.js';
import { confineEnvironment } from './environment.js';
import { FrameReader } from './frame-reader.js';
import { OutputCapture } from './output.js';
import { dropRuntimeWarnings } from './warnings.js';

export function startChild({ writer, options, controlFd, diagnose }) {
  dropRuntimeWarnings();
  confineEnvironment();

  const output = new OutputCapture(writer);
  output.installStreams();

  const protocolError = (message) => {
    diagnose(`protocol error: ${message}`);
    process.exit(2);
  };
  const loop = new ChildLoop({ writer, output, options, onProtocolError: protocolError });

  // Failures outside the awaited program still belong to the active run; with no active run
  // they are discarded so a settled run's leftovers cannot end the process.
  process.on('uncaughtException', (error) => loop.failActive(error));
  process.on('unhandledRejection', (reason) => loop.failActive(reason));

  let sawRun = false;
  const reader = new FrameReader(
    options.maxMessageBytes,
    (frame) => {
      if (frame.type === 'run') sawRun = true;
      loop.handleFrame(frame);
    },
    (error) => protocolError(error.message),
  );
  // Adopting the inherited descriptor wraps it; it creates no socket (socket() is denied).
  readControl(controlFd, {
    onChunk: (chunk) => {
      reader.push(chunk);
      return sawRun;
    },
    onEnd: () => process.exit(0),
    onError: (error) => {
      diagnose(`control channel error: ${error.code ?? error.message}`);
      process.exit(1);
    },
  });
}
