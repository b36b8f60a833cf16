// Output throughput: a per-call program writing 64 MiB through process.stdout (64 writes of 1 MiB)
// until its result reaches the client (maxOutputBytes 256 MiB), interleaved in the same run with
// (1) bare pinned Node writing the same bytes to a pipe this benchmark drains, and
// (2) the same run with "stream": true, every accepted entry also sent as an output event (ABI 1.1
// on_output) before the result, against the run without it.
// The clock stops when the last byte of the result line reaches the client, read as the baseline's
// bytes are (a client's JSON.parse of the 64 MiB line is its own cost, after the clock).
// Prints MB/s, the host's CPU time (dsh's utime + stime, steadier than wall time on a loaded
// machine) and its peak resident set (VmHWM of a fresh `dsh` per run) for both.
// Usage: node tests/bench/output-throughput.mjs [runs] [--vs DSH]
//   --vs DSH instead interleaves the same runs (without, then with "stream": true) through another
//   dsh build: an A/B of two builds' time, host CPU and host peak RSS.
import { readFileSync } from 'node:fs';
import { performance } from 'node:perf_hooks';
import { spawn } from 'node:child_process';
import { DSH, patchFile, tempDir } from '../conformance/harness.js';
import { bareNode, median, pairs, peakRss, report } from './lib.mjs';

const args = process.argv.slice(2);
const vsAt = args.indexOf('--vs');
const vs = vsAt >= 0 ? args.splice(vsAt, 2)[1] : null;
const runs = Number(args[0] ?? 5);
const MIB = 1024 * 1024;
const size = 64 * MIB;
const writes = `const s = 'x'.repeat(${MIB}); for (let i = 0; i < ${size / MIB}; i++) process.stdout.write(s);`;
const runtime = { maxOutputBytes: 4 * size, maxMessageBytes: 4 * size };
const ticks = 100; // USER_HZ of /proc/PID/stat

// Seconds of CPU (user + system) a live process has used.
function cpuSeconds(pid) {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) / ticks;
}

// `dsh headless --serve` read as the baseline's pipe is: lines cut at their newline byte, and,
// unless `keep`, only their length and head kept (a client keeping 64 MiB pays for fresh pages
// the baseline's reader does not). The first run of each kind keeps and checks everything.
class ServeBytes {
  constructor(bin, keep) {
    const ws = tempDir('dsh-ws-');
    this.child = spawn(bin ?? DSH, ['headless', '--patch', patchFile({ ws, mode: 'workspace-write', runtime }), '--serve'],
      { cwd: ws, stdio: ['pipe', 'pipe', 'inherit'] });
    this.lines = [];
    this.partial = { chunks: [], bytes: 0 };
    this.waiter = null;
    this.child.stdout.on('data', (chunk) => {
      for (let at = chunk.indexOf(10); at >= 0; at = chunk.indexOf(10)) {
        this.#take(chunk.subarray(0, at), keep);
        const { chunks, bytes } = this.partial;
        this.lines.push({ bytes, text: Buffer.concat(chunks) });
        this.partial = { chunks: [], bytes: 0 };
        chunk = chunk.subarray(at + 1);
      }
      this.#take(chunk, keep);
      this.waiter?.();
    });
  }

  #take(bytes, keep) {
    if (keep || this.partial.bytes < 256) this.partial.chunks.push(keep ? bytes : bytes.subarray(0, 256));
    this.partial.bytes += bytes.length;
  }

  // Sends a run; resolves with the lines up to and including its result line once that line's
  // last byte has arrived.
  async run(id, program, extra = {}) {
    this.child.stdin.write(`${JSON.stringify({ type: 'run', id, program, ...extra })}\n`);
    const marker = `{"type":"result","id":${JSON.stringify(id)},`;
    for (;;) {
      const at = this.lines.findIndex((line) => line.text.toString('latin1', 0, marker.length) === marker);
      if (at >= 0) return this.lines.splice(0, at + 1);
      await new Promise((resolve) => (this.waiter = resolve));
    }
  }

  close() {
    this.child.stdin.end();
    return new Promise((resolve) => this.child.on('close', resolve));
  }
}

