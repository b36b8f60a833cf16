// Failures of the program: thrown values of every form, asynchronous failures, syntax errors
// and non-erasable TypeScript. All are `exception` results.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { runProgram } from './fake-host.js';

async function failure(program, options) {
  const { result } = await runProgram(program, options);
  assert.equal(result.ok, false, JSON.stringify(result));
  assert.equal(result.error.kind, 'exception');
  return result.error.message;
}

const BOOTSTRAP_FRAME = /bootstrap\/[\w/-]+\.js/;

test('a thrown Error reports its stack with program locations and no bootstrap frames', async () => {
  const message = await failure('const a = 1;\nthrow new Error("boom");', { cwd: '/tmp' });
  assert.match(message, /^Error: boom\n {4}at \/tmp\/\[program\]:2:7/);
  assert.doesNotMatch(message, BOOTSTRAP_FRAME);
});

test('errors after awaits and from custom classes keep their name and message', async () => {
  const message = await failure(`
    class QuotaError extends Error { name = 'QuotaError' }
    await Promise.resolve();
    throw new QuotaError('over quota');`);
  assert.match(message, /^QuotaError: over quota\n/);
  assert.doesNotMatch(message, BOOTSTRAP_FRAME);
});

test('thrown non-Errors are rendered like the Node REPL: Uncaught <inspect>', async () => {
  assert.equal(await failure('throw "boom"'), "Uncaught 'boom'");
  assert.equal(await failure('throw { code: 7, nested: { deep: [1] } }'), 'Uncaught { code: 7, nested: { deep: [ 1 ] } }');
  assert.equal(await failure('throw 42'), 'Uncaught 42');
  assert.equal(await failure('throw undefined'), 'Uncaught undefined');
});

test('a thrown value whose rendering throws gets a fixed message', async () => {
  const message = await failure(`
    const trap = () => { throw new Error('trap') };
    throw new Proxy({}, { get: trap, getPrototypeOf: trap, ownKeys: trap, getOwnPropertyDescriptor: trap, has: trap });`);
  assert.equal(message, 'exception value could not be rendered');
});

test('an unhandled rejection fails the active run', async () => {
  const message = await failure('Promise.reject(new RangeError("nobody caught me")); await new Promise((r) => setTimeout(r, 100)); return 1');
  assert.match(message, /^RangeError: nobody caught me/);
});

test('an uncaught exception in a callback fails the active run', async () => {
  const message = await failure('setTimeout(() => { throw new TypeError("in a timer") }, 1); await new Promise((r) => setTimeout(r, 200)); return 1');
  assert.match(message, /^TypeError: in a timer\n {4}at Timeout\._onTimeout \(.*\[program\]:1:/);
});

test('non-erasable TypeScript is refused with the parser message', async () => {
  const cases = [
    ['enum Color { Red }', 'TypeScript enum is not supported in strip-only mode'],
    ['namespace NS { export const x = 1 }', 'TypeScript namespace declaration is not supported in strip-only mode'],
    ['class P { constructor(private x: number) {} }', 'TypeScript parameter property is not supported in strip-only mode'],
  ];
  for (const [program, parserMessage] of cases) {
    const message = await failure(program);
    assert.ok(message.startsWith(`SyntaxError: ${parserMessage}\n`), message);
  }
});

test('syntax errors carry the parser message, location and caret', async () => {
  const message = await failure('const ok = 1;\nlet broken = ;\n', { cwd: '/tmp' });
  assert.equal(message, 'SyntaxError: Expression expected\n    at /tmp/[program]:2:14\nlet broken = ;\n             ^');
});

test('errors only the JavaScript compiler finds are located too', async () => {
  const message = await failure('let a = 1;\n  let a = 2;', { cwd: '/tmp' });
  assert.equal(message, "SyntaxError: Identifier 'a' has already been declared\n    at /tmp/[program]:2:7\n  let a = 2;\n      ^");
});

test('the body cannot close its function wrapper', async () => {
  const message = await failure("})(); (async function () {");
  assert.match(message, /^SyntaxError: /);
});

test('the body is strict-mode code', async () => {
  const message = await failure('undeclared = 5');
  assert.match(message, /^ReferenceError: undeclared is not defined/);
});

test('the cause chain follows the stack, bounded, and a hostile cause cannot break the result', async () => {
  const nested = await failure('throw new TypeError("fetch failed", {cause: new Error("connect EACCES 127.0.0.1:80")})');
  assert.match(nested, /^TypeError: fetch failed\n/);
  assert.equal(nested.split('\n').at(-1), '[cause]: Error: connect EACCES 127.0.0.1:80');
  const plain = await failure('throw new Error("x", {cause: {code: 5}})');
  assert.equal(plain.split('\n').at(-1), '[cause]: { code: 5 }');
  const cyclic = await failure('const e = new Error("loop"); e.cause = e; throw e');
  assert.equal(cyclic.split('\n').filter((line) => line === '[cause]: Error: loop').length, 4);
  const hostile = await failure('const e = new Error("g"); Object.defineProperty(e, "cause", {get() { throw 1 }}); throw e');
  assert.match(hostile, /^Error: g\n/);
  assert.doesNotMatch(hostile, /\[cause\]/);
  // Control: an error without a cause has no cause line.
  assert.doesNotMatch(await failure('throw new Error("alone")'), /\[cause\]/);
});
