// Resource limits of a whole process range through the real dsh: memory (the kernel kills the
// range, the run ends as worker-exit naming maxMemoryMb), the tmpfs TMPDIR of maxTempBytes
// (ENOSPC inside, the host's disk untouched), maxProcesses (EAGAIN beyond it) and
// requireResourceLimits on a host that can delegate no cgroup. Each hostile case has a control
// with the limit raised (bounded so it cannot hurt the machine) that shows the case would catch a
// missing limit. The limits need the machine's cgroups (memory, pids and cpu, on v1 or delegated
// cgroup2): where the host reports resources other than full, those cases skip, saying so.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, statfsSync } from 'node:fs';
import { runProgram, tempDir, Serve } from './harness.js';
import { runPython } from './python-harness.js';

// Allocates `chunks` Buffers of 64 MiB, each filled so its pages are really used.
const allocate = (chunks) =>
  `const kept = []; for (let i = 0; i < ${chunks}; i++) kept.push(Buffer.alloc(64 << 20, 1)); return kept.length * 64`;

// What this machine enforces, in the host's own words.
const probe = await runProgram('return 1');
const resources = probe.result.sandbox?.capabilities?.resources;
const cgroupsMissing = resources === 'full' ? false
  : `resources "${resources}" here: no writable memory, pids and cpu cgroups for ranges (see tests/features.sh cgroup-v1-writable, cgroup2)`;

const rssKib = (pid) => +readFileSync(`/proc/${pid}/status`, 'utf8').match(/^VmRSS:\s+(\d+)/m)[1];

test('4 GiB of Buffers under maxMemoryMb 256 end as worker-exit naming the limit; the host is untouched', { skip: cgroupsMissing }, async () => {
  const serve = new Serve({ mode: 'read-only', runtime: { maxMemoryMb: 256, timeoutMs: 120000 } });
  const warm = await serve.run('warm', 'return 1');
  assert.equal(warm.ok, true, JSON.stringify(warm));
  const before = rssKib(serve.child.pid);
  const result = await serve.run('hog', allocate(64));
  assert.deepEqual(result.error, {
    kind: 'worker-exit',
    message: 'the program exceeded its memory limit (maxMemoryMb: 256); the kernel killed it (signal KILL)',
  });
  // The host's own memory did not take the allocation (a few MiB of bookkeeping at most).
  assert.ok(rssKib(serve.child.pid) - before < 32 * 1024, `host RSS grew from ${before} KiB to ${rssKib(serve.child.pid)} KiB`);
  // Control: another SIGKILL under the same limit is not called the memory limit's.
  const killed = await serve.run('kill', 'process.kill(process.pid, "SIGKILL")');
  assert.equal(killed.error.kind, 'worker-exit');
  assert.doesNotMatch(killed.error.message, /maxMemoryMb/);
  assert.equal(await serve.close(), 0);
});

test('384 MiB pass a raised maxMemoryMb and are killed at 256: the limit is what stops them', { skip: cgroupsMissing }, async () => {
  const control = await runProgram(allocate(6), { mode: 'read-only', runtime: { maxMemoryMb: 1024 } });
  assert.equal(control.result.ok, true, JSON.stringify(control.result));
  assert.equal(control.result.value, 384);
  const limited = await runProgram(allocate(6), { mode: 'read-only', runtime: { maxMemoryMb: 256 } });
  assert.equal(limited.result.error.kind, 'worker-exit', JSON.stringify(limited.result));
  assert.match(limited.result.error.message, /^the program exceeded its memory limit \(maxMemoryMb: 256\)/);
  // The cgroup limits hold in danger-full-access too: only the launcher's confinement is off there.
  const danger = await runProgram(allocate(6), { mode: 'danger-full-access', runtime: { maxMemoryMb: 256 } });
  assert.equal(danger.result.error.kind, 'worker-exit', JSON.stringify(danger.result));
  assert.match(danger.result.error.message, /^the program exceeded its memory limit \(maxMemoryMb: 256\)/);
});

// Writes MiB blocks into TMPDIR until `mib` or the first error; returns [code, MiB written,
// TMPDIR's filesystem type (hex), its size].
const fillTemp = (mib) => `
  const fs = await import('node:fs'); const os = await import('node:os');
  const block = Buffer.alloc(1 << 20, 7); const fd = fs.openSync(os.tmpdir() + '/fill', 'w');
  const { type, bsize, blocks } = fs.statfsSync(os.tmpdir()); const where = [type.toString(16), bsize * blocks];
  let n = 0;
  try { for (; n < ${mib}; n++) fs.writeSync(fd, block); } catch (e) { return [e.code, n, ...where]; }
  return ['done', n, ...where];`;

const TMPFS_MAGIC = '1021994';

