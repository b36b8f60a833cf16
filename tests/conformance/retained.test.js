// Retained environments (vm-script + scriptPersistence): state per owner, lifecycle, stops,
// policy changes and escalation, through `dsh headless --serve`.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { Serve, text } from './harness.js';

const SCRIPT = { executionMode: 'vm-script', scriptPersistence: true };
const startTime = 'Number((await import("node:fs")).readFileSync("/proc/self/stat", "utf8").split(") ")[1].split(" ")[19])';

test('a variable survives three calls', async () => {
  const s = new Serve({ runtime: SCRIPT });
  assert.equal((await s.run('1', 'var count = 1; count', { stateOwner: 'a' })).value, 1);
  assert.equal((await s.run('2', 'count += 1; count', { stateOwner: 'a' })).value, 2);
  const r = await s.run('3', 'count += 1; count', { stateOwner: 'a' });
  assert.equal(r.value, 3);
  assert.deepEqual(r.retained, { owner: 'a', state: 'preserved' });
  await s.close();
});

test('a class instance keeps its identity', async () => {
  const s = new Serve({ runtime: SCRIPT });
  await s.run('1', 'class Box { constructor(v) { this.v = v } }; var box = new Box(7); var same = box; 1', { stateOwner: 'o' });
  const r = await s.run('2', '[box === same, box instanceof Box, box.v]', { stateOwner: 'o' });
  assert.deepEqual(r.value, [true, true, 7]);
  await s.close();
});

test('values initialized through top-level await persist', async () => {
  const s = new Serve({ runtime: SCRIPT });
  await s.run('1', 'var fs = await import("node:fs/promises"); await fs.writeFile("f.txt", "x"); 1', { stateOwner: 'o' });
  const r = await s.run('2', 'await fs.readFile("f.txt", "utf8")', { stateOwner: 'o' });
  assert.equal(r.value, 'x');
  await s.close();
});

test('without an owner every call is a fresh temporary process', async () => {
  const s = new Serve({ runtime: SCRIPT });
  await s.run('1', 'var kept = 5; kept');
  const r = await s.run('2', 'typeof kept');
  assert.equal(r.value, 'undefined');
  assert.equal('retained' in r, false);
  await s.close();
});

test('the final expression is awaited and static imports are rejected', async () => {
  const s = new Serve({ runtime: SCRIPT });
  assert.equal((await s.run('1', 'Promise.resolve(9)')).value, 9);
  const r = await s.run('2', 'import fs from "node:fs"; 1');
  assert.equal(r.error.kind, 'exception');
  const t = await s.run('3', 'return 1');
  assert.equal(t.error.kind, 'exception');
  await s.close();
});

// A barrier through the shared workspace: each run announces itself with a file, then waits for
// the other's. Serialized owners can never both pass it (the first would wait for a run that only
// starts after it ends), so the values prove concurrency without any time bound.
const barrier = (me, other) =>
  `var who = "${me}"; var fs = await import("node:fs"); fs.writeFileSync("${me}.ready", "");\n` +
  `while (!fs.existsSync("${other}.ready")) await new Promise(r => setTimeout(r, 10));\nwho`;

test('distinct owners are isolated and run concurrently', async () => {
  const s = new Serve({ runtime: SCRIPT });
  // Control: alone, the barrier never opens, so the case below would catch serialized runs.
  const lone = await s.run('c1', barrier('c', 'nobody'), { stateOwner: 'c', timeoutMs: 1000 });
  assert.equal(lone.error?.kind, 'timeout', JSON.stringify(lone));
  s.send({ type: 'run', id: 'a1', program: barrier('a', 'b'), stateOwner: 'a', timeoutMs: 60000 });
  s.send({ type: 'run', id: 'b1', program: barrier('b', 'a'), stateOwner: 'b', timeoutMs: 60000 });
  const [a, b] = await Promise.all([s.result('a1'), s.result('b1')]);
  assert.deepEqual([a.value, b.value], ['a', 'b'], JSON.stringify([a, b]));
  assert.equal((await s.run('a2', 'who', { stateOwner: 'a' })).value, 'a');
  assert.equal((await s.run('b2', 'who', { stateOwner: 'b' })).value, 'b');
  await s.close();
});

