// The sandbox launcher alone: `dsh-sandbox-launch` with the arguments of a workspace-write run
// (namespaces, the mount layer, the private tmpfs, Landlock, capabilities, seccomp, and the
// dedicated uid when root) execing /bin/true, against bare /bin/true, interleaved. Prints the
// wall figures and the CPU time per exec of each side (the children's user + system time).
// Without the host's PID namespace the launcher mounts no private /proc: slightly less work
// than a real run. Needs root (the mount namespace); elsewhere it prints a skipped SUMMARY.
// Usage: node tests/bench/launcher.mjs [runs]
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ROOT } from '../conformance/harness.js';
import { median, pairs, report } from './lib.mjs';

const runs = Number(process.argv[2] ?? 200);
const launcher = join(ROOT, process.env.DSH_BUILD_DIR ?? 'build', 'examples/providers/dsh-sandbox-launch');
if (process.getuid() !== 0) {
  console.log('SUMMARY launcher: skipped (the mount namespace needs root)');
  process.exit(0);
}

const scratch = mkdtempSync(join(tmpdir(), 'dsh-bench-launch-'));
process.on('exit', () => rmSync(scratch, { recursive: true, force: true }));
const ws = join(scratch, 'ws');
const temp = join(scratch, 'tmp');
mkdirSync(ws);
mkdirSync(temp);
const id = String(0x70000000 + 0xffff); // the last id of the launcher's fixed range
const args = (abi) => ['--mode', 'workspace-write', '--landlock-abi', String(abi), '--namespaces',
  '--uid', id, '--gid', id, '--rw', ws, '--tmpfs', temp, '--tmpfs-size', String(256 << 20), '--', '/bin/true'];

// Children's CPU time so far (utime + stime of waited-for children, in clock ticks of 10 ms).
const childTicks = () => {
  const fields = readFileSync('/proc/self/stat', 'utf8').split(') ')[1].split(' ');
  return Number(fields[13]) + Number(fields[14]);
};
const cpu = { subject: 0, baseline: 0 };
const run = (file, argv, side) => () => new Promise((resolve, reject) => {
  const before = childTicks();
  const child = spawn(file, argv, { cwd: ws, stdio: ['ignore', 'ignore', 'pipe'] }); // as in a run: the workspace
  let err = '';
  child.stderr.on('data', (d) => (err += d));
  child.on('close', (code) => {
    if (side) cpu[side] += childTicks() - before;
    code === 0 ? resolve() : reject(new Error(`${file} exited ${code}: ${err}`));
  });
});

// The highest Landlock ABI this kernel runs (the launcher refuses one above the kernel's).
let abi = 0;
for (let a = 9; a >= 1 && !abi; a--) {
  try {
    await run(launcher, args(a))();
    abi = a;
  } catch {}
}
if (!abi) throw new Error(`${launcher} runs with no Landlock ABI here`);

console.log(`launcher: dsh-sandbox-launch (workspace-write, Landlock ABI ${abi}, dedicated uid) -> /bin/true`);
const figures = await pairs(runs, run(launcher, args(abi), null), run('/bin/true', [], null), 3);
// CPU over a second, uninterleaved pass per side (the tick counter is too coarse for one exec).
for (const [side, fn] of [['subject', run(launcher, args(abi), 'subject')], ['baseline', run('/bin/true', [], 'baseline')]])
  for (let i = 0; i < runs; i++) await fn();
const perExec = (ticks) => ((ticks * 10) / runs).toFixed(2);
console.log(`  CPU per exec (children's user + system): launcher ${perExec(cpu.subject)} ms, bare /bin/true ${perExec(cpu.baseline)} ms`);
console.log(`  median difference per pair: ${(median(figures.subject) - median(figures.baseline)).toFixed(2)} ms`);
report('launcher', 'launcher -> /bin/true', 'bare /bin/true', figures, 'ms', 2);
