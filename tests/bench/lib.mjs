// Shared pieces of the benchmarks: the pinned Node, bare-Node baselines, interleaved pairs and the
// figures every benchmark prints (medians and the median of same-run pair ratios).
import { spawn } from 'node:child_process';
import { performance } from 'node:perf_hooks';
import { readdirSync, readFileSync } from 'node:fs';
import { NODE } from '../conformance/harness.js';

export { NODE };

export const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

/** Milliseconds one awaited call of fn takes, or the `ms` fn returns when it times itself. */
export async function timed(fn) {
  const t0 = performance.now();
  const own = await fn();
  return own?.ms ?? performance.now() - t0;
}

/** Runs the pinned Node with args, stdout to a pipe the benchmark drains; resolves on exit 0. */
export function bareNode(args = ['-e', '0']) {
  return new Promise((resolve, reject) => {
    const child = spawn(NODE, args, { stdio: ['ignore', 'pipe', 'inherit'] });
    let bytes = 0;
    child.stdout.on('data', (d) => (bytes += d.length));
    child.on('close', (code) => (code === 0 ? resolve(bytes) : reject(new Error(`node exited ${code}`))));
  });
}

/** Whether pid heads a type stripper's range (its supervisor's command line names stripper.js). */
export function isStripperRange(pid) {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes('/stripper.js');
  } catch {
    return false;
  }
}

/**
 * Every process below pid (a dsh's range supervisors and the programs' Node processes), but none
 * at or below a process for which skip(pid) is true.
 */
export function descendants(pid, skip = () => false) {
  const children = new Map();
  for (const p of readdirSync('/proc').filter((name) => /^\d+$/.test(name))) {
    try {
      const stat = readFileSync(`/proc/${p}/stat`, 'utf8');
      const parent = stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1];
      if (!children.has(parent)) children.set(parent, []);
      children.get(parent).push(p);
    } catch {}
  }
  const found = [];
  const stack = [String(pid)];
  while (stack.length) {
    for (const child of children.get(stack.pop()) ?? []) if (!skip(child)) found.push(child), stack.push(child);
  }
  return found;
}

/** Nanoseconds the process pid (all its threads) has run on a CPU; 0 once it is gone. */
export function processCpuNs(pid) {
  try {
    return readdirSync(`/proc/${pid}/task`).reduce(
      (sum, task) => sum + Number(readFileSync(`/proc/${pid}/task/${task}/schedstat`, 'utf8').split(' ')[0]), 0);
  } catch {
    return 0;
  }
}

/** Milliseconds every CPU of the machine has spent busy (not idle, not waiting for I/O) since boot,
 * from /proc/stat's first line (USER_HZ ticks, 100 per second on Linux): what all processes cost,
 * including the ones that have already exited. */
export function machineBusyMs() {
  const ticks = readFileSync('/proc/stat', 'utf8').split('\n', 1)[0].trim().split(/\s+/).slice(1).map(Number);
  const [idle, iowait] = [ticks[3], ticks[4]];
  return (ticks.reduce((sum, n) => sum + n, 0) - idle - iowait) * 10;
}

/**
 * Interleaves subject and baseline (S B S B ...) after `warmup` unmeasured pairs so both see the
 * same machine load; returns {subject, baseline, ratios} (milliseconds, and subject/baseline per pair).
 */
export async function pairs(runs, subject, baseline, warmup = 3) {
  for (let i = 0; i < warmup; i++) {
    await subject();
    await baseline();
  }
  const out = { subject: [], baseline: [], ratios: [] };
  for (let i = 0; i < runs; i++) {
    const s = await timed(subject);
    const b = await timed(baseline);
    out.subject.push(s);
    out.baseline.push(b);
    out.ratios.push(s / b);
  }
  return out;
}

/** Prints the two medians, the median pair ratio and a one-line summary starting with `name:`. */
export function report(name, subjectLabel, baselineLabel, { subject, baseline, ratios }, unit = 'ms', digits = 1) {
  const fmt = (x) => `${x.toFixed(digits)} ${unit}`;
  console.log(`  ${subjectLabel}: median ${fmt(median(subject))} (min ${fmt(Math.min(...subject))}, max ${fmt(Math.max(...subject))}) over ${subject.length}`);
  console.log(`  ${baselineLabel}: median ${fmt(median(baseline))} (min ${fmt(Math.min(...baseline))}, max ${fmt(Math.max(...baseline))}) over ${baseline.length}`);
  console.log(`  pair ratios: median ${median(ratios).toFixed(3)}x (min ${Math.min(...ratios).toFixed(3)}, max ${Math.max(...ratios).toFixed(3)})`);
  console.log(`SUMMARY ${name}: ${fmt(median(subject))} vs ${fmt(median(baseline))}, ratio ${median(ratios).toFixed(3)}x`);
}

/** Peak resident set (VmHWM) of a live process, in bytes. */
export function peakRss(pid) {
  const match = /VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return match ? Number(match[1]) * 1024 : NaN;
}
