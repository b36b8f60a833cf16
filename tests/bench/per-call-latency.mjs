// Per-call latency: host-side round trip of a trivial program under workspace-write (full
// enforcement) through `dsh headless --serve`, against bare `node -e 0` of the same Node binary,
// interleaved in the same run (machines are noisy).
// Usage: node tests/bench/per-call-latency.mjs [runs] [--prewarm N]
//   --prewarm N sets the runtime's prewarmProcesses (a pool of started, warmed fresh processes).
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { Serve, ROOT } from '../conformance/harness.js';
import { bareNode, pairs, report } from './lib.mjs';

const args = process.argv.slice(2);
const prewarmAt = args.indexOf('--prewarm');
const prewarm = prewarmAt >= 0 ? Number(args.splice(prewarmAt, 2)[1]) : 0;
const runs = Number(args[0] ?? 40);

if (prewarm && !/key: prewarmProcesses\b/.test(readFileSync(join(ROOT, 'catalog.yaml'), 'utf8'))) {
  console.log('SUMMARY prewarmed-per-call: skipped (this build has no prewarmProcesses)');
  process.exit(0);
}

// With a pool, dsh -v logs each prewarmed process once it is warm: every measured run waits
// (untimed) until the process the previous run's refill started is ready, so it measures a run
// served by a warm process, not the pool's refill rate.
const serve = new Serve({ mode: 'workspace-write', runtime: prewarm ? { prewarmProcesses: prewarm } : {}, args: prewarm ? ['-v'] : [] });
let id = 0;
const readyCount = () => (serve.stderr.match(/a prewarmed process is ready/g) ?? []).length;
async function poolWarm() {
  while (readyCount() < id) await new Promise((r) => setTimeout(r, 2));
}
async function trivialRun() {
  if (prewarm) await poolWarm();
  const t0 = performance.now();
  const result = await serve.run(`b${id++}`, 'return 1');
  const ms = performance.now() - t0;
  if (!result.ok) throw new Error(JSON.stringify(result));
  return { ms };
}

const name = prewarm ? 'prewarmed-per-call' : 'cold-per-call';
console.log(`${name}: trivial program under workspace-write${prewarm ? `, prewarmProcesses ${prewarm}, the pool warm before each run` : ''}`);
const figures = await pairs(runs, trivialRun, () => bareNode());
await serve.close();
report(name, 'per-call run', 'bare node -e 0', figures);
