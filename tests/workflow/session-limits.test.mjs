// Session totals through the real `dsh workflow run`: a script that leaves its node:vm context (no
// boundary) calls the host binding behind agent() directly, past the cooperative counters; every
// range it starts lives in the one session cgroup of this dsh, whose totals (the subprocess row's
// maxTotalMemoryMb / maxTotalProcesses) the kernel holds them to. Barriers are files in the
// workspace: an agent writes ready-I once it holds its memory, the script writes end-I when agent I
// has finished; the test writes `go` once every agent is one or the other.
import assert from 'node:assert/strict';
import { existsSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { runProgram, startWorkflow, tempDir } from './harness.mjs';

const AGENTS = 6;
const HOLD_MIB = 160;

// The agent program (a nested confined PTC run): holds HOLD_MIB MiB of touched memory, says so with
// its cgroup membership, and keeps it until the test says go.
const agentProgram = (ws, i) => `
  const fs = await import('node:fs');
  const held = Buffer.alloc(${HOLD_MIB} << 20);
  held.fill(1);
  fs.writeFileSync(${JSON.stringify(join(ws, `ready-${i}`))}, fs.readFileSync('/proc/self/cgroup', 'utf8'));
  while (!fs.existsSync(${JSON.stringify(join(ws, 'go'))})) await tools.sleep({ms: 20});
  return held.length;`;

// The workflow: out of the VM, the binding itself, AGENTS calls at once (the row allows 1 at a
// time and 2 in all), each end recorded; returns how many succeeded.
const fanOut = (ws) => `
  const g = log.constructor('return globalThis')();
  const fs = g.process.getBuiltinModule('node:fs');
  fs.writeFileSync(${JSON.stringify(join(ws, 'workflow.cgroup'))}, fs.readFileSync('/proc/self/cgroup', 'utf8'));
  const prompts = ${JSON.stringify(Array.from({ length: AGENTS }, (_, i) => agentProgram(ws, i)))};
  const ends = await Promise.all(prompts.map(async (prompt, i) => {
    let ok = false;
    try {
      // Arguments must be main-realm JSON: built with the main realm's JSON.
      ok = !!(await g.workflow.agent(g.JSON.parse(JSON.stringify({ prompt, label: 'hog' + i }))))?.ok;
    } finally {
      fs.writeFileSync(${JSON.stringify(ws)} + '/end-' + i, String(ok));
    }
    return ok;
  }));
  return { ok: ends.filter(Boolean).length, failed: ends.filter((x) => !x).length };`;

// Writes `go` once every agent holds its memory or has ended (checked as files appear).
async function releaseWhenSettled(ws, done) {
  let finished = false;
  done.then(() => (finished = true));
  for (;;) {
    const names = new Set(readdirSync(ws));
    const settled = Array.from({ length: AGENTS }, (_, i) => names.has(`ready-${i}`) || names.has(`end-${i}`));
    if (settled.every(Boolean) || finished) break;
    await new Promise((r) => setTimeout(r, 20));
  }
  writeFileSync(join(ws, 'go'), '');
}

// "<hierarchy>:<path>" of every line of a /proc/PID/cgroup text, keyed by controller list.
function membership(text) {
  const m = {};
  for (const line of text.trim().split('\n')) {
    const [, ctl, path] = line.match(/^\d+:([^:]*):(.*)$/);
    m[ctl] = path;
  }
  return m;
}

const parent = (path) => path.slice(0, path.lastIndexOf('/'));
const v2Root = existsSync('/sys/fs/cgroup/cgroup.controllers') ? '/sys/fs/cgroup' : '/sys/fs/cgroup/unified';

// The session group's file holding the total of controller ctl ('memory' | 'pids'), as the kernel
// shows it: cgroup2 where the range's cgroup2 group has the controller, else the v1 hierarchy.
function totalFile(cg, ctl) {
  const v2 = join(v2Root, cg[''], ctl === 'memory' ? 'memory.max' : 'pids.max');
  if (existsSync(v2)) return join(v2Root, parent(cg['']), ctl === 'memory' ? 'memory.max' : 'pids.max');
  const key = Object.keys(cg).find((k) => k.split(',').includes(ctl));
  if (!key) return null;
  return join('/sys/fs/cgroup', ctl, parent(cg[key]), ctl === 'memory' ? 'memory.limit_in_bytes' : 'pids.max');
}

function run(rows) {
  const ws = tempDir('dsh-wf-session-');
  const all = {
    'sandbox-policy': { mode: 'workspace-write', workspaceRoot: ws },
    workflow: { maxConcurrentAgents: 1, maxTotalAgents: 2 },
    ...rows,
  };
  const { child, done } = startWorkflow(fanOut(ws), { ws, rows: all });
  const seen = { dsh: child.pid, totals: null, cgroups: [] };
  const released = releaseWhenSettled(ws, done).then(() => {
    // Read while every surviving range still exists.
    for (let i = 0; i < AGENTS; i++) {
      const f = join(ws, `ready-${i}`);
      if (existsSync(f)) seen.cgroups.push(membership(readFileSync(f, 'utf8')));
    }
    const cg = seen.cgroups[0];
    if (cg) seen.totals = { memory: totalFile(cg, 'memory'), pids: totalFile(cg, 'pids') };
    const read = (f) => (f && existsSync(f) ? readFileSync(f, 'utf8').trim() : null);
    seen.values = seen.totals && Object.fromEntries(Object.entries(seen.totals).map(([k, f]) => [k, read(f)]));
  });
  return Promise.all([done, released]).then(([r]) => ({ ...r, ...seen, ws }));
}

function resourcesFull() {
  // The report of a plain run says whether this machine enforces limits (memory and pids cgroups).
  return runProgram('return 1').then((p) => p.result?.sandbox?.capabilities?.resources === 'full');
}

test('a fan-out that leaves the VM runs every agent in the one session cgroup of this dsh, under its totals', async (t) => {
  if (!(await resourcesFull())) return t.skip('no memory and pids cgroups here (capabilities.resources is partial)');
  const r = await run({ subprocess: { maxTotalProcesses: 3000 } });
  assert.equal(r.status, 0, r.stderr);
  assert.deepEqual(r.result.value, { ok: AGENTS, failed: 0 }, 'the default memory total holds them all');
  assert.equal(r.cgroups.length, AGENTS, 'every agent ran past the cooperative caps');
  const workflow = membership(readFileSync(join(r.ws, 'workflow.cgroup'), 'utf8'));
  for (const cg of [workflow, ...r.cgroups]) {
    for (const [ctl, path] of Object.entries(cg)) {
      if (!/dsh-range-/.test(path)) continue; // a hierarchy ranges do not use
      assert.match(path, new RegExp(`/dsh-session-${r.dsh}-\\d+/dsh-range-${r.dsh}-\\d+$`), `${ctl} of a range`);
      const session = workflow[ctl] && parent(workflow[ctl]);
      assert.equal(parent(path), session, `${ctl}: the workflow's range and its agents' share the session group`);
    }
  }
  assert.ok(r.totals.memory && r.totals.pids, JSON.stringify(r.totals));
  assert.equal(r.values.memory, String(16384 * 1024 * 1024), 'maxTotalMemoryMb default: 16 GiB');
  assert.equal(r.values.pids, '3000', 'maxTotalProcesses from the row');
});

test('a memory-hungry fan-out is stopped by maxTotalMemoryMb; the same fan-out under the default total is not', async (t) => {
  if (!(await resourcesFull())) return t.skip('no memory and pids cgroups here (capabilities.resources is partial)');
  // AGENTS x (HOLD_MIB + Node) is about 1.2 GiB; 512 MiB holds at most two of them.
  const limited = await run({ subprocess: { maxTotalMemoryMb: 512 } });
  t.diagnostic(`under 512 MiB: ${JSON.stringify(limited.result?.value)}`);
  assert.equal(limited.status, 0, limited.stderr);
  assert.ok(limited.result.value.failed >= AGENTS - 3, `the kernel ended agents at the total: ${JSON.stringify(limited.result.value)}`);
  assert.ok(limited.result.value.ok >= 1, `the total kills single ranges, never the session: ${JSON.stringify(limited.result.value)}`);
  assert.equal(limited.values.memory, String(512 * 1024 * 1024));
  // Control: the row's default total.
  const control = await run({});
  assert.equal(control.status, 0, control.stderr);
  assert.deepEqual(control.result.value, { ok: AGENTS, failed: 0 });
});

test("each range's RLIMIT_NOFILE keeps a range and a session within their share of fs.file-max", async () => {
  const fileMax = Number(readFileSync('/proc/sys/fs/file-max', 'utf8'));
  const expected = (rangeProcesses, totalProcesses) => {
    let n = Math.min(4096, Math.floor(fileMax / (8 * Math.min(rangeProcesses, totalProcesses))),
      Math.floor(fileMax / (2 * totalProcesses)));
    return Math.max(64, n);
  };
  const code = `
    const fs = await import('node:fs');
    const line = fs.readFileSync('/proc/self/limits', 'utf8').split('\\n').find((l) => l.startsWith('Max open files'));
    const [soft, hard] = line.split(/\\s+/).slice(3, 5).map(Number);
    const held = [];
    let error = null;
    try { for (;;) held.push(fs.openSync('/dev/null', 'r')); } catch (e) { error = e.code; }
    return { soft, hard, opened: held.length, error };`;
  const rows = (maxProcesses, maxTotalProcesses) => ({ 'ptc-runtime': { maxProcesses }, subprocess: { maxTotalProcesses } });
  for (const [row, rangeProcesses, totalProcesses] of [
    [{}, 512, 4096], // the defaults
    [rows(2048, 8192), 2048, 8192],
    [rows(64, 512), 64, 512],
  ]) {
    const p = await runProgram(code, { rows: row });
    assert.equal(p.result.ok, true, JSON.stringify(p.result));
    const want = expected(rangeProcesses, totalProcesses);
    assert.equal(p.result.value.soft, want, `rows ${JSON.stringify(row)}`);
    assert.equal(p.result.value.hard, want, 'the program cannot raise it');
    assert.equal(p.result.value.error, 'EMFILE');
    assert.ok(p.result.value.opened < want, 'no more open files than the limit');
    if (want > 64) {
      assert.ok(want * rangeProcesses <= fileMax / 8, 'a range: at most an eighth of fs.file-max');
      assert.ok(want * totalProcesses <= fileMax / 2, 'a session: at most half');
    }
  }
});