test('a second concurrent run for one owner is rejected', async () => {
  const s = new Serve({ runtime: SCRIPT });
  s.send({ type: 'run', id: 'first', program: 'await new Promise(r => setTimeout(r, 1000)); 1', stateOwner: 'o' });
  await new Promise((r) => setTimeout(r, 200));
  s.send({ type: 'run', id: 'second', program: '2', stateOwner: 'o' });
  const e = await s.next((ev) => ev.id === 'second');
  assert.equal(e.type, 'error');
  assert.match(e.message, /owner-busy|in progress/);
  assert.equal((await s.result('first')).value, 1);
  await s.close();
});

test('a timeout acknowledged by the program preserves its variables', async () => {
  const s = new Serve({ runtime: SCRIPT });
  await s.run('1', 'var state = ["before"]; 1', { stateOwner: 'o' });
  const r = await s.run('2', 'state.push("mutated"); try { await tools.sleep({ ms: 10000 }) } finally { state.push("finally") }', { stateOwner: 'o', timeoutMs: 700 });
  assert.equal(r.error.kind, 'timeout');
  assert.deepEqual(r.retained, { owner: 'o', state: 'preserved' });
  const after = await s.run('3', 'state', { stateOwner: 'o' });
  assert.deepEqual(after.value, ['before', 'mutated', 'finally']);
  await s.close();
});

test('output after the stop request is discarded', async () => {
  const s = new Serve({ runtime: SCRIPT });
  // The echo round trip orders "kept" before the deadline: frames arrive in order, so the host
  // has the output before it answers; the finally block runs only after the stop request.
  const r = await s.run('1', 'inspect("kept"); await tools.echo("sync"); try { await tools.sleep({ ms: 60000 }) } finally { inspect("from finally") }', { stateOwner: 'o', timeoutMs: 3000 });
  assert.equal(text(r), 'kept\n');
  await s.close();
});

test('a synchronous loop is terminated and the next call starts empty', async () => {
  const s = new Serve({ runtime: { ...SCRIPT, stopGraceMs: 300 } });
  await s.run('1', 'var survivor = 1; 1', { stateOwner: 'o' });
  const r = await s.run('2', 'for (;;) {}', { stateOwner: 'o', timeoutMs: 600 });
  assert.equal(r.error.kind, 'timeout');
  assert.deepEqual(r.retained, { owner: 'o', state: 'cleared' });
  const next = await s.run('3', 'typeof survivor', { stateOwner: 'o' });
  assert.equal(next.value, 'undefined');
  await s.close();
});

test('cancellation of retained work is abort and preserves acknowledged state', async () => {
  const s = new Serve({ runtime: SCRIPT });
  await s.run('1', 'var n = 1; 1', { stateOwner: 'o' });
  s.send({ type: 'run', id: '2', program: 'n = 2; await tools.sleep({ ms: 10000 })', stateOwner: 'o' });
  await new Promise((r) => setTimeout(r, 800));
  s.send({ type: 'cancel', id: '2', reason: 'stop' });
  const r = await s.result('2');
  assert.equal(r.error.kind, 'abort');
  assert.equal(r.retained.state, 'preserved');
  assert.equal((await s.run('3', 'n', { stateOwner: 'o' })).value, 2);
  await s.close();
});

test('each evaluation resets the working directory', async () => {
  const s = new Serve({ runtime: SCRIPT });
  await s.run('1', '(await import("node:fs")).mkdirSync("sub"); process.chdir("sub"); 1', { stateOwner: 'o' });
  const r = await s.run('2', 'process.cwd()', { stateOwner: 'o' });
  assert.equal(r.value, s.ws);
  await s.close();
});

