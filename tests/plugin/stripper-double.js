// Fault-injection double of bootstrap/stripper.js: the real stripper's loop and code
// (serveStripper), with each stripped answer altered the way a compromised or broken stripper
// might before it is sent.
//   node stripper-double.js <alteration> [--max-message-bytes=N]
// or, where a launch cannot pass arguments (launch.stripperPath), a one-line wrapper that sets
// globalThis.stripperAlteration and imports this file.
// Alterations of the stripped text (answers where the stripper blanked nothing, or for semicolon
// no run of two, pass as is): inject (a blanked character becomes code), newline (a blank becomes
// a line break), drop (one character fewer), semicolon (a `;` inside a blanked run), unchanged (no
// alteration: the control). Alterations of the protocol, for every answer: garbage (a line that
// is not JSON), wrong-id (the answer names another request), silent (no answer at all).
import { serveStripper } from '../../bootstrap/stripper-loop.js';
import { FrameWriter } from '../../bootstrap/frame-writer.js';

const args = process.argv.slice(2);
const alteration = globalThis.stripperAlteration ?? args.shift();
process.argv.splice(2, process.argv.length, ...args.filter((a) => a.startsWith('--')));

// The first blanked position (first index where the stripped text differs).
function firstBlank(source, code) {
  for (let i = 0; i < code.length; i++) if (code[i] !== source[i]) return i;
  return -1;
}

// A blank space whose left neighbour was blanked too: inside a blanked run.
function innerBlank(source, code) {
  for (let i = 1; i < code.length; i++) {
    if (code[i] === ' ' && code[i] !== source[i] && code[i - 1] !== source[i - 1]) return i;
  }
  return -1;
}

const ALTER_CODE = {
  unchanged: (code) => code,
  inject: (code, at) => `${code.slice(0, at)}x${code.slice(at + 1)}`,
  newline: (code, at) => `${code.slice(0, at)}\n${code.slice(at + 1)}`,
  drop: (code, at) => code.slice(0, at) + code.slice(at + 1),
  semicolon: (code, at, source) => {
    const inner = innerBlank(source, code);
    return inner === -1 ? code : `${code.slice(0, inner)};${code.slice(inner + 1)}`;
  },
};

// Raw lines written on fd 3 instead of an answer.
const raw = new FrameWriter(3, 1 << 20, () => process.exit(1));
const ALTER_PROTOCOL = {
  garbage: () => {
    raw.sendJson('this is not JSON');
    return null;
  },
  'wrong-id': (answer) => ({ ...answer, id: answer.id + 1000 }),
  silent: () => null,
};

if (!Object.hasOwn(ALTER_CODE, alteration) && !Object.hasOwn(ALTER_PROTOCOL, alteration)) {
  process.stderr.write(`stripper double: unknown alteration ${alteration}\n`);
  process.exit(2);
}

serveStripper({
  alter(answer, request) {
    if (Object.hasOwn(ALTER_PROTOCOL, alteration)) return ALTER_PROTOCOL[alteration](answer);
    if (!answer.ok) return answer;
    const at = firstBlank(request.source, answer.code);
    return at === -1 ? answer : { ...answer, code: ALTER_CODE[alteration](answer.code, at, request.source) };
  },
});
