// "Execution and results": completions are lossless JSON; lossy completions are invalid-output.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { runProgram, text } from './harness.js';

const ok = async (program, expected) => {
  const { result, status } = await runProgram(program);
  assert.equal(result.ok, true, JSON.stringify(result));
  assert.equal(status, 0);
  assert.deepEqual(result.value, expected);
  return result;
};

test('returns a number', () => ok('return 1 + 2', 3));
test('returns a string with multi-byte text', () => ok('return "héllo, 世界 🌍"', 'héllo, 世界 🌍'));
test('returns nested plain objects and arrays', () => ok('return { a: [1, { b: null }], c: true }', { a: [1, { b: null }], c: true }));
test('returns null', () => ok('return null', null));
test('top-level await works', () => ok('const v = await Promise.resolve(41); return v + 1', 42));
test('a resolved promise completion is awaited', () => ok('return new Promise(r => setTimeout(() => r("late"), 50))', 'late'));
test('erasable TypeScript is accepted', () =>
  ok('interface P { x: number }\nconst p: P = { x: 2 } as P;\nfunction f<T>(v: T): T { return v }\nreturn f<number>(p.x)', 2));
test('a function body may declare a local process', () =>
  ok('const process = await import("node:process"); return typeof process.default.pid', 'number'));

test('undefined completion has no value', async () => {
  const { result } = await runProgram('const x = 1;');
  assert.equal(result.ok, true);
  assert.equal('value' in result, false);
});

test('numbers keep their exact text', async () => {
  const r = await ok('return [0.1, 1e21, 2 ** 53, -1.5e-7, 123456789.123456789]', [0.1, 1e21, 2 ** 53, -1.5e-7, 123456789.123456789]);
  assert.deepEqual(r.value, [0.1, 1e21, 9007199254740992, -1.5e-7, 123456789.12345679]);
});

for (const [name, expr] of [
  ['undefined inside an object', '({ a: undefined })'],
  ['a function', '(() => 1)'],
  ['NaN', 'NaN'],
  ['Infinity', 'Infinity'],
  ['-0', '-0'],
  ['a sparse array', '[1, , 3]'],
  ['a class instance', '(new (class Point { x = 1 })())'],
  ['a Date', 'new Date(0)'],
  ['a Map', 'new Map([[1, 2]])'],
  ['a cycle', '(() => { const a: any = {}; a.self = a; return a })()'],
  ['a BigInt', '10n'],
  ['a symbol', 'Symbol("s")'],
  ['a lone surrogate', '"\\ud800"'],
]) {
  test(`lossy completion: ${name} is invalid-output`, async () => {
    const { result, status } = await runProgram(`return ${expr}`);
    assert.equal(result.ok, false);
    assert.equal(result.error.kind, 'invalid-output', JSON.stringify(result));
    assert.equal(status, 1);
  });
}

test('discardCompletion omits the value without serializing it', async () => {
  const { Serve } = await import('./harness.js');
  const s = new Serve();
  const r = await s.run('d1', 'inspect("seen"); return { get boom() { throw new Error("x") }, f() {} }', { discardCompletion: true });
  assert.equal(r.ok, true, JSON.stringify(r));
  assert.equal('value' in r, false);
  assert.equal(text(r), 'seen\n');
  const r2 = await s.run('d2', 'return NaN', { discardCompletion: true });
  assert.equal(r2.ok, true);
  await s.close();
});

test('a discarded completion does not count against maxOutputBytes', async () => {
  const { Serve } = await import('./harness.js');
  const s = new Serve({ runtime: { maxOutputBytes: 16 } });
  try {
    const program = 'inspect("12345"); return "x".repeat(100)';
    const kept = await s.run('k', program);
    assert.equal(kept.error?.kind, 'output-limit', JSON.stringify(kept));
    const discarded = await s.run('d', program, { discardCompletion: true });
    assert.equal(discarded.ok, true, JSON.stringify(discarded));
    assert.equal(text(discarded), '12345\n');
  } finally {
    await s.close();
  }
});

// Integers past 64 bits come from JavaScript as plain digits: they keep their exact value.
test('numbers beyond 64-bit integers keep their value', async () => {
  const { result, stdout } = await runProgram('return [2 ** 64, -(2 ** 64), 2 ** 53 + 2, 1e21, 5e-324]');
  assert.equal(result.ok, true, JSON.stringify(result));
  assert.deepEqual(result.value, [2 ** 64, -(2 ** 64), 2 ** 53 + 2, 1e21, 5e-324]);
  assert.match(stdout, /\[18446744073709552000,-18446744073709552000,9007199254740994,1e\+21,5e-324\]/);
});
