// Per-call latency: host-side round trip of a trivial program under workspace-write (full
// enforcement) through `dsh headless --serve`, against bare `node -e 0` of the same Node binary,
// interleaved in the same run (machines are noisy).
// Usage: node tests/bench/per-call-latency.mjs [runs] [--prewarm N] [--program TEXT] [--vs DSH]
//   --prewarm N sets the runtime's prewarmProcesses (a pool of started, warmed fresh processes).
//   --program TEXT runs TEXT instead of `return 1` (e.g. a program that prints and imports).
//   --vs DSH interleaves the same run through another dsh build instead of bare Node (an A/B of
//   two builds: the ratio and the median per-pair difference); with --prewarm both builds keep a
//   pool, and every run waits until both pools are warm.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { Serve, ROOT, prewarmed } from '../conformance/harness.js';
import { bareNode, median, pairs, report } from './lib.mjs';

const args = process.argv.slice(2);
const option = (flag) => {
  const at = args.indexOf(flag);
  return at >= 0 ? args.splice(at, 2)[1] : null;
};
const prewarm = Number(option('--prewarm') ?? 0);
const vs = option('--vs');
const programOption = option('--program');
const program = programOption ?? 'return 1';
const runs = Number(args[0] ?? 40);
const suffix = programOption === null ? '' : '-program';

if (prewarm && !/key: prewarmProcesses\b/.test(readFileSync(join(ROOT, 'catalog.yaml'), 'utf8'))) {
  console.log('SUMMARY prewarmed-per-call: skipped (this build has no prewarmProcesses)');
  process.exit(0);
}

// With a pool, dsh -v logs each prewarmed process once it is warm: every measured run waits
// (untimed) until the process the previous run's refill started is ready, so it measures a run
// served by a warm process, not the pool's refill rate.
// Without --prewarm the pool is off (dsh's default profile keeps one): every run starts cold.
const serve = new Serve({ mode: 'workspace-write', runtime: { prewarmProcesses: prewarm }, args: prewarm ? ['-v'] : [] });
let id = 0;
const readyCount = () => (serve.stderr.match(/a prewarmed process is ready/g) ?? []).length;
async function poolWarm() {
  while (readyCount() < id) await new Promise((r) => setTimeout(r, 2));
}
async function trivialRun() {
  if (prewarm) await poolWarm();
  const t0 = performance.now();
  const result = await serve.run(`b${id++}`, program);
  const ms = performance.now() - t0;
  if (!result.ok) throw new Error(JSON.stringify(result));
  return { ms };
}

if (vs && prewarm) {
  // Both builds serve from their pools; before each run both have a warm process, so neither
  // run shares the machine with a refill's start.
  await serve.close();
  const sides = [prewarmed({ mode: 'workspace-write', runtime: { prewarmProcesses: prewarm } }),
    prewarmed({ mode: 'workspace-write', bin: vs, runtime: { prewarmProcesses: prewarm } })];
  const served = [0, 0];
  for (const side of sides) {
    const first = await side.run('first', 'return 1'); // the pool fills after a temporary run
    if (!first.ok) throw new Error(JSON.stringify(first));
  }
  const pooledRun = (i) => async () => {
    for (let k = 0; k < sides.length; k++) await sides[k].ready(served[k] + 1);
    served[i]++;
    const t0 = performance.now();
    const result = await sides[i].run(`p${id++}`, program);
    const ms = performance.now() - t0;
    if (!result.ok) throw new Error(JSON.stringify(result));
    return { ms };
  };
  console.log(`prewarmed-per-call${suffix}-vs: ${JSON.stringify(program)} under workspace-write, this build vs ${vs}, prewarmProcesses ${prewarm}`);
  const figures = await pairs(runs, pooledRun(0), pooledRun(1), 1);
  await Promise.all(sides.map((side) => side.close()));
  report(`prewarmed-per-call${suffix}-vs`, 'this build', 'the other build', figures);
  process.exit(0);
}

if (vs) {
  // The program returns its own clock (the machine's wall clock, as the benchmark's): the time from
  // its return to the result at the client is what delivery costs, the kill and reap included when
  // the result waits for them.
  const program = 'return performance.timeOrigin + performance.now()';
  const other = new Serve({ mode: 'workspace-write', bin: vs });
  const delivery = { subject: [], baseline: [] };
  let vsId = 0;
  const timedDelivery = (server, into) => async () => {
    const t0 = performance.now();
    const result = await server.run(`v${vsId++}`, program);
    const at = performance.timeOrigin + performance.now();
    if (!result.ok) throw new Error(JSON.stringify(result));
    into.push(at - result.value);
    return { ms: performance.now() - t0 };
  };
  console.log(`cold-per-call-vs: trivial program under workspace-write, this build vs ${vs}`);
  const figures = await pairs(runs, timedDelivery(serve, delivery.subject), timedDelivery(other, delivery.baseline));
  await Promise.all([serve.close(), other.close()]);
  const measured = (xs) => xs.slice(-runs); // the warm-up pairs come first
  console.log(`  program's return to result at the client: this build median ${median(measured(delivery.subject)).toFixed(2)} ms, ` +
    `the other ${median(measured(delivery.baseline)).toFixed(2)} ms`);
  report('cold-per-call-vs', 'this build', 'the other build', figures);
  process.exit(0);
}

const name = `${prewarm ? 'prewarmed' : 'cold'}-per-call${suffix}`;
console.log(`${name}: ${JSON.stringify(program)} under workspace-write${prewarm ? `, prewarmProcesses ${prewarm}, the pool warm before each run` : ''}`);
const figures = await pairs(runs, trivialRun, () => bareNode());
await serve.close();
report(name, 'per-call run', 'bare node -e 0', figures);