// A run carrying `mode` is an escalation and never retains (mode-changes.test.js); an owner's
// session is part of its policy, so naming another session is inconsistent reuse.
test('an owner cannot change its session until released', async () => {
  const s = new Serve({ runtime: SCRIPT });
  await s.run('1', 'var x = 1; x', { stateOwner: 'o' });
  s.send({ type: 'run', id: '2', program: 'x', stateOwner: 'o', sessionId: 'other' });
  const e = await s.next((ev) => ev.id === '2');
  assert.equal(e.type, 'error');
  assert.match(e.message, /^run rejected \(owner-inconsistent\): state owner "o" is bound to mode workspace-write, workspace .* and session "default"; release it first$/);
  s.send({ type: 'release', id: 'rel', stateOwner: 'o' });
  await s.next((ev) => ev.type === 'released' && ev.id === 'rel');
  const r = await s.run('3', 'typeof x', { stateOwner: 'o', sessionId: 'other' });
  assert.equal(r.value, 'undefined');
  assert.deepEqual(r.retained, { owner: 'o', state: 'preserved' });
  await s.close();
});

test('release completes after the process is gone and clears state', async () => {
  const s = new Serve({ runtime: SCRIPT });
  const first = await s.run('1', `var t = ${startTime}; t`, { stateOwner: 'o' });
  s.send({ type: 'release', id: 'rel', stateOwner: 'o' });
  await s.next((ev) => ev.type === 'released' && ev.id === 'rel');
  const again = await s.run('2', `[typeof t, ${startTime}]`, { stateOwner: 'o' });
  assert.equal(again.value[0], 'undefined');
  assert.notEqual(again.value[1], first.value);
  await s.close();
});

test('a mode change while idle clears the environment; the next call runs under the new mode', async () => {
  const s = new Serve({ runtime: SCRIPT });
  await s.run('1', 'var kept = 1; (await import("node:fs")).writeFileSync("w1.txt", "x"); 1', { stateOwner: 'o' });
  s.send({ type: 'set-mode', mode: 'read-only' });
  await s.next((ev) => ev.type === 'mode-set');
  const r = await s.run('2', 'const t = typeof kept; try { (await import("node:fs")).writeFileSync("w2.txt", "x") } catch (e) { inspect(e.code) } t', { stateOwner: 'o', });
  assert.equal(r.error?.kind, undefined, JSON.stringify(r));
  assert.equal(r.value, 'undefined');
  assert.equal(r.sandbox.mode, 'read-only');
  assert.equal(existsSync(join(s.ws, 'w2.txt')), false);
  await s.close();
});

test('a mode change during a call cancels it; restoring the mode does not revive it', async () => {
  const s = new Serve({ runtime: SCRIPT });
  await s.run('1', 'var kept = 1; 1', { stateOwner: 'o' });
  s.send({ type: 'run', id: '2', program: 'await tools.sleep({ ms: 5000 }); "finished"', stateOwner: 'o' });
  await new Promise((r) => setTimeout(r, 800));
  s.send({ type: 'set-mode', mode: 'read-only' });
  s.send({ type: 'set-mode', mode: 'workspace-write' });
  const r = await s.result('2');
  assert.equal(r.error.kind, 'abort');
  assert.match(r.error.message, /mode/);
  assert.equal(r.retained.state, 'cleared');
  const next = await s.run('3', 'typeof kept', { stateOwner: 'o' });
  assert.equal(next.value, 'undefined');
  await s.close();
});

test('a one-time escalation is isolated from the standing environment', async () => {
  const s = new Serve({ mode: 'read-only', runtime: SCRIPT });
  await s.run('1', 'var secret = "standing"; 1', { stateOwner: 'o' });
  const esc = await s.run('2', '(await import("node:fs")).writeFileSync("esc.txt", "x"); var leaked = 1; typeof secret', { mode: 'workspace-write' });
  assert.equal(esc.ok, true, JSON.stringify(esc));
  assert.equal(esc.value, 'undefined');
  assert.equal(esc.sandbox.mode, 'workspace-write');
  assert.ok(existsSync(join(s.ws, 'esc.txt')));
  const back = await s.run('3', '[secret, typeof leaked]', { stateOwner: 'o' });
  assert.deepEqual(back.value, ['standing', 'undefined']);
  assert.equal(back.sandbox.mode, 'read-only');
  await s.close();
});

