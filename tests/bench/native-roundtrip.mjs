// Native binding round trip: a call of a C function through a dsh-native-bindings row (libffi on
// the host thread) against the `tools.echo` round trip of the demo tools, measured inside one
// program in one run, in interleaved batches so both see the same load.
// Usage: node tests/bench/native-roundtrip.mjs [batches] [calls-per-batch]
import { runProgram } from '../conformance/harness.js';
import { nativePatch, FUNCTIONS } from '../conformance/native-fixture.js';

const batches = Number(process.argv[2] ?? 40);
const perBatch = Number(process.argv[3] ?? 250);
const patch = nativePatch([{ id: 'bench', config: { global: 'nx', functions: { hypot: FUNCTIONS.hypot, greet: FUNCTIONS.greet } } }]);

const program = `
  const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
  const time = async (call) => {
    const t0 = performance.now();
    for (let i = 0; i < ${perBatch}; i++) await call(i);
    return (performance.now() - t0) * 1000 / ${perBatch}; // microseconds per call
  };
  const kinds = {
    nativeDouble: (i) => nx.hypot({ x: i, y: 1 }),
    nativeString: (i) => nx.greet({ name: "n" + i }),
    echo: (i) => tools.echo({ x: i, y: 1 }),
  };
  const samples = { nativeDouble: [], nativeString: [], echo: [] };
  for (const k of Object.keys(kinds)) await time(kinds[k]); // warm-up
  const names = Object.keys(kinds);
  for (let b = 0; b < ${batches}; b++) // rotated, so no kind always runs first or last
    for (let j = 0; j < names.length; j++) {
      const k = names[(b + j) % names.length];
      samples[k].push(await time(kinds[k]));
    }
  return Object.fromEntries(Object.entries(samples).map(([k, v]) => [k, median(v)]));`;

const { result, stderr } = await runProgram(program, { args: ['--patch', patch, '--timeout-ms', 'null'] });
if (!result.ok) throw new Error(`${JSON.stringify(result)}\n${stderr}`);
const { nativeDouble, nativeString, echo } = result.value;
const calls = batches * perBatch;
console.log(`native nx.hypot({x, y}) (double):       median ${nativeDouble.toFixed(1)} us/call over ${calls} calls`);
console.log(`native nx.greet({name}) (string, free): median ${nativeString.toFixed(1)} us/call over ${calls} calls`);
console.log(`tools.echo({x, y}) (demo tools):        median ${echo.toFixed(1)} us/call over ${calls} calls`);
console.log(`ratio native double / echo: ${(nativeDouble / echo).toFixed(2)}x`);
console.log(`ratio native string / echo: ${(nativeString / echo).toFixed(2)}x`);
