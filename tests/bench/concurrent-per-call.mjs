// Concurrency: 16 trivial per-call runs in flight at once through one `dsh headless --serve`
// (workspace-write), against 16 concurrent bare `node -e 0`; rounds interleave in the same run.
// Throughput ratio = runs/s of the runtime over runs/s of bare Node = bare time / runtime time.
// Beside it, the machine's CPU time per run (every process, /proc/stat, median of the rounds): with
// more runs than cores both sides are bound by CPU, so that ratio is what the throughput is made of.
// Usage: node tests/bench/concurrent-per-call.mjs [rounds] [width] [--vs DSH]
//   --vs DSH interleaves the same rounds through another dsh build instead of bare Node (an A/B
//   of two builds).
import { Serve } from '../conformance/harness.js';
import { bareNode, machineBusyMs, median, pairs, report } from './lib.mjs';

const args = process.argv.slice(2);
const vsAt = args.indexOf('--vs');
const vs = vsAt >= 0 ? args.splice(vsAt, 2)[1] : null;
const rounds = Number(args[0] ?? 10);
const width = Number(args[1] ?? 16);

/** fn, recording the machine's busy CPU milliseconds per run of each call in `into`. */
function costed(fn, into) {
  return async () => {
    const before = machineBusyMs();
    await fn();
    into.push((machineBusyMs() - before) / width);
  };
}

let id = 0;
function rounder(bin) {
  const serve = new Serve({ mode: 'workspace-write', bin });
  const round = async () => {
    const results = await Promise.all(Array.from({ length: width }, () => serve.run(`c${id++}`, 'return 1')));
    const failed = results.find((r) => !r.ok);
    if (failed) throw new Error(JSON.stringify(failed));
  };
  return { serve, round };
}
const { serve, round: runRound } = rounder();
const bareRound = () => Promise.all(Array.from({ length: width }, () => bareNode()));

if (vs) {
  const other = rounder(vs);
  console.log(`concurrent-per-call-vs: ${width} trivial runs at once, this build vs ${vs}`);
  const figures = await pairs(rounds, runRound, other.round, 1);
  await Promise.all([serve.close(), other.serve.close()]);
  report('concurrent-per-call-vs', 'this build', 'the other build', figures);
  process.exit(0);
}

console.log(`concurrent-per-call: ${width} trivial runs at once, workspace-write`);
const cpu = { subject: [], baseline: [] };
const figures = await pairs(rounds, costed(runRound, cpu.subject), costed(bareRound, cpu.baseline), 1);
await serve.close();
report('concurrent-per-call', `${width} runs through one host`, `${width} bare node -e 0`, figures);
const perSecond = (ms) => (width * 1000) / ms;
console.log(`SUMMARY concurrent-throughput: ${perSecond(median(figures.subject)).toFixed(1)} runs/s vs ${perSecond(median(figures.baseline)).toFixed(1)} runs/s, throughput ratio ${(1 / median(figures.ratios)).toFixed(3)}x`);
// The first of each is the unmeasured warm-up pair's.
const cpuPerRun = (xs) => median(xs.slice(1));
console.log(`SUMMARY concurrent-cpu: ${cpuPerRun(cpu.subject).toFixed(1)} ms vs ${cpuPerRun(cpu.baseline).toFixed(1)} ms of machine CPU per run (every process), ratio ${(cpuPerRun(cpu.subject) / cpuPerRun(cpu.baseline)).toFixed(3)}x`);
