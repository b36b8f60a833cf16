// Output throughput: a per-call program writing 64 MiB through process.stdout (64 writes of 1 MiB)
// until its result reaches the client, against bare pinned Node writing the same bytes to a pipe this
// benchmark drains; interleaved in the same run. Also prints the host's peak resident set (VmHWM of
// a fresh `dsh` per run) against the output size.
// Usage: node tests/bench/output-throughput.mjs [runs]
import { performance } from 'node:perf_hooks';
import { Serve } from '../conformance/harness.js';
import { bareNode, median, pairs, peakRss, report } from './lib.mjs';

const runs = Number(process.argv[2] ?? 5);
const MIB = 1024 * 1024;
const size = 64 * MIB;
const writes = `const s = 'x'.repeat(${MIB}); for (let i = 0; i < ${size / MIB}; i++) process.stdout.write(s);`;
const runtime = { maxOutputBytes: 4 * size, maxMessageBytes: 4 * size };

const peaks = [];
async function outputRun() {
  const serve = new Serve({ mode: 'workspace-write', runtime });
  await serve.run('warm', 'return 1');
  const t0 = performance.now();
  const result = await serve.run('out', `${writes} return 1`);
  const ms = performance.now() - t0;
  const bytes = result.output.reduce((n, e) => n + (e.text?.length ?? 0), 0);
  if (!result.ok || bytes !== size) throw new Error(`output ${bytes} bytes: ${JSON.stringify(result).slice(0, 400)}`);
  peaks.push(peakRss(serve.child.pid));
  await serve.close();
  return { ms };
}
async function bareWrite() {
  const bytes = await bareNode(['-e', writes]);
  if (bytes !== size) throw new Error(`bare node wrote ${bytes}`);
}

console.log('output-throughput: 64 MiB through process.stdout, workspace-write');
// Each subject run starts and warms its own host (for a clean peak); it times the 64 MiB run alone.
const figures = await pairs(runs, outputRun, bareWrite, 1);
report('output-throughput', 'per-call run', 'bare node to a pipe', figures);
const peak = median(peaks);
console.log(`SUMMARY output-peak-rss: ${(peak / MIB).toFixed(1)} MiB host peak for 64 MiB output, ${(peak / size).toFixed(2)}x the output`);
