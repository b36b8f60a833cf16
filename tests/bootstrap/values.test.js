// Completion values: lossless JSON, invalid-output for anything lossy, discardCompletion.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { runProgram } from './fake-host.js';

async function complete(program, options) {
  const { result, violations } = await runProgram(program, options);
  assert.deepEqual(violations, []);
  return result;
}

test('a returned JSON value arrives exactly; TypeScript types are erased', async () => {
  const result = await complete(`
    interface Row { id: number; tags: string[] }
    type Maybe<T> = T | null;
    const rows: Row[] = [{ id: 1, tags: ['a'] }, { id: 2, tags: [] }];
    const none: Maybe<string> = null;
    const total = rows.reduce<number>((sum, row) => sum + row.id, 0) as number;
    return { rows, none, total, ratio: 1.5, big: 1e300, text: "é🎉\\n\\"", ok: true } satisfies object;`);
  assert.deepEqual(result, {
    type: 'result',
    run: 1,
    ok: true,
    value: { rows: [{ id: 1, tags: ['a'] }, { id: 2, tags: [] }], none: null, total: 3, ratio: 1.5, big: 1e300, text: 'é🎉\n"', ok: true },
  });
});

test('top-level await works and undefined completes without a value', async () => {
  const result = await complete('await new Promise((resolve) => setTimeout(resolve, 5));');
  assert.deepEqual(result, { type: 'result', run: 1, ok: true });
  assert.equal('value' in result, false);
});

test('null is a value, unlike undefined', async () => {
  assert.deepEqual(await complete('return null'), { type: 'result', run: 1, ok: true, value: null });
});

test('each lossy completion is invalid-output naming the path', async () => {
  const cases = [
    ['return { a: [1, 2, NaN] }', 'result.a[2] is NaN'],
    ['return { u: undefined }', 'result.u is undefined'],
    ['return [() => 1]', 'result[0] is a function'],
    ['return { s: Symbol("s") }', 'result.s is a symbol'],
    ['return Infinity', 'result is Infinity'],
    ['return { n: -0 }', 'result.n is -0'],
    ['return [1, , 2]', 'result[1] is a hole in a sparse array'],
    ['return { big: 2n ** 70n }', 'result.big is a BigInt'],
    ['const o: any = { me: null }; o.me = o; return o', 'result.me is a circular reference'],
    ['return { bad: "\\uD800" }', 'result.bad contains a lone surrogate'],
  ];
  for (const [program, message] of cases) {
    const result = await complete(program);
    assert.deepEqual(result.error, { kind: 'invalid-output', message }, program);
  }
});

test('class instances, Maps and Dates are not JSON', async () => {
  const result = await complete('class Box { v = 1 }; return { when: new Date(0), box: new Box() }');
  assert.equal(result.error.kind, 'invalid-output');
  assert.match(result.error.message, /^result\.when is a Date instance/);
  const box = await complete('class Box { v = 1 }; return [new Box()]');
  assert.match(box.error.message, /^result\[0\] is a Box instance/);
});

test('a throwing getter in the completion is invalid-output, not a crash', async () => {
  const result = await complete('return { get x() { throw new Error("getter says no") } }');
  assert.deepEqual(result.error, { kind: 'invalid-output', message: 'result.x could not be read: getter says no' });
});

test('discardCompletion omits the value without serializing it', async () => {
  const getter = await complete('return { get x() { throw new Error("never read") } }', { discardCompletion: true });
  assert.deepEqual(getter, { type: 'result', run: 1, ok: true });
  const cycle = await complete('const o: any = {}; o.o = o; inspect("shown"); return o', { discardCompletion: true });
  assert.deepEqual(cycle, { type: 'result', run: 1, ok: true });
});

test('the completion is encoded after the run stops talking: getters cannot print', async () => {
  const { result, text } = await runProgram('return { get x() { inspect("from getter"); return 1 } }');
  assert.deepEqual(result.value, { x: 1 });
  assert.equal(text, '');
});

test('a completion larger than one control message is invalid-output', async () => {
  const result = await complete('return "x".repeat(5000)', { maxMessageBytes: 4096 });
  assert.equal(result.error.kind, 'invalid-output');
  assert.match(result.error.message, /more than the 4096-byte control message limit/);
});
