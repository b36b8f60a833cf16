// Prewarmed fresh processes (`prewarmProcesses`): a temporary run is served by a process started
// and warmed before it was requested, which served no program before and serves none after.
import test from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, readdirSync } from 'node:fs';
import { performance } from 'node:perf_hooks';
import { Serve, prewarmed } from './harness.js';
import { python } from './python-harness.js';

// Runs a program that returns [process uptime in ms, ...rest] and tells whether its process was
// already running when the request was sent.
async function timedRun(s, id, body, extra = {}) {
  const sent = performance.now();
  const r = await s.run(id, `const started = process.uptime() * 1000; ${body}`, extra);
  const elapsed = performance.now() - sent;
  assert.equal(r.ok, true, JSON.stringify(r));
  const [uptime, ...value] = r.value;
  return { result: r, value, startedBefore: uptime > elapsed };
}

// Leaves a global and a file in its private temp dir; returns what it found of a predecessor.
const LEAVE_AND_LOOK = `
const os = await import("node:os");
const fs = await import("node:fs");
const found = [typeof globalThis.leftBehind, fs.existsSync(os.tmpdir() + "/left-behind")];
globalThis.leftBehind = "x";
fs.writeFileSync(os.tmpdir() + "/left-behind", "x");
return [started, ...found];
`;

test('a prewarmed process serves one program: what the previous one left is not visible', async () => {
  const s = prewarmed();
  const cold = await timedRun(s, 'cold', LEAVE_AND_LOOK);
  assert.equal(cold.startedBefore, false, 'the first run of a policy starts its own process');
  await s.ready(1);
  const first = await timedRun(s, 'first', LEAVE_AND_LOOK);
  assert.equal(first.startedBefore, true, 'served by a process started before the request');
  assert.deepEqual(first.value, ['undefined', false]);
  await s.ready(2);
  const second = await timedRun(s, 'second', LEAVE_AND_LOOK);
  assert.equal(second.startedBefore, true);
  assert.deepEqual(second.value, ['undefined', false]);
  await s.close();
});

test('a prewarmed process collected its young generation in its warm-up: its program starts with less there than a cold one', async () => {
  // Without that, the start's leftovers fill V8's young generation, and the program's first
  // collection copies them during its run (plugin/README.md, "Prewarmed processes").
  const YOUNG_BYTES = `(process.getBuiltinModule("node:v8").getHeapSpaceStatistics().find((space) => space.space_name === "new_space").space_used_size)`;
  const s = prewarmed();
  const cold = await timedRun(s, 'cold', `return [started, ${YOUNG_BYTES}];`);
  assert.equal(cold.startedBefore, false);
  await s.ready(1);
  const warm = await timedRun(s, 'warm', `return [started, ${YOUNG_BYTES}];`);
  assert.equal(warm.startedBefore, true);
  assert.ok(warm.value[0] < cold.value[0], `young generation at the start: prewarmed ${warm.value[0]} bytes, cold ${cold.value[0]}`);
  // What the warm-up leaves is nothing a program can name.
  await s.ready(2);
  const left = await timedRun(s, 'left', 'return [started, typeof used, typeof round, typeof now, typeof call];');
  assert.equal(left.startedBefore, true);
  assert.deepEqual(left.value, ['undefined', 'undefined', 'undefined', 'undefined']);
  await s.close();
});

test('a prewarmed process made its stdio streams and imported node:fs in its warm-up, and its program\'s output is its own; a cold one does both in its program', async () => {
  const LOOK = `const made = ["NativeModule net", "NativeModule internal/fs/promises"].map((name) => process.moduleLoadList.includes(name));
console.log("out", 1); console.error("err"); process.stdout.write("raw"); inspect({ a: [1] });
const fs = await import("node:fs");
return [started, ...made, typeof fs.readFileSync];`;
  const s = prewarmed();
  const cold = await timedRun(s, 'cold', LOOK);
  assert.deepEqual([cold.startedBefore, ...cold.value], [false, false, false, 'function']);
  await s.ready(1);
  const warm = await timedRun(s, 'warm', LOOK);
  assert.deepEqual([warm.startedBefore, ...warm.value], [true, true, true, 'function']);
  assert.deepEqual(warm.result.output, cold.result.output);
  assert.equal(warm.result.output.map((entry) => entry.text).join(''), 'out 1\nerr\nraw{ a: [ 1 ] }\n');
  await s.close();
});

