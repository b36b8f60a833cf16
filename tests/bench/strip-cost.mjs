// What stripping a trivial TypeScript program costs where it can happen, to choose per mode
// (bootstrap/README.md, "Where types are stripped"):
//   cold: a fresh process's first strip (amaro's compile) -- `node -e <one strip>` against
//         `node -e 0`, interleaved;
//   warm: a strip in a process that already stripped (a prewarmed process's case) against the
//         round trip of the same request through a warm bootstrap/stripper.js over a socket on
//         its fd 3 (the per-call path), interleaved.
// Usage: node tests/bench/strip-cost.mjs [runs] [round trips]
import { spawn } from 'node:child_process';
import module from 'node:module';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { ROOT } from '../conformance/harness.js';
import { bareNode, median, NODE, pairs, report } from './lib.mjs';

const runs = Number(process.argv[2] ?? 20);
const trips = Number(process.argv[3] ?? 400);
const PROGRAM = 'let x: number = 1; return x';
const WRAPPED = `async function __ptc_program__() {\n${PROGRAM}\n}`; // as the evaluators strip it

console.log('strip-cost: a trivial TypeScript program');
const oneStrip = `require('node:module').stripTypeScriptTypes(${JSON.stringify(WRAPPED)}, { mode: 'strip' })`;
const cold = await pairs(runs, () => bareNode(['--no-warnings', '-e', oneStrip]), () => bareNode());
report('strip-cold', 'node with one strip', 'bare node -e 0', cold);

// A warm stripper: requests on fd 3, answers read back line by line.
const stripper = spawn(NODE, [join(ROOT, 'bootstrap/stripper.js')], { stdio: ['ignore', 'inherit', 'inherit', 'pipe'] });
const channel = stripper.stdio[3];
let buffered = '';
let waiting = null;
channel.setEncoding('utf8');
channel.on('data', (chunk) => {
  buffered += chunk;
  let newline;
  while ((newline = buffered.indexOf('\n')) !== -1) {
    const line = buffered.slice(0, newline);
    buffered = buffered.slice(newline + 1);
    waiting?.(JSON.parse(line));
  }
});
const next = () => new Promise((resolve) => (waiting = resolve));
await next(); // ready
let id = 0;
async function roundTrip() {
  const t0 = performance.now();
  channel.write(`${JSON.stringify({ id: ++id, format: 'async-function', filename: '[program]', source: PROGRAM })}\n`);
  const answer = await next();
  if (!answer.ok) throw new Error(JSON.stringify(answer));
  return { ms: performance.now() - t0 };
}
function warmStrip() {
  const t0 = performance.now();
  module.stripTypeScriptTypes(WRAPPED, { mode: 'strip' });
  return { ms: performance.now() - t0 };
}
process.removeAllListeners('warning');
const warm = await pairs(trips, roundTrip, warmStrip, 20);
channel.end();
const us = (xs) => xs.map((x) => x * 1000);
report('strip-warm', 'stripper round trip', 'warm in-process strip', { subject: us(warm.subject), baseline: us(warm.baseline), ratios: warm.ratios }, 'us', 0);
console.log(`SUMMARY strip-cost: cold in-process strip adds ${(median(cold.subject) - median(cold.baseline)).toFixed(1)} ms to a fresh process; warm in-process ${(median(warm.baseline) * 1000).toFixed(0)} us vs stripper round trip ${(median(warm.subject) * 1000).toFixed(0)} us`);
