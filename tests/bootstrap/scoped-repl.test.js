// scoped-repl format: every case is a sequence of runs in ONE retained child. Bindings are
// copied from call to call, redeclaration with any keyword, the completion, imports, globals and
// binding calls of retained functions.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { RetainedChild } from './fake-host.js';

const TOOLS = [{ global: 'tools', functions: ['search'] }];
const echo = (frame) => ({ ok: true, value: { run: frame.run, args: frame.args } });

// Runs `steps` ([program, expected value]) in one child; `expected` may be a function checking
// the whole run ({ result, text, calls }).
async function sequence(steps, options = {}) {
  const child = new RetainedChild({ format: 'scoped-repl', ...options });
  try {
    for (const [index, [program, expected, runOptions]] of steps.entries()) {
      const run = await child.run(program, runOptions);
      if (typeof expected === 'function') {
        expected(run, index);
      } else {
        assert.equal(run.result.ok, true, `step ${index} (${program}) failed: ${JSON.stringify(run.result)}`);
        assert.deepEqual(run.result.value, expected, `step ${index}: ${program}`);
      }
    }
    return child;
  } finally {
    await child.close();
  }
}

const fails = (pattern) => ({ result }) => {
  assert.equal(result.ok, false, `expected a failure, got ${JSON.stringify(result)}`);
  assert.equal(result.error.kind, 'exception');
  assert.match(result.error.message, pattern);
};

test('var count = count + 1 adds to the earlier value, also after an earlier let or const', () =>
  sequence([
    ['var count = 1; count', 1],
    ['var count = count + 1; count', 2],
    ['var count = count + 1; count', 3],
    ['const fixed = 10; fixed', 10],
    ['var fixed = fixed + 1; fixed', 11],
    ['let moving = 5; moving', 5],
    ['var moving = moving * 2; moving', 10],
  ]));

test('a var redeclaration that does not run keeps the earlier value', () =>
  sequence([
    ['let kept = "earlier"; kept', 'earlier'],
    ['if (false) { var kept = "branch" } kept', 'earlier'],
    ['throw new Error("stop"); var kept = "after throw"', fails(/^Error: stop/)],
    ['kept', 'earlier'],
    ['var kept; kept', 'earlier'],
  ]));

test('earlier names can be declared again with any keyword, const included', () =>
  sequence([
    ['const limit = 1; limit', 1],
    ['const limit = 2; limit', ({ result, text }) => {
      assert.equal(result.value, 2);
      assert.equal(text, '', 'the redeclaration notice prints nothing');
    }],
    ['let limit = 3; limit', 3],
    ['class limit {}; typeof limit', 'function'],
    ['function limit() { return 4 } limit()', 4],
    ['var limit = 5; limit', 5],
    ['limit', 5],
  ]));

test('assigning to an earlier const without declaring it changes only this and later copies', () =>
  sequence([
    ['const base = 1; function readBase() { return base } base', 1],
    ['base = 2; [base, readBase()]', [2, 1]],
    ['[base, readBase()]', [2, 1]],
  ]));

test('let, const and class redeclarations cannot read the earlier value of their own name', () =>
  sequence([
    ['let item = 1; item', 1],
    ['let item = item + 1', fails(/^ReferenceError: Cannot access 'item' before initialization/)],
    ['item', 1],
    ['const other = item; other', 1],
    ['class item extends item {}', fails(/^ReferenceError: Cannot access 'item' before initialization/)],
    ['item', 1],
  ]));

test('a var inside a block, loop or catch is a top-level name of its call and carries on', () =>
  sequence([
    ['{ var inBlock = 1 } for (var i = 0; i < 3; i++) {} try { throw 0 } catch { var inCatch = 2 } [inBlock, i, inCatch]', [1, 3, 2]],
    ['[inBlock, i, inCatch]', [1, 3, 2]],
    ['{ let blockOnly = 1 } typeof blockOnly', 'undefined'],
  ]));

test('functions and running code of earlier calls keep their own bindings', () =>
  sequence([
    ['let n = 0; function bump() { n += 1; return n } n', 0],
    ['bump(); bump(); n', 0],
    ['[n, bump()]', [0, 3]],
    ['n = 10; [n, bump()]', [10, 4]],
  ]));

test('assignments that earlier code makes are copied only until a later call starts', () =>
  sequence([
    ['let early = 0; setTimeout(() => { early = 5 }, 10); early', 0, { settleMs: 100 }],
    ['early', 5],
    ['let late = 0; setTimeout(() => { late = 7 }, 100); late', 0],
    ['late', 0, { settleMs: 250 }],
    ['late', 0],
    ['let waiting = 0; setTimeout(() => { waiting = 1 }, 50); await new Promise((resolve) => setTimeout(resolve, 100)); waiting', 1],
  ]));

test('the last top-level expression statement is the completion; a Promise is not awaited', () =>
  sequence([
    ['1; let after = 2', 1],
    ['after + 1; if (true) { 99 }', 3],
    ['({ a: [1, "x"] })', { a: [1, 'x'] }],
    ['1, 2, 3', 3],
    ['let nothing = 1', undefined],
    ['"text"', 'text'],
    ['await new Promise((resolve) => setTimeout(resolve, 5)); "awaited inside"', 'awaited inside'],
    [
      'globalThis.slow = new Promise((resolve) => setTimeout(() => resolve(1), 5000)); slow',
      ({ result }) => assert.deepEqual(result.error, { kind: 'invalid-output', message: 'result is a Promise instance (only plain objects and arrays are JSON)' }),
    ],
    ['slow', ({ result }) => assert.deepEqual(result, { type: 'result', run: 9, ok: true }), { discardCompletion: true }],
  ]));