test('a prewarmed process called its warm-up binding (the host answered each call), and its program sees no name of it', async () => {
  const s = prewarmed();
  await timedRun(s, 'cold', 'return [started];');
  await s.ready(1);
  assert.match(s.stderr, /a prewarmed process is ready \(mode workspace-write, session "[^"]*", 60 warm-up binding calls answered\)/);
  const look = 'return [started, typeof ptcWarmUp, Object.getOwnPropertyNames(globalThis).filter((name) => /warm/i.test(name))];';
  const warm = await timedRun(s, 'warm', look);
  assert.deepEqual([warm.startedBefore, ...warm.value], [true, 'undefined', []]);
  // Its program's own calls go through as in any run.
  await s.ready(2);
  const calls = await timedRun(s, 'calls', 'const r = await tools.add({ a: 1, b: 2 }); return [started, r];');
  assert.deepEqual([calls.startedBefore, ...calls.value], [true, 3]);
  await s.close();
});

test('a prewarmed process was warmed through the type stripper (amaro loaded), so a typed program strips warm; a cold one never loads it', async () => {
  const AMARO = "process.moduleLoadList.includes('NativeModule internal/deps/amaro/dist/index')";
  const s = prewarmed();
  const cold = await timedRun(s, 'cold', `return [started, ${AMARO}];`);
  assert.deepEqual([cold.startedBefore, ...cold.value], [false, false]);
  await s.ready(1);
  const warm = await timedRun(s, 'warm', `return [started, ${AMARO}];`);
  assert.deepEqual([warm.startedBefore, ...warm.value], [true, true]);
  await s.ready(2);
  const typed = await timedRun(s, 'typed', 'const n: number = 2;\nreturn [started, n];');
  assert.deepEqual([typed.startedBefore, ...typed.value], [true, 2]);
  await s.close();
});

test('control: a process that is reused shows the global and the file to the next program', async () => {
  // A retained owner's process serves every run of the owner: the same check sees both.
  const s = new Serve({ runtime: { executionMode: 'vm-script', scriptPersistence: true } });
  const program = `
const os = await import("node:os");
const fs = await import("node:fs");
const found = [typeof globalThis.leftBehind, fs.existsSync(os.tmpdir() + "/left-behind")];
globalThis.leftBehind = "x";
fs.writeFileSync(os.tmpdir() + "/left-behind", "x");
found`;
  const a = await s.run('a', program, { stateOwner: 'o' });
  assert.deepEqual(a.value, ['undefined', false], JSON.stringify(a));
  const b = await s.run('b', program, { stateOwner: 'o' });
  assert.deepEqual(b.value, ['string', true], JSON.stringify(b));
  await s.close();
});

test('result.sandbox of a prewarmed run is the same as a cold run\'s', async () => {
  for (const mode of ['workspace-write', 'read-only']) {
    const s = prewarmed({ mode });
    const cold = await timedRun(s, 'cold', 'return [started]');
    await s.ready(1);
    const warm = await timedRun(s, 'warm', 'return [started]');
    assert.equal(warm.startedBefore, true);
    assert.equal(cold.startedBefore, false);
    assert.equal(warm.result.sandbox.mode, mode);
    assert.deepEqual(warm.result.sandbox, cold.result.sandbox);
    await s.close();
  }
});

// Every process below pid, with its start time (so a reused pid is not mistaken for it).
function descendants(pid) {
  const parent = new Map();
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const stat = readFileSync(`/proc/${name}/stat`, 'utf8');
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      parent.set(Number(name), { ppid: Number(fields[1]), start: fields[19] });
    } catch {
      // it ended while we looked
    }
  }
  const out = [];
  // The session's type stripper (plugin/env/stripper.c) is no pooled process: its range (the
  // supervisor's command line names stripper.js) lives until unload, so it is left out.
  const isStripper = (p) => {
    try {
      return readFileSync(`/proc/${p}/cmdline`, 'utf8').includes('/stripper.js');
    } catch {
      return false;
    }
  };
  const walk = (p) => {
    for (const [child, info] of parent) if (info.ppid === p && !isStripper(child)) {
      out.push({ pid: child, start: info.start });
      walk(child);
    }
  };
  walk(pid);
  return out;
}

function alive({ pid, start }) {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19] === start;
  } catch {
    return false;
  }
}

async function gone(processes) {
  while (processes.some(alive)) await new Promise((r) => setTimeout(r, 10));
}

