// Values at the edges of JSON: nesting depth (a documented limit of 10000 levels of arrays and
// objects, checked by the child before it sends a value) and member names containing NUL, for
// completions, binding arguments, replies and the demo `tools.echo`, in temporary and retained
// environments.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { runProgram, Serve } from './harness.js';

const LIMIT_MESSAGE = 'nests arrays and objects deeper than 10000 levels (the limit for values)';
// A program expression building `levels` alternating arrays and objects around 1.
const nested = (levels) => `(() => { let v = 1; for (let i = 0; i < ${levels}; i++) v = i % 2 ? { k: v } : [v]; return v })()`;
const depthOf = (value) => {
  let depth = 0;
  for (; value !== null && typeof value === 'object'; depth++) value = Array.isArray(value) ? value[0] : value.k;
  return depth;
};

test('a completion nested 10000 levels deep is returned whole', async () => {
  const { result, status } = await runProgram(`return ${nested(10000)}`);
  assert.equal(result.ok, true, JSON.stringify(result.error));
  assert.equal(status, 0);
  assert.equal(depthOf(result.value), 10000);
});

test('a completion nested 10001 levels deep is invalid-output naming the limit', async () => {
  const { result } = await runProgram(`return ${nested(10001)}`);
  assert.equal(result.ok, false);
  assert.deepEqual(result.error, { kind: 'invalid-output', message: `result ${LIMIT_MESSAGE}` });
});

test('a binding argument deeper than the limit rejects the call inside the program', async () => {
  const { result } = await runProgram(
    `try { await tools.echo(${nested(10001)}) } catch (e) { return [e.name, e.message] }`,
  );
  assert.equal(result.ok, true, JSON.stringify(result.error));
  assert.deepEqual(result.value, ['TypeError', `tools.echo: arguments are not lossless JSON: args[0] ${LIMIT_MESSAGE}`]);
});

test('tools.echo answers a 32-level argument with that argument (not undefined)', async () => {
  const { result } = await runProgram(`const v = ${nested(32)}; const back = await tools.echo(v); return [back === undefined, back]`);
  assert.equal(result.ok, true, JSON.stringify(result.error));
  assert.equal(result.value[0], false);
  assert.equal(depthOf(result.value[1]), 32);
});

test('tools.echo round-trips an argument at the limit', async () => {
  const { result } = await runProgram(`return await tools.echo(${nested(10000)})`);
  assert.equal(result.ok, true, JSON.stringify(result.error));
  assert.equal(depthOf(result.value), 10000);
});

for (const [label, runtime] of [
  ['scoped REPL', { executionMode: 'persistent-in-memory' }],
  ['Node REPL', { executionMode: 'persistent-in-memory', replScoped: false }],
  ['vm-script persistence', { executionMode: 'vm-script', scriptPersistence: true }],
]) {
  test(`${label}: values deeper than the limit fail in the program's terms and keep the environment`, async () => {
    const s = new Serve({ runtime });
    assert.equal((await s.run('1', 'var kept = 7', { stateOwner: 'o' })).ok, true);
    const deep = await s.run('2', nested(10001), { stateOwner: 'o' });
    assert.deepEqual(deep.error, { kind: 'invalid-output', message: `result ${LIMIT_MESSAGE}` });
    assert.deepEqual(deep.retained, { owner: 'o', state: 'preserved' });
    const call = await s.run(
      '3',
      `var caught; try { await tools.echo(${nested(10001)}) } catch (e) { caught = e.message }; caught`,
      { stateOwner: 'o' },
    );
    assert.equal(call.value, `tools.echo: arguments are not lossless JSON: args[0] ${LIMIT_MESSAGE}`);
    const after = await s.run('4', 'kept', { stateOwner: 'o' });
    assert.equal(after.value, 7);
    assert.deepEqual(after.retained, { owner: 'o', state: 'preserved' });
    await s.close();
  });
}

test('member names containing NUL survive completions and tools.echo', async () => {
  const { result } = await runProgram('return [{ "k\\u0000": 1, "a\\u0000b": [{ "\\u0000": null }] }, await tools.echo({ "x\\u0000": 2, y: 3 })]');
  assert.equal(result.ok, true, JSON.stringify(result.error));
  assert.deepEqual(result.value, [{ 'k\u0000': 1, 'a\u0000b': [{ '\u0000': null }] }, { 'x\u0000': 2, y: 3 }]);
});

test('member names containing NUL cross a client binding both ways under --serve', async () => {
  const s = new Serve();
  s.send({ type: 'run', id: 'r', program: 'return await h.get({ "q\\u0000": 1 })', bindings: [{ global: 'h', functions: ['get'] }] });
  const call = await s.next((e) => e.type === 'call' && e.run === 'r');
  assert.deepEqual(call.args, [{ 'q\u0000': 1 }]);
  s.send({ type: 'reply', run: 'r', call: call.call, ok: true, value: { 'r\u0000': 2, s: 3 } });
  const r = await s.result('r');
  assert.equal(r.ok, true, JSON.stringify(r));
  assert.deepEqual(r.value, { 'r\u0000': 2, s: 3 });
  await s.close();
});

test('scoped REPL: a NUL-named completion is returned and the environment kept', async () => {
  const s = new Serve({ runtime: { executionMode: 'persistent-in-memory' } });
  await s.run('1', 'var kept = 7', { stateOwner: 'o' });
  const r = await s.run('2', '({ "k\\u0000": kept })', { stateOwner: 'o' });
  assert.equal(r.ok, true, JSON.stringify(r));
  assert.deepEqual(r.value, { 'k\u0000': 7 });
  assert.deepEqual(r.retained, { owner: 'o', state: 'preserved' });
  assert.equal((await s.run('3', 'kept', { stateOwner: 'o' })).value, 7);
  await s.close();
});