test('top-level return, eval, new Function and WebAssembly compilation are rejected', () =>
  sequence([
    ['return 1', fails(/^SyntaxError: Illegal return statement\n {4}at .*\[program\]:1:1\nreturn 1\n\^{6}$/)],
    ['if (true) { return 2 }', fails(/^SyntaxError: Illegal return statement/)],
    ['function ok() { return 3 } ok()', 3],
    ['eval("1")', fails(/^EvalError: Code generation from strings disallowed for this context/)],
    ['new Function("return 1")', fails(/^EvalError: Code generation from strings disallowed/)],
    ['await WebAssembly.compile(new Uint8Array([0, 97, 115, 109, 1, 0, 0, 0]))', fails(/^CompileError: .*Wasm code generation disallowed/)],
  ]));

test('programs are strict and see Node globals without require, module or built-in module globals', () =>
  sequence([
    ['undeclared = 1', fails(/^ReferenceError: undeclared is not defined/)],
    ['[typeof require, typeof module, typeof fs, typeof path, typeof exports]', Array(5).fill('undefined')],
    ['[typeof process.cwd, typeof Buffer.from, typeof setTimeout, typeof fetch, typeof URL, global === globalThis]', ['function', 'function', 'function', 'function', 'function', true]],
    ['[typeof arguments, this === globalThis]', ['undefined', true]],
    ['inspect("shown", { a: 1 }); console.log("logged"); process.stdout.write("raw"); 0', ({ text }) => assert.equal(text, "shown { a: 1 }\nlogged\nraw")],
  ]));

test('relative import() resolves from the first call\'s directory; files follow the current one', async () => {
  const root = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'ptc-scoped-')));
  const [first, second] = ['first', 'second'].map((name) => {
    const dir = path.join(root, name);
    fs.mkdirSync(dir);
    fs.writeFileSync(path.join(dir, 'where.mjs'), `export const where = ${JSON.stringify(name)};`);
    fs.writeFileSync(path.join(dir, 'file.txt'), name);
    return dir;
  });
  const readHere = 'const fsp = await import("node:fs/promises"); await fsp.readFile("file.txt", "utf8")';
  try {
    await sequence([
      ['(await import("./where.mjs")).where', 'first', { cwd: first }],
      ['const { where } = await import("./where.mjs"); [where, process.cwd()]', ['first', second], { cwd: second }],
      [readHere, 'second', { cwd: second }],
      ['process.chdir(".."); process.cwd()', root, { cwd: second }],
      ['process.cwd()', first, { cwd: first }],
    ]);
  } finally {
    fs.rmSync(root, { recursive: true, force: true });
  }
});

test('a saved function and a saved tool method call the current evaluation\'s bindings', () =>
  sequence([
    [
      'async function find(q) { return await tools.search(q) } const search = tools.search; (await find("a")).run',
      1,
      { bindings: TOOLS, reply: echo },
    ],
    ['(await find("b")).run', ({ result, calls }) => {
      assert.equal(result.value, 2);
      assert.deepEqual(calls.map((call) => [call.run, call.args]), [[2, ['b']]]);
    }, { bindings: TOOLS, reply: echo }],
    ['(await search("c")).run', 3, { bindings: TOOLS, reply: echo }],
  ]));

test('a callback of an ended evaluation cannot call a binding in a later one', () =>
  sequence([
    ['setTimeout(() => { tools.search("late") }, 100); 1', 1, { bindings: TOOLS, reply: echo }],
    ['await new Promise((resolve) => setTimeout(resolve, 300)); 2', ({ result, calls }) => {
      assert.equal(result.value, 2);
      assert.deepEqual(calls, []);
    }, { bindings: TOOLS, reply: echo }],
  ]));

test('erasable TypeScript is stripped and keeps locations', () =>
  sequence([
    ['const typed: number = 2; interface Shape { n: number } typed', 2],
    ['let shape: { n: number } = { n: typed }; shape.n', 2],
    ['const t: string = 1 as any; (() => { throw new Error("at") })(); 0', fails(/^Error: at\n {4}at .*\[program\]:1:44/)],
  ]));

test('an environment initializer is a call of its own: its declarations reach the program', () =>
  sequence([
    [
      'const fromProgram = helper(1); (() => { throw new Error("line") })(); 0',
      ({ result, frames }) => {
        assert.deepEqual(frames.filter((frame) => frame.type === 'initialized').map((frame) => frame.run), [1]);
        assert.match(result.error.message, /^Error: line\n {4}at .*\[program\]:1:47/, 'initializer lines do not shift the program');
      },
      { initializer: 'const helper = (n) => n + 41;\nvar ready = true;' },
    ],
    ['[helper(1), ready]', [42, true]],
  ]));

test('a revoked evaluation keeps its earlier mutations for the next call', () =>
  sequence([
    [
      'var progress = 1; try { await tools.hang() } catch (e) { progress = 2 } progress = 3',
      ({ result }) => assert.deepEqual(result, { type: 'revoked', run: 1 }),
      {
        bindings: [{ global: 'tools', functions: ['hang'] }],
        reply: (frame, session) => {
          session.send({ type: 'revoke', run: frame.run });
          return null;
        },
      },
    ],
    ['progress', 3],
  ]));