test('no process of the pool is left after unload', async () => {
  const s = prewarmed({ runtime: { prewarmProcesses: 2 } });
  await timedRun(s, 'cold', 'return [started]');
  await s.ready(2);
  const pooled = descendants(s.child.pid);
  assert.ok(pooled.length >= 2, JSON.stringify(pooled));
  await s.close();
  assert.deepEqual(pooled.filter(alive), []);
});

test('a mode change drains the pool; the next run starts under the new mode', async () => {
  const s = prewarmed();
  await timedRun(s, 'cold', 'return [started]');
  await s.ready(1);
  const pooled = descendants(s.child.pid);
  assert.ok(pooled.length > 0);
  s.send({ type: 'set-mode', mode: 'read-only' });
  await gone(pooled);
  const next = await timedRun(s, 'next', 'return [started]');
  assert.equal(next.startedBefore, false);
  assert.equal(next.result.sandbox.mode, 'read-only');
  await s.close();
});

test('releasing an owner drains the pool', async () => {
  const s = prewarmed();
  // A per-call run keeps nothing for its stateOwner, but names it, so dsh accepts its release.
  await timedRun(s, 'cold', 'return [started]', { stateOwner: 'o' });
  await s.ready(1);
  const pooled = descendants(s.child.pid);
  assert.ok(pooled.length > 0);
  s.send({ type: 'release', id: 'rel', stateOwner: 'o' });
  await s.next((e) => e.type === 'released' && e.id === 'rel');
  await gone(pooled);
  await s.close();
});

test('a prewarmed process nobody takes is ended after prewarmIdleMs', async () => {
  const s = prewarmed({ runtime: { prewarmIdleMs: 500 } });
  await timedRun(s, 'cold', 'return [started]');
  // Barrier: dsh -v logs the reap (the time counts from the process's start, warm or not).
  await s.stderrMatching(/a prewarmed process nobody took is ended \(prewarmIdleMs: 500\)/);
  const next = await timedRun(s, 'next', 'return [started]');
  assert.equal(next.startedBefore, false, 'the reaped process did not serve');
  await s.close();
});

// prewarmTotalProcesses: with room for both, two sessions' standing policies each keep their
// prewarmed process; control: with the default (prewarmProcesses in all), the second session's
// refill ends the first one's, whose next run starts cold.
for (const total of [2, 0]) {
  test(`two sessions with prewarmProcesses 1 and prewarmTotalProcesses ${total}: the first session's next run is ${total ? 'warm' : 'cold'}`, async () => {
    const s = prewarmed({ runtime: { prewarmProcesses: 1, prewarmTotalProcesses: total } });
    await timedRun(s, 'a-cold', 'return [started]', { sessionId: 'session-a' });
    await s.ready(1);
    await timedRun(s, 'b-cold', 'return [started]', { sessionId: 'session-b' });
    await s.ready(2);
    const a = await timedRun(s, 'a-next', 'return [started]', { sessionId: 'session-a' });
    assert.equal(a.startedBefore, total > 0);
    await s.close();
  });
}

// ---- the Python runtime's prewarmed processes ----------------------------------------------------
// The same rules (plugin/README.md, "Prewarmed processes"); which process served a program is told
// by identity, not by time: the program reports its own start (`/proc/self/stat`, clock ticks since
// boot, the same number the host reads for that process), the test compares it with the pooled
// Python processes it saw before sending the request.

const pythonPrewarmed = (opts = {}) => prewarmed(python(opts));

// The Python interpreters below dsh (their start times), not the supervisors whose command
// lines name them.
const pythonProcesses = (s) =>
  descendants(s.child.pid).filter(({ pid }) => {
    try {
      return readFileSync(`/proc/${pid}/comm`, 'utf8').startsWith('python');
    } catch {
      return false;
    }
  });

const PY_START = `with open("/proc/self/stat") as stat_file:
    started = stat_file.read().rsplit(")", 1)[1].split()[19]
`;

// Leaves a builtin, a module and a file in its private temp dir; returns what it found of a
// predecessor. The control below runs look() twice in one process.
const PY_LOOK = `import builtins, os, sys, tempfile
def look():
    marker = os.path.join(tempfile.gettempdir(), "left-behind")
    found = [hasattr(builtins, "left_behind"), "left_behind_module" in sys.modules, os.path.exists(marker)]
    builtins.left_behind = "x"
    sys.modules["left_behind_module"] = sys
    with open(marker, "w") as marker_file:
        marker_file.write("x")
    return found
`;

