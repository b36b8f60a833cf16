// Binding round trip: time per sequential `await tools.echo({})` (child -> plugin -> the host's demo
// tool -> child), measured inside the program, against the same loop in a bare pinned Node whose
// calls are answered by this benchmark over a pipe. Batches interleave in the same run.
// Usage: node tests/bench/binding-round-trip.mjs [batches] [calls-per-batch]
import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { Serve } from '../conformance/harness.js';
import { NODE, report } from './lib.mjs';

const batches = Number(process.argv[2] ?? 20);
const calls = Number(process.argv[3] ?? 500);

const serve = new Serve({ mode: 'workspace-write', runtime: { executionMode: 'vm-script', scriptPersistence: true } });
let id = 0;
async function bindingBatch() {
  const program = `(async () => { const t0 = performance.now();
    for (let i = 0; i < ${calls}; i++) await tools.echo({});
    return (performance.now() - t0) / ${calls}; })()`;
  const r = await serve.run(`b${id++}`, program, { stateOwner: 'bench' });
  if (!r.ok) throw new Error(JSON.stringify(r));
  return r.value;
}

// The bare child asks over stdout and reads answers on stdin, one line each, like a binding call.
const bareSource = `
const rl = require('readline').createInterface({ input: process.stdin });
const waiting = [];
rl.on('line', () => waiting.shift()());
const ask = () => new Promise((r) => { waiting.push(r); process.stdout.write('{"type":"call","args":[{}]}\\n'); });
(async () => { const t0 = performance.now();
  for (let i = 0; i < ${calls}; i++) await ask();
  process.stderr.write(String((performance.now() - t0) / ${calls})); rl.close(); })();`;
function bareBatch() {
  return new Promise((resolve, reject) => {
    const child = spawn(NODE, ['-e', bareSource], { stdio: ['pipe', 'pipe', 'pipe'] });
    let err = '';
    child.stderr.on('data', (d) => (err += d));
    createInterface({ input: child.stdout }).on('line', () => child.stdin.write('{"ok":true,"value":{}}\n'));
    child.on('close', (code) => (code === 0 ? resolve(Number(err)) : reject(new Error(err))));
  });
}

await bindingBatch();
await bareBatch();
const figures = { subject: [], baseline: [], ratios: [] };
for (let i = 0; i < batches; i++) {
  const s = await bindingBatch();
  const b = await bareBatch();
  figures.subject.push(s * 1000);
  figures.baseline.push(b * 1000);
  figures.ratios.push(s / b);
}
await serve.close();
console.log(`binding-round-trip: ${batches} batches of ${calls} sequential calls, workspace-write`);
report('binding-round-trip', 'tools.echo round trip', 'bare node pipe round trip', figures, 'us', 1);