const freeBytes = (dir) => {
  const s = statfsSync(dir);
  return s.bavail * s.bsize;
};

test('2 GiB into TMPDIR under maxTempBytes 64 MiB fail with ENOSPC; the host filesystem keeps its space', async () => {
  const hostTmp = tempDir('dsh-limits-');
  const before = freeBytes(hostTmp);
  const { result } = await runProgram(fillTemp(2048), { runtime: { maxTempBytes: 64 << 20 } });
  // TMPDIR is a tmpfs of its own, of exactly the limit, not a directory of the host's disk.
  assert.deepEqual(result.value, ['ENOSPC', 64, TMPFS_MAGIC, 64 << 20], JSON.stringify(result));
  // Other users of the disk move it too: the bound is the limit, not zero.
  assert.ok(before - freeBytes(hostTmp) <= 64 << 20, `free space fell by ${before - freeBytes(hostTmp)} bytes`);
  // Control: a raised limit lets the same program pass 64 MiB (bounded at 128 MiB).
  const control = await runProgram(fillTemp(128), { runtime: { maxTempBytes: 256 << 20 } });
  assert.deepEqual(control.result.value, ['done', 128, TMPFS_MAGIC, 256 << 20], JSON.stringify(control.result));
});

test('requireResourceLimits fails closed where no cgroup can be delegated', async (t) => {
  const noCgroups = { id: 'subprocess', config: { cgroupRoot: tempDir('dsh-no-cgroups-') } };
  const { result, stderr } = await runProgram('return 1', { runtime: { requireResourceLimits: true }, rows: [noCgroups] });
  assert.deepEqual(result.error, {
    kind: 'sandbox-unavailable',
    message: 'the sandbox could not confine the program: the required confinement is not available',
  });
  assert.match(stderr, /sandbox unavailable for workspace-write: resource limits are required \(requireResourceLimits\), but this machine enforces resources: partial \(no memory cgroup, no pids cgroup, no cpu cgroup\)/);
  // Controls: without the requirement the same host runs, reported partial; with the host's
  // real cgroups the requirement is met.
  const partial = await runProgram('return 1', { rows: [noCgroups] });
  assert.equal(partial.result.ok, true, JSON.stringify(partial.result));
  assert.equal(partial.result.sandbox.capabilities.resources, 'partial');
  if (cgroupsMissing) return t.skip(`the control with the host's real cgroups: ${cgroupsMissing}`);
  const full = await runProgram('return 1', { runtime: { requireResourceLimits: true } });
  assert.equal(full.result.ok, true, JSON.stringify(full.result));
  assert.equal(full.result.sandbox.capabilities.resources, 'full');
});

// Starts 100 `sleep` children; returns [started, failed, error codes], then ends them.
const SPAWN_100 = `
  const cp = await import('node:child_process');
  const kids = [], codes = new Set(); let ok = 0, err = 0;
  await Promise.all(Array.from({ length: 100 }, () => new Promise((done) => {
    const k = cp.spawn('/bin/sleep', ['30'], { stdio: 'ignore' }); kids.push(k);
    k.on('spawn', () => { ok++; done(); }); k.on('error', (e) => { err++; codes.add(e.code); done(); });
  })));
  kids.forEach((k) => k.kill('SIGKILL'));
  return [ok, err, [...codes]];`;

test('maxProcesses 64 refuses forks beyond it with EAGAIN; a raised bound starts all 100', { skip: cgroupsMissing }, async () => {
  const { result } = await runProgram(SPAWN_100, { mode: 'read-only', runtime: { maxProcesses: 64 } });
  const [ok, err, codes] = result.value;
  assert.ok(ok < 64 && err === 100 - ok, JSON.stringify(result.value));
  assert.deepEqual(codes, ['EAGAIN']);
  const control = await runProgram(SPAWN_100, { mode: 'read-only', runtime: { maxProcesses: 512 } });
  assert.deepEqual(control.result.value, [100, 0, []], JSON.stringify(control.result));
});

test('the Python runtime gets the same memory limit: 384 MiB of bytes pass 1024 and are killed at 256', { skip: cgroupsMissing }, async () => {
  const program = 'kept = [b"x" * (64 << 20) for _ in range(6)]\nreturn len(kept) * 64';
  const control = await runPython(program, { mode: 'read-only', runtime: { maxMemoryMb: 1024 } });
  assert.equal(control.result.value, 384, JSON.stringify(control.result));
  const { result } = await runPython(program, { mode: 'read-only', runtime: { maxMemoryMb: 256 } });
  assert.equal(result.error.kind, 'worker-exit', JSON.stringify(result));
  assert.match(result.error.message, /^the program exceeded its memory limit \(maxMemoryMb: 256\)/);
});
