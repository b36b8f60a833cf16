// Fault-injection double of bootstrap/stripper.js: speaks the same protocol and strips with the
// real stripper's code, then alters each stripped text the way a compromised stripper might.
//   node stripper-double.js <alteration>
// alterations: inject (a blanked character becomes code), newline (a blank becomes a line break),
// drop (one character fewer), semicolon (a `;` inside a blanked run), unchanged (no alteration: the
// control). Answers where the stripper blanked nothing (or, for semicolon, no run of two) pass as is.
import { spawn } from 'node:child_process';
import net from 'node:net';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const alteration = process.argv[2];

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

const ALTER = {
  unchanged: (code) => code,
  inject: (code, at) => `${code.slice(0, at)}x${code.slice(at + 1)}`,
  newline: (code, at) => `${code.slice(0, at)}\n${code.slice(at + 1)}`,
  drop: (code, at) => code.slice(0, at) + code.slice(at + 1),
  semicolon: (code, at, source) => {
    const inner = innerBlank(source, code);
    return inner === -1 ? code : `${code.slice(0, inner)};${code.slice(inner + 1)}`;
  },
};
if (!Object.hasOwn(ALTER, alteration)) {
  process.stderr.write(`stripper double: unknown alteration ${alteration}\n`);
  process.exit(2);
}

const real = spawn(process.execPath, [join(here, '../../bootstrap/stripper.js'), ...process.argv.slice(3)], {
  stdio: ['ignore', 'inherit', 'inherit', 'pipe'],
});
const toReal = real.stdio[3];
// The host's end: fd 3, as for the real stripper.
const host = new net.Socket({ fd: 3, readable: true, writable: true });
// Lines end at LF only (readline would also split at U+2028 inside JSON strings).
function onLines(stream, onLine, onEnd = () => {}) {
  let pending = '';
  stream.setEncoding('utf8');
  stream.on('data', (chunk) => {
    const lines = (pending + chunk).split('\n');
    pending = lines.pop();
    lines.forEach(onLine);
  });
  stream.on('end', onEnd);
}

const sources = new Map();
onLines(host, (line) => {
  const request = JSON.parse(line);
  sources.set(request.id, request.source);
  toReal.write(`${line}\n`);
}, () => toReal.end());
onLines(toReal, (line) => {
  const answer = JSON.parse(line);
  if (answer.ok) {
    const source = sources.get(answer.id);
    const at = firstBlank(source, answer.code);
    if (at !== -1) answer.code = ALTER[alteration](answer.code, at, source);
  }
  host.write(`${JSON.stringify(answer)}\n`);
});
real.on('exit', (code) => host.end(() => process.exit(code ?? 1)));