async function pythonRun(s, id, body) {
  const before = pythonProcesses(s).map((p) => p.start);
  const r = await s.run(id, PY_START + body);
  assert.equal(r.ok, true, JSON.stringify(r));
  const [started, ...value] = r.value;
  return { result: r, value, pooled: before.includes(started) };
}

test('Python: a prewarmed process serves one program: what the previous one left is not visible', async () => {
  const s = pythonPrewarmed();
  const cold = await pythonRun(s, 'cold', `${PY_LOOK}return [started, *look()]`);
  assert.equal(cold.pooled, false, 'the first run of a policy starts its own process');
  assert.deepEqual(cold.value, [false, false, false]);
  await s.ready(1);
  const first = await pythonRun(s, 'first', `${PY_LOOK}return [started, *look()]`);
  assert.equal(first.pooled, true, 'served by the process pooled before the request');
  assert.deepEqual(first.value, [false, false, false]);
  await s.ready(2);
  const second = await pythonRun(s, 'second', `${PY_LOOK}return [started, *look()]`);
  assert.equal(second.pooled, true);
  assert.deepEqual(second.value, [false, false, false]);
  await s.close();
});

test('Python control: the same look in one process sees the builtin, the module and the file', async () => {
  const s = pythonPrewarmed();
  await pythonRun(s, 'cold', 'return [started]');
  await s.ready(1);
  const r = await pythonRun(s, 'twice', `${PY_LOOK}return [started, look(), look()]`);
  assert.equal(r.pooled, true);
  assert.deepEqual(r.value, [[false, false, false], [true, true, true]]);
  await s.close();
});

test('Python: result.sandbox of a prewarmed run is the same as a cold run\'s', async () => {
  for (const mode of ['workspace-write', 'read-only']) {
    const s = pythonPrewarmed({ mode });
    const cold = await pythonRun(s, 'cold', 'return [started]');
    await s.ready(1);
    const warm = await pythonRun(s, 'warm', 'return [started]');
    assert.equal(cold.pooled, false);
    assert.equal(warm.pooled, true);
    assert.equal(warm.result.sandbox.mode, mode);
    assert.deepEqual(warm.result.sandbox, cold.result.sandbox);
    await s.close();
  }
});

test('Python: a mode change drains the pool; the next run starts under the new mode', async () => {
  const s = pythonPrewarmed();
  await pythonRun(s, 'cold', 'return [started]');
  await s.ready(1);
  const pooled = descendants(s.child.pid);
  assert.equal(pythonProcesses(s).length, 1);
  s.send({ type: 'set-mode', mode: 'read-only' });
  await gone(pooled);
  const next = await pythonRun(s, 'next', 'return [started]');
  assert.equal(next.pooled, false);
  assert.equal(next.result.sandbox.mode, 'read-only');
  await s.close();
});

test('Python: no process of the pool is left after unload; one nobody takes ends after prewarmIdleMs', async () => {
  const s = pythonPrewarmed({ runtime: { prewarmProcesses: 2 } });
  await pythonRun(s, 'cold', 'return [started]');
  await s.ready(2);
  const pooled = descendants(s.child.pid);
  assert.equal(pythonProcesses(s).length, 2);
  await s.close();
  assert.deepEqual(pooled.filter(alive), []);

  const idle = pythonPrewarmed({ runtime: { prewarmIdleMs: 500 } });
  await pythonRun(idle, 'cold', 'return [started]');
  await idle.ready(1);
  const reaped = pythonProcesses(idle).map((p) => p.start);
  // Barrier: dsh -v logs the reap.
  await idle.stderrMatching(/a prewarmed process nobody took is ended \(prewarmIdleMs: 500\)/);
  const next = await idle.run('next', `${PY_START}return [started]`);
  assert.equal(next.ok, true, JSON.stringify(next));
  assert.equal(reaped.includes(next.value[0]), false, 'the reaped process did not serve');
  await idle.close();
});

test('Python: a prewarmed process was warmed with asyncio loaded (its constant warm-up); a cold one starts without it', async () => {
  const s = pythonPrewarmed();
  const program = 'import sys\nreturn [started, "asyncio" in sys.modules]';
  const cold = await pythonRun(s, 'cold', program);
  assert.deepEqual([cold.pooled, ...cold.value], [false, false]);
  await s.ready(1);
  const warm = await pythonRun(s, 'warm', program);
  assert.deepEqual([warm.pooled, ...warm.value], [true, true]);
  await s.close();
});
