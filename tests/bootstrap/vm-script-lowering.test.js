// In-process tests of vm-script's acorn analysis and top-level-await lowering: the lowered
// Script runs in a fresh vm context and the test checks what a program observes.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import vm from 'node:vm';
import { analyzeScript, ScriptProblem } from '../../bootstrap/evaluators/vm-script-parse.js';
import { lowerTopLevelAwait, unboxCompletion } from '../../bootstrap/evaluators/vm-script-await.js';

// Lowers `code` (which must await at top level), runs it in `context` and returns the unboxed,
// awaited completion.
async function lowered(code, context = vm.createContext(vm.constants.DONT_CONTEXTIFY)) {
  const analysis = analyzeScript(code);
  assert.equal(analysis.awaits, true, 'the program needs lowering');
  const script = new vm.Script(lowerTopLevelAwait(code, analysis), { filename: '/work/[program]', lineOffset: -1 });
  const wrapper = script.runInContext(context);
  return unboxCompletion(await wrapper());
}

function fresh() {
  return vm.createContext(vm.constants.DONT_CONTEXTIFY);
}

test('only await outside functions asks for lowering', () => {
  assert.equal(analyzeScript('await x').awaits, true);
  assert.equal(analyzeScript('for await (const x of y) {}').awaits, true);
  assert.equal(analyzeScript('{ await using r = null }').awaits, true);
  assert.equal(analyzeScript('class K { [await k]() {} }').awaits, true, 'computed keys belong to the top level');
  assert.equal(analyzeScript('async function f() { await 1 } const g = async () => await 2; 5').awaits, false);
  assert.equal(analyzeScript('class K { async m() { await 1 } static { } x = async () => await 1 }').awaits, false);
  assert.equal(analyzeScript('inspect("await me")').awaits, false);
});

test('acorn failures are left to native compilation, with acorn message and offset kept', () => {
  const { parseError } = analyzeScript('var await = 3; await');
  assert.ok(parseError instanceof ScriptProblem);
  assert.doesNotMatch(parseError.message, /\(\d+:\d+\)$/, 'the location suffix is removed');
  assert.equal(typeof parseError.offset, 'number');
});

test('return, static import/export and top-level using are refused where they stand', () => {
  const problem = (code) => {
    try {
      analyzeScript(code);
    } catch (error) {
      assert.ok(error instanceof ScriptProblem);
      return [error.message.split(' ')[0], error.offset];
    }
    assert.fail(`accepted: ${code}`);
  };
  assert.deepEqual(problem('x;\nif (x) { return 1 }'), ['top-level', 12]);
  assert.deepEqual(problem('1; import x from "y"'), ['static', 3]);
  assert.deepEqual(problem('export default 1'), ['export', 0]);
  assert.deepEqual(problem('await 1; using r = null'), ['top-level', 9]);
  assert.equal(analyzeScript('function f() { return 1 } { using r = null }').awaits, false);
});

test('top-level declarations of every kind become globals of the context', async () => {
  const context = fresh();
  await lowered('const a = await 1; let b = 2; var c = 3; class D { v = 4 } function e() { return 5 }', context);
  assert.deepEqual([context.a, context.b, context.c, new context.D().v, context.e()], [1, 2, 3, 4, 5]);
});

test('destructuring declarations bind every name', async () => {
  const context = fresh();
  await lowered('var {x, y: [z], ...rest} = await ({x: 1, y: [2], q: 3}); let [p = 4, , ...r] = [undefined, 0, 6, 7];', context);
  assert.deepEqual([context.x, context.z, { ...context.rest }, context.p, [...context.r]], [1, 2, { q: 3 }, 4, [6, 7]]);
});

test('var declarations in loop heads, blocks and branches are top-level names; function scopes are not', async () => {
  const context = fresh();
  await lowered(
    `for (var i = 0, j; i < 2; i++) await null;
     for (var k in { a: 1 });
     for (var [m] of [[7]]);
     for (var async of [8]);
     if (true) var v1 = 1; else var v0 = 0;
     lbl: var v2 = 2;
     try { var v3 = 3 } finally {}
     { var v4 = await 4; let blockLocal = 1 }
     function outer() { var inner = 1; return inner }
     (() => { var arrowLocal = 1 })();
     class K { static { var staticLocal = 1 } }`,
    context,
  );
  assert.deepEqual([context.i, context.j, context.k, context.m, context.async], [2, undefined, 'a', 7, 8]);
  assert.deepEqual([context.v1, context.v2, context.v3, context.v4], [1, 2, 3, 4]);
  assert.ok('v0' in context, 'a declared but unexecuted var still exists');
  for (const name of ['blockLocal', 'inner', 'arrowLocal', 'staticLocal']) assert.equal(name in context, false, name);
});

test('statement boundaries survive rewriting (no new ASI joins)', async () => {
  assert.equal(await lowered('await null\nlet x\n[1, 2].length'), 2);
  assert.equal(await lowered('await null\nlet y\n(function () { return 3 })()'), 3);
  assert.equal(await lowered('await null\nclass Q {}\n(4)'), 4);
  assert.equal(await lowered('await null\nvar {a} = {a: 5}\n;[a][0]'), 5);
});

test('the final expression is boxed and its promise awaited; other endings complete with undefined', async () => {
  assert.equal(JSON.stringify(await lowered('({ a: await 1, b: [2] })')), '{"a":1,"b":[2]}', 'a parenthesized object');
  assert.equal(await lowered('await null; Promise.resolve(9)'), 9);
  assert.equal(await lowered('await 1 // trailing comment'), 1);
  assert.equal(await lowered('let x = await 1;'), undefined);
  assert.equal(await lowered('await 1; if (true) { 2 }'), undefined);
});

test('lines keep their numbers and untouched lines their columns', async () => {
  const stack = await lowered('await null;\nconst e = new Error("x");\n  e.stack');
  assert.match(stack, /\n {4}at \/work\/\[program\]:2:11(\n|$)/);
});

test('strictness follows the program: sloppy by default, strict with the directive', async () => {
  assert.equal(await lowered('await null; undeclaredOne = 1; undeclaredOne'), 1);
  await assert.rejects(lowered('"use strict"; await null; undeclaredTwo = 1'), /undeclaredTwo is not defined/);
  assert.equal(await lowered('"use strict"; await null; this === globalThis'), true);
});

test('functions are hoisted inside the program and reach the global when execution does', async () => {
  const context = fresh();
  assert.equal(await lowered('await null; const r = f(); function f() { return 2 } r', context), 2);
  assert.equal(context.f(), 2);
});

test('relaxed declaration semantics of lowered programs (documented limits)', async () => {
  const context = fresh();
  assert.equal(await lowered('const c = await 1; c = 2; c', context), 2, 'const is mutable');
  assert.equal(await lowered('before = typeof later; let later = await 1; before', context), 'undefined', 'no TDZ');
  context.w = 5;
  assert.equal(await lowered('await null; var w; w', context), undefined, 'var without initializer resets');
});

test('a hashbang line and computed class keys are handled', async () => {
  assert.equal(await lowered('#!/usr/bin/env node\nawait null; 1'), 1);
  assert.equal(await lowered('class K { [await Promise.resolve("m")]() { return 1 } }; new K().m()'), 1);
});
