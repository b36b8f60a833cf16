// Per-call latency of the experimental Python runtime: host-side round trip of `return 1` under
// workspace-write (full enforcement) through `dsh headless --serve`, cold and served by a
// prewarmed process (`prewarmProcesses: 1`), against bare `/usr/bin/python3 -c 0` and against the
// Node runtime's `return 1`, cold and prewarmed, interleaved in one run (W P B N V W P B N V ...;
// machines are noisy). Before every measured subject the benchmark waits (untimed) until both
// prewarmed pools are warm again (`dsh -v` logs each pooled process once it is ready), so no
// subject shares the machine with a pool's refill and the prewarmed figures are runs served by a
// warm process. The two prewarmed runs take the same host path (admission, the run frame, freeze,
// delivery); what differs between them is the child's own part.
// Usage: node tests/bench/python-per-call.mjs [runs]
import { spawn } from 'node:child_process';
import { Serve } from '../conformance/harness.js';
import { PythonServe } from '../conformance/python-harness.js';
import { report, timed } from './lib.mjs';

const runs = Number(process.argv[2] ?? 30);
const PYTHON = '/usr/bin/python3';

function barePython() {
  return new Promise((resolve, reject) => {
    const child = spawn(PYTHON, ['-c', '0'], { stdio: ['ignore', 'ignore', 'inherit'] });
    child.on('close', (code) => (code === 0 ? resolve() : reject(new Error(`python3 exited ${code}`))));
  });
}

const python = new PythonServe({ mode: 'workspace-write' });
const warmPython = new PythonServe({ mode: 'workspace-write', runtime: { prewarmProcesses: 1 }, args: ['-v'] });
const node = new Serve({ mode: 'workspace-write' });
const warmNode = new Serve({ mode: 'workspace-write', runtime: { prewarmProcesses: 1 }, args: ['-v'] });
let id = 0;
let warmRuns = 0;
let warmNodeRuns = 0;
const trivial = (serve) => async () => {
  const result = await serve.run(`b${id++}`, 'return 1');
  if (!result.ok || result.value !== 1) throw new Error(JSON.stringify(result));
};
const readyCount = (serve) => (serve.stderr.match(/a prewarmed process is ready/g) ?? []).length;
async function poolWarm() {
  while (readyCount(warmPython) < warmRuns || readyCount(warmNode) < warmNodeRuns) await new Promise((r) => setTimeout(r, 2));
}
const prewarmed = async () => {
  warmRuns++;
  await trivial(warmPython)();
};
const prewarmedNode = async () => {
  warmNodeRuns++;
  await trivial(warmNode)();
};
// The first run of a policy fills the pool; it is a cold run.
const subjects = [prewarmed, trivial(python), barePython, trivial(node), prewarmedNode];
for (let i = 0; i < 3; i++) for (const fn of subjects) {
  await poolWarm();
  await fn();
}
const ms = subjects.map(() => []);
for (let i = 0; i < runs; i++) for (const [k, fn] of subjects.entries()) {
  await poolWarm();
  ms[k].push(await timed(fn));
}
await python.close();
await warmPython.close();
await node.close();
await warmNode.close();

const ratios = (a, b) => ms[a].map((x, i) => x / ms[b][i]);
const [W, P, B, N, V] = [0, 1, 2, 3, 4];
console.log('python-per-call: `return 1` under workspace-write');
report('python-per-call-vs-bare-python', 'Python per-call run', 'bare python3 -c 0', { subject: ms[P], baseline: ms[B], ratios: ratios(P, B) });
report('python-prewarmed-vs-bare-python', 'Python prewarmed per-call run', 'bare python3 -c 0', { subject: ms[W], baseline: ms[B], ratios: ratios(W, B) });
report('python-per-call-vs-node-per-call', 'Python per-call run', 'Node per-call run', { subject: ms[P], baseline: ms[N], ratios: ratios(P, N) });
report('python-prewarmed-vs-node-prewarmed', 'Python prewarmed per-call run', 'Node prewarmed per-call run', { subject: ms[W], baseline: ms[V], ratios: ratios(W, V) });
