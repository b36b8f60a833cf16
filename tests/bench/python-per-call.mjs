// Per-call latency of the experimental Python runtime: host-side round trip of `return 1` under
// workspace-write (full enforcement) through `dsh headless --serve`, against bare
// `/usr/bin/python3 -c 0` and against the Node runtime's per-call `return 1`, interleaved in one
// run (P B N P B N ...; machines are noisy).
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
const node = new Serve({ mode: 'workspace-write' });
let id = 0;
const trivial = (serve) => async () => {
  const result = await serve.run(`b${id++}`, 'return 1');
  if (!result.ok || result.value !== 1) throw new Error(JSON.stringify(result));
};
const subjects = [trivial(python), barePython, trivial(node)];
for (let i = 0; i < 3; i++) for (const fn of subjects) await fn();
const ms = [[], [], []];
for (let i = 0; i < runs; i++) for (const [k, fn] of subjects.entries()) ms[k].push(await timed(fn));
await python.close();
await node.close();

const ratios = (k) => ms[0].map((p, i) => p / ms[k][i]);
console.log('python-per-call: `return 1` under workspace-write');
report('python-per-call-vs-bare-python', 'Python per-call run', 'bare python3 -c 0', { subject: ms[0], baseline: ms[1], ratios: ratios(1) });
report('python-per-call-vs-node-per-call', 'Python per-call run', 'Node per-call run', { subject: ms[0], baseline: ms[2], ratios: ratios(2) });
