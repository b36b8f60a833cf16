// The scoped REPL evaluator's creation options, each in both states, driven in-process: the
// runtime always passes the defaults (strict on, codeGeneration off, finalExpression on and a
// redeclaration notice that prints nothing).

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createScopedReplEvaluator, DEFAULT_OPTIONS } from '../../bootstrap/evaluators/scoped-repl-evaluator.js';

const CWD = process.cwd();

// One evaluator = one retained environment; `run(program)` resolves to { value } or { error }.
function environment(options) {
  const evaluator = createScopedReplEvaluator(options);
  const run = { id: 1, settled: false, revoked: false };
  const globals = new Map([['inspect', () => {}]]);
  return async (program) => {
    try {
      // structuredClone: arrays made in the context have the context's prototypes.
      return { value: structuredClone(await evaluator.evaluate({ program, cwd: CWD, run, retain: true, globals })) };
    } catch (error) {
      return { error: error?.formatted ?? String(error?.stack ?? error) };
    }
  };
}

test('the defaults: strict on, codeGeneration off, finalExpression on, a silent notice', () => {
  assert.equal(DEFAULT_OPTIONS.strict, true);
  assert.equal(DEFAULT_OPTIONS.codeGeneration, false);
  assert.equal(DEFAULT_OPTIONS.finalExpression, true);
  assert.equal(DEFAULT_OPTIONS.onRedeclaration(['x']), undefined);
  assert.deepEqual(createScopedReplEvaluator().options, DEFAULT_OPTIONS);
});

test('strict on: undeclared assignments throw and block functions stay in their block', async () => {
  const run = environment({ strict: true });
  assert.match((await run('undeclared = 1')).error, /^ReferenceError: undeclared is not defined/);
  assert.deepEqual(await run('{ function inBlock() { return 1 } } typeof inBlock'), { value: 'undefined' });
  assert.deepEqual(await run('(function () { return this })()'), { value: undefined });
});

test('strict off: sloppy code, undeclared assignments create context globals, Annex B functions carry on', async () => {
  const run = environment({ strict: false });
  assert.deepEqual(await run('undeclared = 1'), { value: 1 });
  assert.deepEqual(await run('[undeclared, globalThis.undeclared]'), { value: [1, 1] });
  assert.deepEqual(await run('(function () { return this === globalThis })()'), { value: true });
  assert.deepEqual(await run('{ function inBlock() { return 2 } } inBlock()'), { value: 2 });
  assert.deepEqual(await run('inBlock()'), { value: 2 });
  assert.deepEqual(await run('var count = 1; count'), { value: 1 });
  assert.deepEqual(await run('var count = count + 1; count'), { value: 2 });
  assert.match((await run('"use strict"; alsoUndeclared = 1')).error, /^ReferenceError: alsoUndeclared is not defined/);
});

test('codeGeneration off: eval, Function and WebAssembly compilation throw in the context', async () => {
  const run = environment({ codeGeneration: false });
  assert.match((await run('eval("1 + 1")')).error, /^EvalError: Code generation from strings disallowed/);
  assert.match((await run('Function("return 3")()')).error, /^EvalError: Code generation from strings disallowed/);
  assert.match((await run('await WebAssembly.compile(new Uint8Array([0, 97, 115, 109, 1, 0, 0, 0]))')).error, /^CompileError: /);
  // Documented limit, not isolation: a main-realm function's constructor still compiles.
  assert.deepEqual(await run('setTimeout.constructor("return 7")()'), { value: 7 });
});

test('codeGeneration on: eval, Function and WebAssembly compilation work', async () => {
  const run = environment({ codeGeneration: true });
  assert.deepEqual(await run('let seen = 40; eval("seen + 2")'), { value: 42 });
  assert.deepEqual(await run('Function("return 3")()'), { value: 3 });
  assert.deepEqual(await run('(await WebAssembly.compile(new Uint8Array([0, 97, 115, 109, 1, 0, 0, 0]))) instanceof WebAssembly.Module'), { value: true });
});

test('finalExpression on: the last top-level expression is the completion and columns after it shift by 17', async () => {
  const run = environment({ finalExpression: true });
  assert.deepEqual(await run('let a = 1; a + 1; let b = 2'), { value: 2 });
  assert.match((await run('(() => { throw new Error("x") })()')).error, /\[program\]:1:33\n/);
});

test('finalExpression off: no completion and no column shift', async () => {
  const run = environment({ finalExpression: false });
  assert.deepEqual(await run('let a = 1; a + 1'), { value: undefined });
  assert.deepEqual(await run('a'), { value: undefined });
  assert.match((await run('(() => { throw new Error("x") })()')).error, /\[program\]:1:16\n/);
});

test('onRedeclaration receives the earlier names a program declares again', async () => {
  const notices = [];
  const run = environment({ onRedeclaration: (names) => notices.push([...names].sort()) });
  await run('const a = 1; let b = 2; var c = 3; 0');
  await run('let a = 1; var b = 2; function c() {} class d {} 0');
  await run('a + 1');
  await run('{ var a = 5 } a');
  assert.deepEqual(notices, [['a', 'b', 'c'], ['a']]);
});

test('a Promise completion is not awaited: replaced by an inert stand-in, or dropped when discarded', async () => {
  const evaluator = createScopedReplEvaluator();
  const base = { cwd: CWD, run: { id: 1 }, retain: true, globals: new Map() };
  const standIn = await evaluator.evaluate({ ...base, program: 'new Promise(() => {})' });
  assert.equal(typeof standIn.then, 'undefined');
  assert.equal(Object.getPrototypeOf(standIn).constructor.name, 'Promise');
  assert.equal(await evaluator.evaluate({ ...base, program: 'new Promise(() => {})', discardCompletion: true }), undefined);
  assert.equal(typeof (await evaluator.evaluate({ ...base, program: '({ then() {} })' })).then, 'undefined');
});
