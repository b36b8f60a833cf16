// Child entry point, started by the host as
//   node --max-old-space-size=<MiB> [--experimental-vm-modules] process.js
//        --max-message-bytes=<N> --max-pending-calls=<N>
// with fd 3 = the control socket. Sends `hello`, confines the environment, captures output,
// then evaluates `run` frames one at a time. It never closes fd 3 itself and exits when the
// host closes it. Only modules that load on any Node are imported statically, so an unsupported
// Node still gets to say hello (the host then rejects it by its version).

import fs from 'node:fs';
import module from 'node:module';
import { FrameWriter } from './frame-writer.js';
import { parseOptions } from './options.js';

const CONTROL_FD = 3;
const PROTOCOL_REVISION = 1;
const MIN_NODE_MAJOR = 22;

function diagnose(message) {
  // fd 2 directly: process.stderr is captured as program output once a run starts.
  try {
    fs.writeSync(2, `ptc bootstrap: ${message}\n`);
  } catch {
    // Nothing else can be done about a lost stderr.
  }
}

let options;
try {
  options = parseOptions(process.argv.slice(2));
} catch (error) {
  diagnose(error.message);
  process.exit(2);
}

const writer = new FrameWriter(CONTROL_FD, options.maxMessageBytes, (error) => {
  diagnose(`control channel lost: ${error.code ?? error.message}`);
  process.exit(1);
});

// strippedPrograms: a run frame may carry a program the host's type stripper already stripped.
writer.send({ type: 'hello', protocol: PROTOCOL_REVISION, node: process.version, strippedPrograms: true });

const major = Number(process.versions.node.split('.')[0]);
if (major < MIN_NODE_MAJOR || typeof module.stripTypeScriptTypes !== 'function') {
  diagnose(`Node ${process.version} lacks module.stripTypeScriptTypes or is older than ${MIN_NODE_MAJOR}`);
  process.exit(1);
}

const { startChild } = await import('./child-main.js');
startChild({ writer, options, controlFd: CONTROL_FD, diagnose });
