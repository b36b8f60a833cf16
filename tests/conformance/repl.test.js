// persistent-in-memory: the scoped REPL (default) and Node's REPL evaluator, environment
// initializers and the owner lifecycle they share, through `dsh headless --serve`.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Serve, tempDir, text } from './harness.js';

const SCOPED = { executionMode: 'persistent-in-memory' };
const NODE_REPL = { executionMode: 'persistent-in-memory', replScoped: false };

function initializerFile(source) {
  const file = join(tempDir('dsh-init-'), 'init.ts');
  writeFileSync(file, source);
  return file;
}

test('scoped REPL: var count = count + 1 adds to the earlier value', async () => {
  const s = new Serve({ runtime: SCOPED });
  await s.run('1', 'var count = 1', { stateOwner: 'o' });
  await s.run('2', 'var count = count + 1', { stateOwner: 'o' });
  const r = await s.run('3', 'count', { stateOwner: 'o' });
  assert.equal(r.value, 2);
  await s.close();
});

test('scoped REPL: a const can be declared again and assigned in later calls', async () => {
  const s = new Serve({ runtime: SCOPED });
  await s.run('1', 'const limit = 1', { stateOwner: 'o' });
  const again = await s.run('2', 'const limit = 5; limit', { stateOwner: 'o' });
  assert.equal(again.value, 5);
  const assigned = await s.run('3', 'limit = 9; limit', { stateOwner: 'o' });
  assert.equal(assigned.ok, true, JSON.stringify(assigned));
  assert.equal(assigned.value, 9);
  assert.equal((await s.run('4', 'limit', { stateOwner: 'o' })).value, 9);
  await s.close();
});

test('scoped REPL: a var in a branch not taken keeps the earlier value', async () => {
  const s = new Serve({ runtime: SCOPED });
  await s.run('1', 'var v = "first"', { stateOwner: 'o' });
  await s.run('2', 'if (false) { var v = "never" }', { stateOwner: 'o' });
  assert.equal((await s.run('3', 'v', { stateOwner: 'o' })).value, 'first');
  await s.close();
});

test('scoped REPL: a saved function calls the current evaluation\'s tools', async () => {
  const s = new Serve({ runtime: SCOPED });
  await s.run('1', 'async function double(n) { return await tools.add({ a: n, b: n }) }', { stateOwner: 'o' });
  const r = await s.run('2', 'await double(21)', { stateOwner: 'o' });
  assert.equal(r.value, 42);
  await s.close();
});

test('scoped REPL: a Promise completion is not awaited', async () => {
  const s = new Serve({ runtime: SCOPED });
  const r = await s.run('1', 'Promise.resolve(1)', { stateOwner: 'o' });
  assert.equal(r.ok, false);
  assert.equal(r.error.kind, 'invalid-output');
  const awaited = await s.run('2', 'await Promise.resolve(1)', { stateOwner: 'o' });
  assert.equal(awaited.value, 1);
  await s.close();
});

test('scoped REPL: top-level return, eval and require are rejected', async () => {
  const s = new Serve({ runtime: SCOPED });
  assert.equal((await s.run('1', 'return 1', { stateOwner: 'o' })).error.kind, 'exception');
  assert.equal((await s.run('2', 'eval("1")', { stateOwner: 'o' })).error.kind, 'exception');
  assert.equal((await s.run('3', 'typeof require', { stateOwner: 'o' })).value, 'undefined');
  assert.equal((await s.run('4', 'const x = __$binding_y', { stateOwner: 'o' })).error.kind, 'exception');
  await s.close();
});

test('scoped REPL: a callback throwing after its evaluation ended is not reported later', async () => {
  const s = new Serve({ runtime: SCOPED });
  await s.run('1', 'setTimeout(() => { throw new Error("late") }, 300); "scheduled"', { stateOwner: 'o' });
  await new Promise((r) => setTimeout(r, 600));
  const r = await s.run('2', '"still alive"', { stateOwner: 'o' });
  assert.equal(r.ok, true, JSON.stringify(r));
  assert.equal(r.value, 'still alive');
  await s.close();
});

test('scoped REPL: a frozen thrown object still ends the process', async () => {
  const s = new Serve({ runtime: SCOPED });
  await s.run('1', 'var kept = 1; setTimeout(() => { throw Object.freeze({ frozen: true }) }, 100); 1', { stateOwner: 'o' });
  await new Promise((r) => setTimeout(r, 800));
  const r = await s.run('2', 'typeof kept', { stateOwner: 'o' });
  assert.equal(r.value, 'undefined', 'the environment should have been recreated');
  await s.close();
});

