// Session mode changes and one-time escalation through `dsh headless --serve`.
// A mode change revokes permissions at once: every run of the changed session, temporary or
// retained, running or still being admitted, ends as `abort` naming the change, and its process
// range is stopped; runs of other sessions go on. An approved one-time escalation (a run carrying
// `mode`) never retains: it omits its `stateOwner`, runs in a fresh temporary environment and
// leaves the owner's standing environment as it was.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { Serve } from './harness.js';

const GATE = [{ global: 'gate', functions: ['wait'] }];
const SCRIPT = { executionMode: 'vm-script', scriptPersistence: true };
const during = (mode) => `execution aborted during execution: the session's sandbox mode changed to ${mode}`;
const before = (mode) => `execution aborted before code started: the session's sandbox mode changed to ${mode}`;

// Starts run `id` whose program waits on gate.wait() and then writes `file` in the workspace;
// resolves once the gate call reached the client (the program is executing).
async function startGated(s, id, file, extra = {}) {
  const program = `await gate.wait(); (await import("node:fs")).writeFileSync(${JSON.stringify(file)}, "x"); "wrote"`;
  s.send({ type: 'run', id, program, bindings: GATE, ...extra });
  return s.next((e) => e.type === 'call' && e.run === id && e.name === 'wait');
}

// The result of run `id`, failing at once when dsh answers the request with an error event.
async function runResult(s, id, program, extra) {
  s.send({ type: 'run', id, program, ...extra });
  const event = await s.next((e) => (e.type === 'result' || e.type === 'error') && e.id === id);
  assert.equal(event.type, 'result', JSON.stringify(event));
  return event.result;
}

async function setMode(s, mode, session) {
  s.send({ type: 'set-mode', mode, ...(session ? { session } : {}) });
  await s.next((e) => e.type === 'mode-set' && e.mode === mode);
}

test('a mode change ends an owner-less run awaiting a binding; it never writes', async () => {
  const s = new Serve({ mode: 'workspace-write' });
  const gate = await startGated(s, 'r', 'late.txt');
  await setMode(s, 'read-only');
  s.send({ type: 'reply', run: 'r', call: gate.call, ok: true }); // too late: the run has ended
  const r = await s.result('r');
  assert.equal(r.ok, false, JSON.stringify(r));
  assert.deepEqual(r.error, { kind: 'abort', message: during('read-only') });
  assert.equal('retained' in r, false);
  assert.equal(existsSync(join(s.ws, 'late.txt')), false);
  // The next run gets the new mode.
  const next = await s.run('n', 'try { (await import("node:fs")).writeFileSync("n.txt", "x"); return "wrote" } catch (e) { return "denied" }');
  assert.equal(next.sandbox.mode, 'read-only');
  assert.equal(next.value, 'denied');
  assert.equal(existsSync(join(s.ws, 'n.txt')), false);
  await s.close();
});

test('a mode change ends an owner-less run in a synchronous loop (its range is stopped)', async () => {
  const s = new Serve({ mode: 'workspace-write' });
  s.send({ type: 'run', id: 'spin', program: '(await import("node:fs")).writeFileSync("spinning", ""); for (;;) {}' });
  while (!existsSync(join(s.ws, 'spinning'))) await new Promise((resolve) => setTimeout(resolve, 20)); // barrier: it loops
  await setMode(s, 'read-only');
  const r = await s.result('spin');
  assert.deepEqual(r.error, { kind: 'abort', message: during('read-only') });
  await s.close();
});

test('a mode change ends an owner-less run still being admitted', async () => {
  const s = new Serve({ mode: 'workspace-write', sandbox: { confineDelayMs: 1500 } });
  // dsh handles request lines in order: the run is being admitted (confinement takes 1.5 s)
  // when the mode changes.
  s.send({ type: 'run', id: 'slow', program: '(await import("node:fs")).writeFileSync("slow.txt", "x"); "started"' });
  await setMode(s, 'read-only');
  const r = await s.result('slow');
  assert.deepEqual(r.error, { kind: 'abort', message: before('read-only') });
  assert.equal(existsSync(join(s.ws, 'slow.txt')), false);
  await s.close();
});

