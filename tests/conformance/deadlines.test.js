// "Deadlines and cancellation": elapsed deadlines, cancellation, and cleanup before the result.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { runProgram, text, Serve, prewarmed } from './harness.js';

// A run's deadline counts from its admission, the process's start included: on a loaded machine a
// cold start can outlast a short budget. The cases about a deadline during execution therefore run
// in a process warmed before the request (the pool's ready line is the barrier; the first run of a
// policy fills its pool), so the budget measures the program.
async function warmRun(runtime, program, extra = {}) {
  const s = prewarmed({ runtime });
  await s.run('cold', '1', { timeoutMs: null }); // the first run of a policy fills its pool
  await s.ready(1);
  const r = await s.run('t', program, extra);
  assert.equal(await s.close(), 0, s.stderr);
  return r;
}

test('a hot loop times out during execution with the budget in the message', async () => {
  const result = await warmRun({ timeoutMs: 800 }, 'for (;;) {}');
  assert.equal(result.error.kind, 'timeout');
  assert.equal(result.error.message, 'execution timed out during execution (800 ms)');
  // Through the CLI a timeout exits 1 (a budget for a cold start; waiting, so no CPU burnt).
  const { result: cold, status } = await runProgram('await new Promise(() => {})', { runtime: { timeoutMs: 20000 } });
  assert.equal(cold.error.message, 'execution timed out during execution (20000 ms)');
  assert.equal(status, 1);
});

test('a never-settling promise times out', async () => {
  const result = await warmRun({ timeoutMs: 600 }, 'await new Promise(() => {})');
  assert.equal(result.error.kind, 'timeout');
  assert.match(result.error.message, /during execution \(600 ms\)/);
});

test('a pending binding call counts against the deadline', async () => {
  const result = await warmRun({ timeoutMs: 700 }, 'inspect("waiting"); await tools.sleep({ ms: 10000 })');
  assert.equal(result.error.kind, 'timeout');
  assert.equal(text(result), 'waiting\n');
});

test('a deadline shorter than startup times out before code started', async () => {
  const s = new Serve({ sandbox: { confineDelayMs: 1500 } });
  const r = await s.run('t', 'return 1', { timeoutMs: 200 });
  assert.equal(r.error.kind, 'timeout');
  assert.equal(r.error.message, 'execution timed out before code started (200 ms)');
  await s.close();
});

test('timeoutMs is capped at maxTimeoutMs', async () => {
  const r = await warmRun({ maxTimeoutMs: 500, timeoutMs: 400 }, 'for (;;) {}', { timeoutMs: 100000 });
  assert.equal(r.error.message, 'execution timed out during execution (500 ms)');
});

test('timeoutMs: null disables the elapsed timer', async () => {
  const s = new Serve({ runtime: { timeoutMs: 300 } });
  const r = await s.run('n', 'await new Promise(r => setTimeout(r, 900)); return "done"', { timeoutMs: null });
  assert.equal(r.ok, true, JSON.stringify(r));
  assert.equal(r.value, 'done');
  await s.close();
});

for (const bad of [0, -5, 1.5, '100']) {
  test(`timeoutMs ${JSON.stringify(bad)} is rejected as caller misuse`, async () => {
    const s = new Serve();
    s.send({ type: 'run', id: 'bad', program: 'return 1', timeoutMs: bad });
    const e = await s.next((ev) => ev.id === 'bad');
    assert.equal(e.type, 'error', JSON.stringify(e));
    assert.match(e.message, /timeoutMs/);
    await s.close();
  });
}

test('cancellation during execution is abort and keeps output', async () => {
  const s = new Serve();
  s.send({ type: 'run', id: 'a', stream: true, program: 'inspect("started"); await new Promise(() => {})' });
  await s.next((e) => e.type === 'output' && e.run === 'a'); // the barrier: the program runs
  s.send({ type: 'cancel', id: 'a', reason: 'user pressed stop' });
  const r = await s.result('a');
  assert.equal(r.error.kind, 'abort');
  assert.match(r.error.message, /during execution.*user pressed stop/);
  assert.equal(text(r), 'started\n');
  await s.close();
});

test('cancellation during confinement never starts the program', async () => {
  const s = new Serve({ sandbox: { confineDelayMs: 1000 } });
  const marker = join(s.ws, 'started');
  s.send({ type: 'run', id: 'c', program: `(await import("node:fs")).writeFileSync(${JSON.stringify(marker)}, "x")` });
  await new Promise((r) => setTimeout(r, 200));
  s.send({ type: 'cancel', id: 'c', reason: 'stop' });
  const r = await s.result('c');
  assert.equal(r.error.kind, 'abort');
  assert.match(r.error.message, /before code started/);
  await new Promise((r) => setTimeout(r, 1500));
  assert.equal(existsSync(marker), false);
  await s.close();
});

test('cancellation right after admission is abort before code started', async () => {
  const s = new Serve();
  s.send({ type: 'run', id: 'e', program: 'return 1' });
  s.send({ type: 'cancel', id: 'e' });
  const r = await s.result('e');
  assert.equal(r.error.kind, 'abort');
  assert.match(r.error.message, /before code started/);
  await s.close();
});

test('grandchild processes are killed before the result is delivered', async () => {
  const { result, ws } = await runProgram(`
    const { spawn } = await import("node:child_process");
    const child = spawn("/bin/sh", ["-c", "while true; do date +%s%N >> ${'${PWD}'}/tick; sleep 0.05; done"], { detached: true, stdio: "ignore" });
    child.unref();
    await new Promise(r => setTimeout(r, 300));
    return child.pid`);
  assert.equal(result.ok, true, JSON.stringify(result));
  const tick = join(ws, 'tick');
  const size = statSync(tick).size;
  await new Promise((r) => setTimeout(r, 400));
  assert.equal(statSync(tick).size, size, 'the detached grandchild kept writing after the result');
});

test('a daemon that double-forks and setsids dies with the run', async () => {
  const { result, ws } = await runProgram(`
    const { spawnSync } = await import("node:child_process");
    spawnSync("/bin/sh", ["-c", "(setsid sh -c 'while true; do echo x >> daemon.log; sleep 0.05; done' </dev/null >/dev/null 2>&1 &) ; exit 0"], { stdio: "ignore" });
    await new Promise(r => setTimeout(r, 300));
    return "forked"`);
  assert.equal(result.value, 'forked');
  const log = join(ws, 'daemon.log');
  const before = readFileSync(log, 'utf8').length;
  await new Promise((r) => setTimeout(r, 400));
  assert.equal(readFileSync(log, 'utf8').length, before);
});

// graceMs: a process that lost its control channel and ignores SIGTERM is killed once the grace
// has passed; the result says how it ended. The program closes fd 3 after the bootstrap adopted
// it (a later turn of the event loop than the run's start, bootstrap/control-reader.js), so the
// bootstrap does not notice and the process lives on until the host kills it. It spins from the
// close on: libuv, polling again with fd 3 closed under its watcher, would abort the process
// itself (a race a loaded machine wins), and the kill would not be the host's.
test('after graceMs a process ignoring SIGTERM is killed', async () => {
  const program = 'process.on("SIGTERM", () => {}); await new Promise((r) => setTimeout(r, 50)); (await import("node:fs")).closeSync(3); for (;;) {}';
  const { result } = await runProgram(program, { runtime: { graceMs: 100 } });
  assert.equal(result.error?.kind, 'worker-exit', JSON.stringify(result));
  assert.match(result.error.message, /the control channel closed before the result \(signal KILL\)/);
});