test('Node REPL: undeclared assignments are retained globals and let redeclaration errors', async () => {
  const s = new Serve({ runtime: NODE_REPL });
  await s.run('1', 'total = 10; let fixed = 1', { stateOwner: 'o' });
  assert.equal((await s.run('2', 'total + 1', { stateOwner: 'o' })).value, 11);
  const redeclare = await s.run('3', 'let fixed = 2', { stateOwner: 'o' });
  assert.equal(redeclare.error.kind, 'exception');
  assert.match(redeclare.error.message, /already been declared/);
  await s.close();
});

test('Node REPL: _ is an ordinary global and a leading block is a block', async () => {
  const s = new Serve({ runtime: NODE_REPL });
  await s.run('1', '_ = "mine"', { stateOwner: 'o' });
  assert.equal((await s.run('2', '_', { stateOwner: 'o' })).value, 'mine');
  const block = await s.run('3', '{ const t = await Promise.resolve(3); inspect(t * 2) }', { stateOwner: 'o' });
  assert.equal(block.ok, true, JSON.stringify(block));
  assert.equal(text(block), '6\n');
  assert.equal((await s.run('4', 'typeof t', { stateOwner: 'o' })).value, 'undefined');
  assert.deepEqual((await s.run('5', '({ a: 1 })', { stateOwner: 'o' })).value, { a: 1 });
  await s.close();
});

for (const [name, runtime] of [['scoped REPL', SCOPED], ['Node REPL', NODE_REPL]]) {
  test(`${name}: timeout with acknowledgment preserves, a hot loop clears`, async () => {
    const s = new Serve({ runtime: { ...runtime, stopGraceMs: 400 } });
    await s.run('1', 'var keep = "yes"', { stateOwner: 'o' });
    const acked = await s.run('2', 'await tools.sleep({ ms: 5000 })', { stateOwner: 'o', timeoutMs: 500 });
    assert.equal(acked.error.kind, 'timeout');
    assert.equal(acked.retained.state, 'preserved');
    assert.equal((await s.run('3', 'keep', { stateOwner: 'o' })).value, 'yes');
    const hot = await s.run('4', 'for (;;) {}', { stateOwner: 'o', timeoutMs: 500 });
    assert.equal(hot.retained.state, 'cleared');
    assert.equal((await s.run('5', 'typeof keep', { stateOwner: 'o' })).value, 'undefined');
    await s.close();
  });

  test(`${name}: a mode change clears the environment and cancels a running call`, async () => {
    const s = new Serve({ runtime });
    await s.run('1', 'var keep = "yes"', { stateOwner: 'o' });
    s.send({ type: 'run', id: '2', program: 'await tools.sleep({ ms: 5000 })', stateOwner: 'o' });
    await new Promise((r) => setTimeout(r, 700));
    s.send({ type: 'set-mode', mode: 'read-only' });
    const r = await s.result('2');
    assert.equal(r.error.kind, 'abort');
    const next = await s.run('3', 'typeof keep', { stateOwner: 'o' });
    assert.equal(next.value, 'undefined');
    assert.equal(next.sandbox.mode, 'read-only');
    await s.close();
  });

  test(`${name}: a concurrent run for the same owner is rejected, other owners run`, async () => {
    const s = new Serve({ runtime });
    s.send({ type: 'run', id: 'a', program: 'await tools.sleep({ ms: 600 }); "a"', stateOwner: 'o' });
    await new Promise((r) => setTimeout(r, 150));
    s.send({ type: 'run', id: 'b', program: '"b"', stateOwner: 'o' });
    const rejected = await s.next((e) => e.id === 'b');
    assert.equal(rejected.type, 'error');
    assert.equal((await s.run('c', '"c"', { stateOwner: 'p' })).value, 'c');
    assert.equal((await s.result('a')).value, 'a');
    await s.close();
  });
}

for (const [name, runtime] of [['scoped REPL', SCOPED], ['Node REPL', NODE_REPL]]) {
  test(`${name}: release clears, inconsistent reuse rejects, cwd resets`, async () => {
    const s = new Serve({ runtime });
    await s.run('1', 'var kept = 1; (await import("node:fs")).mkdirSync("d"); process.chdir("d")', { stateOwner: 'o' });
    assert.equal((await s.run('2', 'process.cwd()', { stateOwner: 'o' })).value, s.ws);
    s.send({ type: 'run', id: '3', program: 'kept', stateOwner: 'o', sessionId: 'other' });
    const e = await s.next((ev) => ev.id === '3');
    assert.equal(e.type, 'error');
    assert.match(e.message, /owner-inconsistent/);
    s.send({ type: 'release', id: 'rel', stateOwner: 'o' });
    await s.next((ev) => ev.type === 'released');
    assert.equal((await s.run('4', 'typeof kept', { stateOwner: 'o' })).value, 'undefined');
    await s.close();
  });

  test(`${name}: a one-time escalation cannot see or change the standing environment`, async () => {
    const s = new Serve({ mode: 'read-only', runtime });
    await s.run('1', 'var standing = "s"', { stateOwner: 'o' });
    const esc = await s.run('2', 'var escalated = typeof standing; escalated', { mode: 'workspace-write' });
    assert.equal(esc.value, 'undefined');
    assert.equal(esc.sandbox.mode, 'workspace-write');
    const back = await s.run('3', '[standing, typeof escalated]', { stateOwner: 'o' });
    assert.deepEqual(back.value, ['s', 'undefined']);
    await s.close();
  });
}

