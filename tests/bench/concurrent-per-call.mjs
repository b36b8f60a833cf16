// Concurrency: 16 trivial per-call runs in flight at once through one `dsh headless --serve`
// (workspace-write), against 16 concurrent bare `node -e 0`; rounds interleave in the same run.
// Throughput ratio = runs/s of the runtime over runs/s of bare Node = bare time / runtime time.
// Usage: node tests/bench/concurrent-per-call.mjs [rounds] [width]
import { Serve } from '../conformance/harness.js';
import { bareNode, median, pairs, report } from './lib.mjs';

const rounds = Number(process.argv[2] ?? 10);
const width = Number(process.argv[3] ?? 16);

const serve = new Serve({ mode: 'workspace-write' });
let id = 0;
async function runRound() {
  const results = await Promise.all(Array.from({ length: width }, () => serve.run(`c${id++}`, 'return 1')));
  const failed = results.find((r) => !r.ok);
  if (failed) throw new Error(JSON.stringify(failed));
}
const bareRound = () => Promise.all(Array.from({ length: width }, () => bareNode()));

console.log(`concurrent-per-call: ${width} trivial runs at once, workspace-write`);
const figures = await pairs(rounds, runRound, bareRound, 1);
await serve.close();
report('concurrent-per-call', `${width} runs through one host`, `${width} bare node -e 0`, figures);
const perSecond = (ms) => (width * 1000) / ms;
console.log(`SUMMARY concurrent-throughput: ${perSecond(median(figures.subject)).toFixed(1)} runs/s vs ${perSecond(median(figures.baseline)).toFixed(1)} runs/s, throughput ratio ${(1 / median(figures.ratios)).toFixed(3)}x`);
