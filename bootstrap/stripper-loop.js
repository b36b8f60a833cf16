// The type stripper's loop (stripper.js is its entry): a long-lived Node process that runs only
// Node's erasable-type stripper (amaro) for the host, so program processes never pay for loading
// it. The host starts it as
//   node stripper.js --max-message-bytes=<N>
// confined like a program (read-only, no writable root, no network) and speaks newline-delimited
// JSON on fd 3, a stream socket (as the child's control channel; fd 0 is /dev/null):
//   in:  {"id": <integer>, "format": <program format>, "filename": <string>, "source": <string>}
//   out: {"type": "ready"} once, after a warm-up strip of a constant input; then per request
//                 {"id", "ok": true, "code": <stripped source>} or
//                 {"id", "ok": false, "message": <"SyntaxError: ..." with location and caret>}
// The formats' wraps and messages are the evaluators' own (strip-wraps.js), so errors read exactly
// as when the child strips. A malformed request ends the process (exit 2): the host restarts it.
// End of file on fd 3 ends it with status 0.
// Nothing here is trusted by the host: it checks every stripped text (plugin/base/strip_check.c).

import net from 'node:net';
import { FrameReader } from './frame-reader.js';
import { FrameWriter } from './frame-writer.js';
import { parseOptions } from './options.js';
import { STRIP_WRAPS } from './strip-wraps.js';
import { isProgramSyntaxError, stripProgramTypes } from './typescript.js';
import { dropRuntimeWarnings } from './warnings.js';

const CONTROL_FD = 3;

function fail(message) {
  process.stderr.write(`ptc stripper: ${message}\n`);
  process.exit(2);
}


function answer(request) {
  const { id, format, filename, source } = request ?? {};
  const wrap = Object.hasOwn(STRIP_WRAPS, format) ? STRIP_WRAPS[format] : undefined;
  if (!Number.isSafeInteger(id) || !wrap || typeof filename !== 'string' || typeof source !== 'string') {
    fail('malformed request');
  }
  try {
    return { id, ok: true, code: stripProgramTypes(source, { ...wrap, filename }) };
  } catch (error) {
    if (!isProgramSyntaxError(error)) throw error;
    return { id, ok: false, message: error.formatted };
  }
}

// Serves requests on fd 3 until end of file. `alter(answer, request)` returns the answer to send
// (null: none); only the stripper's fault-injection double (tests/plugin/stripper-double.js)
// passes one.
export function serveStripper({ alter = (answer) => answer } = {}) {
  let options;
  try {
    options = parseOptions(process.argv.slice(2));
  } catch (error) {
    fail(error.message);
  }
  dropRuntimeWarnings();
  const writer = new FrameWriter(CONTROL_FD, options.maxMessageBytes, (error) => fail(`fd 3 lost: ${error.code ?? error.message}`));
  // Loads and compiles amaro (and its wasm) before the first program arrives.
  answer({ id: 0, format: 'async-function', filename: '[warm-up]', source: 'const warm: number = 1; return warm as number' });
  writer.send({ type: 'ready' });

  const reader = new FrameReader(options.maxMessageBytes, (frame) => {
    const sent = alter(answer(frame), frame);
    if (sent !== null) writer.send(sent);
  }, (error) => fail(error.message));
  // Adopting the inherited descriptor wraps it; it creates no socket (socket() is denied).
  const control = new net.Socket({ fd: CONTROL_FD, readable: true, writable: true });
  control.on('data', (chunk) => reader.push(chunk));
  control.on('end', () => process.exit(0));
  control.on('error', (error) => fail(`fd 3 lost: ${error.code ?? error.message}`));
}