const side = () => ({ peaks: [], cpu: [], ms: [] });
const host = { true: side(), false: side() };
const checked = new Set();
async function outputRun(stream = false, bin = undefined, into = host[stream]) {
  const keep = !checked.has(`${stream} ${bin}`);
  const serve = new ServeBytes(bin, keep);
  await serve.run('warm', 'return 1');
  const cpu0 = cpuSeconds(serve.child.pid);
  const t0 = performance.now();
  const lines = await serve.run('out', `${writes} return 1`, stream ? { stream: true } : {});
  const ms = performance.now() - t0;
  const resultLine = lines.at(-1);
  if (keep) {
    const events = lines.map((line) => JSON.parse(line.text));
    const { result } = events.at(-1);
    const bytes = result.output.reduce((n, e) => n + (e.text?.length ?? 0), 0);
    const streamed = events.filter((e) => e.type === 'output').reduce((n, e) => n + (e.entry.text?.length ?? 0), 0);
    if (!result.ok || bytes !== size || streamed !== (stream ? size : 0))
      throw new Error(`output ${bytes} bytes, streamed ${streamed}: ${JSON.stringify(result).slice(0, 400)}`);
    checked.add(`${stream} ${bin}`);
  } else {
    const streamed = lines.slice(0, -1).reduce((n, line) => n + line.bytes, 0);
    if (!resultLine.text.toString().includes('"ok":true') || resultLine.bytes < size || streamed < (stream ? size : 0))
      throw new Error(`result line of ${resultLine.bytes} bytes: ${resultLine.text.toString()}`);
  }
  into.cpu.push(cpuSeconds(serve.child.pid) - cpu0);
  into.peaks.push(peakRss(serve.child.pid));
  into.ms.push(ms);
  await serve.close();
  return { ms };
}
async function bareWrite() {
  const bytes = await bareNode(['-e', writes]);
  if (bytes !== size) throw new Error(`bare node wrote ${bytes}`);
}

if (vs) {
  for (const stream of [false, true]) {
    const name = stream ? 'output-streaming-vs' : 'output-throughput-vs';
    const sides = { this: side(), other: side() };
    console.log(`${name}: 64 MiB through process.stdout${stream ? ', "stream": true' : ''}, this build vs ${vs}`);
    const figures = await pairs(runs, () => outputRun(stream, undefined, sides.this), () => outputRun(stream, vs, sides.other), 1);
    report(name, 'this build', 'the other build', figures);
    for (const [label, side] of [['this build', sides.this], ['the other', sides.other]])
      console.log(`  ${label}: host CPU ${median(side.cpu).toFixed(2)} s, host peak RSS ${(median(side.peaks) / MIB).toFixed(1)} MiB`);
    console.log(`SUMMARY ${name}: host CPU ${(median(sides.this.cpu) / median(sides.other.cpu)).toFixed(3)}x, ` +
      `peak RSS ${(median(sides.this.peaks) / median(sides.other.peaks)).toFixed(3)}x this build against the other`);
  }
  process.exit(0);
}

console.log('output-throughput: 64 MiB through process.stdout, workspace-write');
// Each subject run starts and warms its own host (for a clean peak); it times the 64 MiB run alone.
const figures = await pairs(runs, outputRun, bareWrite, 1);
report('output-throughput', 'per-call run', 'bare node to a pipe', figures);
const peak = median(host.false.peaks);
console.log(`SUMMARY output-peak-rss: ${(peak / MIB).toFixed(1)} MiB host peak for 64 MiB output, ${(peak / size).toFixed(2)}x the output`);

console.log('output-streaming: the same run with "stream": true (output events) against without');
for (const side of [host.true, host.false]) for (const list of Object.values(side)) list.length = 0;
const streaming = await pairs(runs, () => outputRun(true), () => outputRun(false), 1);
report('output-streaming', 'stream: true', 'stream: false', streaming);
for (const [label, side] of [['stream: true ', host.true], ['stream: false', host.false]])
  console.log(`  ${label}: ${(size / MIB / (median(side.ms) / 1000)).toFixed(1)} MB/s, host CPU ${median(side.cpu).toFixed(2)} s, ` +
    `host peak RSS ${(median(side.peaks) / MIB).toFixed(1)} MiB`);
const cost = (median(streaming.ratios) - 1) * 100;
console.log(`SUMMARY output-streaming: ${cost.toFixed(1)}% time, host CPU ${(median(host.true.cpu) / median(host.false.cpu)).toFixed(3)}x, ` +
  `peak RSS ${(median(host.true.peaks) / median(host.false.peaks)).toFixed(3)}x with streaming`);