test('a mode change ends a retained run awaiting a binding and clears its environment', async () => {
  const s = new Serve({ mode: 'workspace-write', runtime: SCRIPT });
  assert.equal((await s.run('1', 'var kept = 1; 1', { stateOwner: 'o' })).ok, true);
  const gate = await startGated(s, '2', 'retained.txt', { stateOwner: 'o' });
  await setMode(s, 'read-only');
  s.send({ type: 'reply', run: '2', call: gate.call, ok: true });
  const r = await s.result('2');
  assert.deepEqual(r.error, { kind: 'abort', message: during('read-only') });
  assert.equal(r.retained.state, 'cleared');
  assert.equal(existsSync(join(s.ws, 'retained.txt')), false);
  const next = await s.run('3', 'typeof kept', { stateOwner: 'o' });
  assert.equal(next.value, 'undefined');
  assert.equal(next.sandbox.mode, 'read-only');
  await s.close();
});

test('two sessions with runs in flight: only the changed session\'s runs end', async () => {
  const s = new Serve({ mode: 'workspace-write', runtime: SCRIPT });
  // Session a: a temporary run and a retained one, both executing; session b: the same.
  const gates = {
    aTemp: await startGated(s, 'a-temp', 'a-temp.txt', { sessionId: 'a' }),
    aKept: await startGated(s, 'a-kept', 'a-kept.txt', { sessionId: 'a', stateOwner: 'owner-a' }),
    bTemp: await startGated(s, 'b-temp', 'b-temp.txt', { sessionId: 'b' }),
    bKept: await startGated(s, 'b-kept', 'b-kept.txt', { sessionId: 'b', stateOwner: 'owner-b' }),
  };
  await setMode(s, 'read-only', 'a');
  for (const [id, gate] of [['a-temp', gates.aTemp], ['a-kept', gates.aKept], ['b-temp', gates.bTemp], ['b-kept', gates.bKept]]) {
    s.send({ type: 'reply', run: id, call: gate.call, ok: true });
  }
  for (const id of ['a-temp', 'a-kept']) {
    const r = await s.result(id);
    assert.deepEqual(r.error, { kind: 'abort', message: during('read-only') }, id);
    assert.equal(existsSync(join(s.ws, `${id}.txt`)), false, id);
  }
  for (const id of ['b-temp', 'b-kept']) {
    const r = await s.result(id);
    assert.equal(r.ok, true, `${id}: ${JSON.stringify(r)}`);
    assert.equal(r.value, 'wrote');
    assert.equal(r.sandbox.mode, 'workspace-write');
    assert.equal(existsSync(join(s.ws, `${id}.txt`)), true, id);
  }
  await s.close();
});

for (const [label, runtime] of [
  ['vm-script persistence', SCRIPT],
  ['scoped REPL', { executionMode: 'persistent-in-memory' }],
  ['Node REPL', { executionMode: 'persistent-in-memory', replScoped: false }],
]) {
  test(`${label}: an escalation naming an owner with an environment runs temporary; the environment stays usable`, async () => {
    const s = new Serve({ mode: 'read-only', runtime });
    assert.equal((await runResult(s, '1', 'var standing = "s"; 1', { stateOwner: 'o' })).ok, true);
    const esc = await runResult(s, '2', '(await import("node:fs")).writeFileSync("esc.txt", "x"); var escalated = typeof standing; escalated', {
      stateOwner: 'o',
      mode: 'workspace-write',
    });
    assert.equal(esc.ok, true, JSON.stringify(esc));
    assert.equal(esc.value, 'undefined');
    assert.equal(esc.sandbox.mode, 'workspace-write');
    assert.equal('retained' in esc, false);
    assert.equal(existsSync(join(s.ws, 'esc.txt')), true);
    const back = await runResult(s, '3', '[standing, typeof escalated]', { stateOwner: 'o' });
    assert.equal(back.ok, true, JSON.stringify(back));
    assert.deepEqual(back.value, ['s', 'undefined']);
    assert.equal(back.sandbox.mode, 'read-only');
    await s.close();
  });

  test(`${label}: an escalation naming a new owner keeps nothing; the owner's next normal run starts fresh`, async () => {
    const s = new Serve({ mode: 'read-only', runtime });
    const esc = await runResult(s, '1', 'var escalated = 1; 1', { stateOwner: 'n', mode: 'workspace-write' });
    assert.equal(esc.ok, true, JSON.stringify(esc));
    assert.equal('retained' in esc, false);
    const next = await runResult(s, '2', 'typeof escalated', { stateOwner: 'n' });
    assert.equal(next.ok, true, JSON.stringify(next));
    assert.equal(next.value, 'undefined');
    assert.equal(next.sandbox.mode, 'read-only');
    assert.deepEqual(next.retained, { owner: 'n', state: 'preserved' });
    await s.close();
  });
}