test('idle raw output is discarded and never reaches a later result', async () => {
  const s = new Serve({ runtime: SCRIPT });
  await s.run('1', '(await import("node:child_process")).spawn("/bin/sh", ["-c", "sleep 0.3; echo idle-bytes"], { stdio: "inherit" }); 1', { stateOwner: 'o' });
  await new Promise((r) => setTimeout(r, 800));
  const r = await s.run('2', 'inspect("second"); 2', { stateOwner: 'o' });
  assert.equal(text(r), 'second\n');
  await s.close();
});

test('cleanup failure is worker-exit and blocks the owner until a release succeeds', async () => {
  // Fault injection: the reference subprocess service fails the first quiescence observation.
  const s = new Serve({ runtime: { ...SCRIPT, stopGraceMs: 200 }, rows: [{ id: 'subprocess', config: { failQuiescenceObservations: 1 } }] });
  await s.run('1', 'var x = 1; 1', { stateOwner: 'o' });
  const r = await s.run('2', 'for (;;) {}', { stateOwner: 'o', timeoutMs: 400 });
  assert.equal(r.error.kind, 'worker-exit', JSON.stringify(r));
  assert.match(r.error.message, /cleanup failed/);
  s.send({ type: 'run', id: '3', program: '1', stateOwner: 'o' });
  const blocked = await s.next((e) => e.id === '3');
  assert.equal(blocked.type, 'error');
  assert.match(blocked.message, /cleanup|owner-busy/);
  s.send({ type: 'release', id: 'rel', stateOwner: 'o' });
  await s.next((e) => e.type === 'released' && e.id === 'rel');
  const after = await s.run('4', 'typeof x', { stateOwner: 'o' });
  assert.equal(after.value, 'undefined');
  await s.close();
});

test('a mode change cancels a call that is still starting', async () => {
  const s = new Serve({ runtime: SCRIPT, sandbox: { confineDelayMs: 1500 } });
  s.send({ type: 'run', id: 'slow', program: '"started"', stateOwner: 'o' });
  await new Promise((r) => setTimeout(r, 300));
  s.send({ type: 'set-mode', mode: 'read-only' });
  s.send({ type: 'set-mode', mode: 'workspace-write' });
  const r = await s.result('slow');
  assert.equal(r.error.kind, 'abort');
  assert.match(r.error.message, /before code started.*mode/);
  const next = await s.run('next', '"fresh"', { stateOwner: 'o' });
  assert.equal(next.value, 'fresh');
  await s.close();
});

test('owner-less failures leave retained owners intact and report no retained state', async () => {
  const s = new Serve({ runtime: SCRIPT });
  try {
    await s.run('1', 'var x = 7; x', { stateOwner: 'a' });
    const timedOut = await s.run('t', 'while (true) {}', { timeoutMs: 300 });
    assert.equal(timedOut.error?.kind, 'timeout', JSON.stringify(timedOut));
    assert.equal('retained' in timedOut, false);
    const exited = await s.run('e', 'process.exit(3)');
    assert.equal(exited.error?.kind, 'worker-exit', JSON.stringify(exited));
    assert.match(exited.error.message, /exit code 3/);
    assert.equal('retained' in exited, false);
    assert.equal((await s.run('2', 'x', { stateOwner: 'a' })).value, 7);
  } finally {
    await s.close();
  }
});

test('a protocol failure of a retained program clears the environment', async () => {
  const s = new Serve({ runtime: SCRIPT });
  try {
    await s.run('1', 'var x = 1; x', { stateOwner: 'a' });
    const forged = await s.run('2', '(await import("node:fs")).writeSync(3, "not json\\n"); await new Promise((r) => setTimeout(r, 2000))', { stateOwner: 'a' });
    assert.equal(forged.error?.kind, 'protocol', JSON.stringify(forged));
    assert.deepEqual(forged.retained, { owner: 'a', state: 'cleared' });
    assert.equal((await s.run('3', 'typeof x', { stateOwner: 'a' })).value, 'undefined');
  } finally {
    await s.close();
  }
});
