// Binding round trip: time per sequential `await tools.echo({})` (child -> plugin -> the host's demo
// tool -> child), measured inside the program, against the same loop in a bare pinned Node whose
// calls are answered by this benchmark over a pipe. Batches interleave in the same run.
// Then the same loop as the whole program of a per-call run (a fresh process each batch) against
// it in a retained run (a warm process): what a process's first calls cost (`SUMMARY
// binding-per-call`). Then the same in a prewarmed per-call run (`prewarmProcesses: 1`, a process
// started and warmed before the request): `SUMMARY binding-prewarmed`.
// Usage: node tests/bench/binding-round-trip.mjs [batches] [calls-per-batch] [--vs DSH]
//   --vs DSH interleaves the per-call batch through another dsh build instead of the retained run
//   (an A/B of two builds, e.g. main's), and the prewarmed batch likewise.
import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { Serve, prewarmed } from '../conformance/harness.js';
import { NODE, report } from './lib.mjs';

const args = process.argv.slice(2);
const vsAt = args.indexOf('--vs');
const vs = vsAt >= 0 ? args.splice(vsAt, 2)[1] : null;
const batches = Number(args[0] ?? 20);
const calls = Number(args[1] ?? 500);

const loop = `const t0 = performance.now();
    for (let i = 0; i < ${calls}; i++) await tools.echo({});
    return (performance.now() - t0) / ${calls};`;
const retained = new Serve({ mode: 'workspace-write', runtime: { executionMode: 'vm-script', scriptPersistence: true } });
let id = 0;
async function bindingBatch() {
  const r = await retained.run(`b${id++}`, `(async () => { ${loop} })()`, { stateOwner: 'bench' });
  if (!r.ok) throw new Error(JSON.stringify(r));
  return r.value;
}

/** The loop as a per-call program (async-function): every batch in a fresh process. */
function perCallBatches(bin) {
  const serve = new Serve({ mode: 'workspace-write', bin });
  return {
    batch: async () => {
      const r = await serve.run(`p${id++}`, loop);
      if (!r.ok) throw new Error(JSON.stringify(r));
      return r.value;
    },
    close: () => serve.close(),
  };
}

/** The loop as the program of a prewarmed per-call run: each batch waits until the pool's next
 * process is ready (after the run before it), so every batch is served by one. `settled()` waits
 * for that too, so that no other batch runs beside the refill's start. */
async function prewarmedBatches(bin) {
  const serve = prewarmed({ mode: 'workspace-write', bin });
  const first = await serve.run(`w${id++}`, 'return 1'); // the pool fills after a temporary run
  if (!first.ok) throw new Error(JSON.stringify(first));
  let served = 0;
  return {
    settled: () => serve.ready(served + 1),
    batch: async () => {
      await serve.ready(++served);
      const r = await serve.run(`w${id++}`, loop);
      if (!r.ok) throw new Error(JSON.stringify(r));
      return r.value;
    },
    close: () => serve.close(),
  };
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

/** Batches of subject and baseline interleaved after one unmeasured pair; microseconds per call. */
async function interleaved(subject, baseline) {
  await subject();
  await baseline();
  const figures = { subject: [], baseline: [], ratios: [] };
  for (let i = 0; i < batches; i++) {
    const s = await subject();
    const b = await baseline();
    figures.subject.push(s * 1000);
    figures.baseline.push(b * 1000);
    figures.ratios.push(s / b);
  }
  return figures;
}

const perCall = perCallBatches();
const other = vs ? perCallBatches(vs) : null;
if (!vs) {
  const figures = await interleaved(bindingBatch, bareBatch);
  console.log(`binding-round-trip: ${batches} batches of ${calls} sequential calls, workspace-write`);
  report('binding-round-trip', 'tools.echo round trip', 'bare node pipe round trip', figures, 'us', 1);
}
const figures = await interleaved(perCall.batch, other ? other.batch : bindingBatch);
console.log(`binding-per-call: ${batches} batches of ${calls} sequential calls, each batch a per-call run${vs ? `, against ${vs}` : ''}`);
report('binding-per-call', 'per-call run (fresh process)', vs ? 'the other build' : 'retained run (warm process)', figures, 'us', 1);
await perCall.close();
await other?.close();

const pooled = await prewarmedBatches();
const otherPooled = vs ? await prewarmedBatches(vs) : null;
const afterRefills = async () => {
  await pooled.settled();
  await otherPooled?.settled();
};
const pooledFigures = await interleaved(
  async () => (await afterRefills(), pooled.batch()),
  async () => (await afterRefills(), otherPooled ? otherPooled.batch() : bindingBatch()),
);
console.log(`binding-prewarmed: ${batches} batches of ${calls} sequential calls, each batch a prewarmed per-call run${vs ? `, against ${vs}` : ''}`);
report('binding-prewarmed', 'prewarmed per-call run', vs ? 'the other build' : 'retained run (warm process)', pooledFigures, 'us', 1);
await pooled.close();
await otherPooled?.close();
await retained.close();