test('initializer: runs once per new environment, shares output, keeps user locations', async () => {
  const init = initializerFile('var greeting = "hello";\ninspect("initialized");\nvar inits = (globalThis.inits ?? 0) + 1;\n');
  const s = new Serve({ runtime: SCOPED, args: ['--initializer', init] });
  const first = await s.run('1', 'greeting', { stateOwner: 'o' });
  assert.equal(first.value, 'hello');
  assert.equal(text(first), 'initialized\n');
  const second = await s.run('2', 'greeting', { stateOwner: 'o' });
  assert.equal(text(second), '', 'ordinary calls reuse initialized state');
  const err = await s.run('3', '\nthrow new Error("where")', { stateOwner: 'o' });
  assert.match(err.error.message, /:2:/);
  const other = await s.run('4', 'greeting', { stateOwner: 'p' });
  assert.equal(text(other), 'initialized\n');
  s.send({ type: 'release', id: 'rel', stateOwner: 'o' });
  await s.next((e) => e.type === 'released');
  assert.equal(text(await s.run('5', '1', { stateOwner: 'o' })), 'initialized\n');
  await s.close();
});

test('initializer: its failure prevents the user program and clears the environment', async () => {
  const init = initializerFile('inspect("init ran"); throw new Error("init broke")');
  const s = new Serve({ runtime: SCOPED, args: ['--initializer', init] });
  const r = await s.run('1', '(await import("node:fs")).writeFileSync("user-ran", "x")', { stateOwner: 'o' });
  assert.equal(r.error.kind, 'exception');
  assert.match(r.error.message, /init broke/);
  assert.equal(r.retained.state, 'cleared');
  assert.equal(text(r), 'init ran\n');
  await s.close();
});

test('initializer: rejected outside persistent-in-memory', async () => {
  const init = initializerFile('1');
  const s = new Serve({ args: ['--initializer', init] });
  const status = await s.closed;
  assert.equal(status, 2);
  assert.match(s.stderr, /wrong-mode/);
});

test('initializer: shares the first call\'s deadline and output budget', async () => {
  const slow = initializerFile('inspect("init"); await new Promise((r) => setTimeout(r, 5000))');
  const s = new Serve({ runtime: SCOPED, args: ['--initializer', slow] });
  const timedOut = await s.run('1', '(await import("node:fs")).writeFileSync("user-ran", "x")', { stateOwner: 'o', timeoutMs: 600 });
  assert.equal(timedOut.error.kind, 'timeout');
  assert.equal(timedOut.retained.state, 'cleared');
  await s.close();
  const noisy = initializerFile('inspect("x".repeat(100))');
  const t = new Serve({ runtime: { ...SCOPED, maxOutputBytes: 50 }, args: ['--initializer', noisy] });
  const overflow = await t.run('1', '"user"', { stateOwner: 'o' });
  assert.equal(overflow.error.kind, 'output-limit');
  assert.equal(overflow.retained.state, 'cleared');
  await t.close();
});

test('Node REPL: a stack after a top-level await has no frame of the REPL\'s await wrapper', async () => {
  const s = new Serve({ runtime: NODE_REPL });
  const r = await s.run('1', 'await new Promise((resolve) => setTimeout(resolve, 1));\nthrow new Error("late")', { stateOwner: 'o' });
  assert.equal(r.ok, false);
  assert.equal(r.error.kind, 'exception');
  assert.equal(r.error.message, `Error: late\n    at ${s.ws}/[program]:2:7`);
  // An async frame of the program itself stays.
  const own = await s.run('2', 'async function g() { await null; throw new Error("own") }\nawait g()', { stateOwner: 'o' });
  assert.match(own.error.message, /^Error: own\n    at g \(.*\[program\]:1:\d+\)\n/);
  assert.match(own.error.message, /\n    at async .*\[program\]:2:\d+$/);
  assert.doesNotMatch(own.error.message, /node:repl/);
  await s.close();
});
