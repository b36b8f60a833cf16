// Retained evaluation round trip: median host-side time of evaluating a trivial expression in an
// owner's retained environment (persistent-in-memory, scoped REPL) over many evaluations, against
// the same-run median of a per-call run of the same expression (fresh confined process each).
// Usage: node tests/bench/retained-eval.mjs [evaluations]
import { performance } from 'node:perf_hooks';
import { Serve } from '../conformance/harness.js';

const evaluations = Number(process.argv[2] ?? 1000);
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

async function timeRuns(serve, count, extra) {
  const times = [];
  for (let i = 0; i < count; i++) {
    const t0 = performance.now();
    const r = await serve.run(`e${i}`, '1 + 1', extra);
    if (!r.ok) throw new Error(JSON.stringify(r));
    times.push(performance.now() - t0);
  }
  return times;
}

const retained = new Serve({ mode: 'workspace-write', runtime: { executionMode: 'persistent-in-memory' } });
await timeRuns(retained, 20, { stateOwner: 'bench' });
const hot = await timeRuns(retained, evaluations, { stateOwner: 'bench' });
const cold = await timeRuns(retained, 30, {}); // owner-less: a temporary environment per run
await retained.close();
const m = median(hot);
const b = median(cold);
console.log(`retained evaluation (scoped REPL, owner kept): median ${m.toFixed(3)} ms over ${evaluations}`);
console.log(`temporary environment per run (same host):     median ${b.toFixed(1)} ms over 30`);
console.log(`ratio retained / temporary: ${(m / b).toFixed(3)}`);
