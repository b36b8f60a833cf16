// Retained formats, and async-function without pre-stripped text (a prewarmed process), run a
// program without type stripping when it holds no `:` and no `<` and JavaScript accepts it
// (bootstrap/plain-javascript.js). Anything else is stripped as before:
// TypeScript that needs neither character still runs, and refused programs keep the diagnostics
// of the type stripper.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mayRunUnstripped } from '../../bootstrap/plain-javascript.js';
import { RetainedChild } from './fake-host.js';

test('only text without : and < may run unstripped', () => {
  assert.equal(mayRunUnstripped('x += 1; x'), true);
  assert.equal(mayRunUnstripped('let y = x as number'), true, 'JavaScript refuses it, so it is stripped then');
  for (const text of ['let y: number = 1', 'f<string>(1)', 'a ? b : c', '<T>x', '"a:b"']) assert.equal(mayRunUnstripped(text), false, text);
});

// TypeScript without : or <, which JavaScript refuses or reads otherwise.
const TYPESCRIPT = [
  ['var n = 4 as number; n', 4],
  ['var arr = [7]; var first = arr[0]!; first', 7],
  ['function f(a?)\nfunction f(a?) { return a ?? 5 }\nf()', 5],
  ['class C { private readonly v = 6 }\nnew C().v', 6],
];

for (const format of ['vm-script', 'scoped-repl']) {
  test(`${format}: TypeScript without : or < is still stripped, and JavaScript runs as it is`, async () => {
    const child = new RetainedChild({ format });
    try {
      for (const [program, expected] of TYPESCRIPT) {
        const { result } = await child.run(program);
        assert.equal(result.ok, true, `${program}: ${JSON.stringify(result)}`);
        assert.equal(result.value, expected, program);
      }
      const plain = await child.run(format === 'vm-script' ? 'var x = 1; x += 1; x' : 'let x = 1; x += 1; x');
      assert.equal(plain.result.value, 2);
    } finally {
      await child.close();
    }
  });

  test(`${format}: a refused program without : or < has the diagnostic it has when stripped`, async () => {
    const child = new RetainedChild({ format });
    try {
      for (const program of ['let a = 1 +* 2', 'let b = (1));', 'let enum = 3']) {
        const unstripped = await child.run(program);
        // The same first line, with a `:` in a later comment line: the stripped path.
        const stripped = await child.run(`${program}\n// :`);
        assert.equal(unstripped.result.ok, false, program);
        assert.equal(unstripped.result.error.message, stripped.result.error.message, program);
        assert.match(unstripped.result.error.message, /^SyntaxError: /);
      }
    } finally {
      await child.close();
    }
  });
}

// async-function's bodies of the same programs.
const AMARO = "process.moduleLoadList.includes('NativeModule internal/deps/amaro/dist/index')";
const TYPESCRIPT_BODIES = [
  ['var n = 4 as number; return n', 4],
  ['var arr = [7]; var first = arr[0]!; return first', 7],
  ['function f(a?)\nfunction f(a?) { return a ?? 5 }\nreturn f()', 5],
  ['class C { private readonly v = 6 }\nreturn new C().v', 6],
];

/** The result of `program` as the only run of a fresh async-function child, without `stripped`. */
async function asyncFunctionRun(program) {
  const child = new RetainedChild({ format: 'async-function' });
  try {
    return (await child.run(program, { retain: false })).result;
  } finally {
    await child.close();
  }
}

test('async-function: JavaScript without : or < compiles as it is, and amaro is never loaded; TypeScript without them is still stripped', async () => {
  assert.deepEqual((await asyncFunctionRun(`let x = 1; x += 1; return [x, ${AMARO}]`)).value, [2, false]);
  for (const [program, expected] of TYPESCRIPT_BODIES) {
    const result = await asyncFunctionRun(program);
    assert.equal(result.ok, true, `${program}: ${JSON.stringify(result)}`);
    assert.equal(result.value, expected, program);
  }
  // The control: a `:` sends the body through the stripper, which loads amaro.
  assert.deepEqual((await asyncFunctionRun(`let x: number = 2; return [x, ${AMARO}]`)).value, [2, true]);
});

test('async-function: a refused program without : or < has the diagnostic it has when stripped', async () => {
  for (const program of ['let a = 1 +* 2', 'let b = (1));', 'let enum = 3', '}); (async function () {']) {
    const unstripped = await asyncFunctionRun(program);
    const stripped = await asyncFunctionRun(`${program}\n// :`);
    assert.equal(unstripped.ok, false, program);
    assert.equal(unstripped.error.message, stripped.error.message, program);
    assert.match(unstripped.error.message, /^SyntaxError: /);
  }
});
