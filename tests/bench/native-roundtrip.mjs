// Native binding round trip: time per sequential call of a C function through a
// dsh-native-bindings row (child -> plugin -> dsh: checked conversion, ffi_call on the host
// thread, lossless result -> child) against the `tools.echo` round trip of the demo tools, both
// timed inside one program of one run, in batches that alternate (rotated order, so neither kind
// always runs first). Per-batch ratios pair batches of the same round.
// Usage: node tests/bench/native-roundtrip.mjs [batches] [calls-per-batch]
import { runProgram } from '../conformance/harness.js';
import { nativePatch, FUNCTIONS } from '../conformance/native-fixture.js';
import { report } from './lib.mjs';

const batches = Number(process.argv[2] ?? 40);
const calls = Number(process.argv[3] ?? 250);
const patch = nativePatch([{ id: 'bench', config: { global: 'nx', functions: { hypot: FUNCTIONS.hypot, greet: FUNCTIONS.greet } } }]);

const program = `
  const time = async (call) => {
    const t0 = performance.now();
    for (let i = 0; i < ${calls}; i++) await call(i);
    return (performance.now() - t0) * 1000 / ${calls}; // microseconds per call
  };
  const kinds = {
    double: (i) => nx.hypot({ x: i, y: 1 }),
    string: (i) => nx.greet({ name: "n" + i }),
    echo: (i) => tools.echo({ x: i, y: 1 }),
  };
  const names = Object.keys(kinds), samples = { double: [], string: [], echo: [] };
  for (const k of names) await time(kinds[k]); // warm-up
  for (let b = 0; b < ${batches}; b++)
    for (let j = 0; j < names.length; j++) {
      const k = names[(b + j) % names.length];
      samples[k].push(await time(kinds[k]));
    }
  return samples;`;

const { result, stderr } = await runProgram(program, { args: ['--patch', patch, '--timeout-ms', 'null'] });
if (!result.ok) throw new Error(`${JSON.stringify(result)}\n${stderr}`);
const { double, string, echo } = result.value;
const figures = (subject) => ({ subject, baseline: echo, ratios: subject.map((s, i) => s / echo[i]) });
console.log(`native-roundtrip: ${batches} batches of ${calls} sequential calls per kind, workspace-write`);
report('native-roundtrip', 'native nx.hypot({x, y}) (double)', 'tools.echo({x, y})', figures(double), 'us', 1);
report('native-roundtrip-string', 'native nx.greet({name}) (string, free)', 'tools.echo({x, y})', figures(string), 'us', 1);
