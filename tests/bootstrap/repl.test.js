// repl format (Node's REPL evaluation): every case is a sequence of runs in ONE retained child.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { withRetainedChild } from './fake-host.js';

const TOOLS = [{ global: 'tools', functions: ['search'] }];
const echo = (frame) => ({ ok: true, value: { run: frame.run, args: frame.args } });
const SLEEP = 'await new Promise((resolve) => setTimeout(resolve, 200));';

const withChild = (body, options) => withRetainedChild({ format: 'repl', ...options }, body);

async function failure(child, program, options) {
  const { result } = await child.run(program, options);
  assert.equal(result.ok, false, `expected a failure, got ${JSON.stringify(result)}`);
  assert.equal(result.error.kind, 'exception');
  return result.error.message;
}

test('sloppy code: undeclared assignments create retained globals', () =>
  withChild(async (child) => {
    assert.equal(await child.value('created = 1'), 1);
    assert.deepEqual(await child.value('[created + 1, globalThis.created, (function () { return this === globalThis })()]'), [2, 1, true]);
    assert.equal(await child.value('var count = 1; count'), 1);
    assert.equal(await child.value('var count = count + 1; count'), 2);
  }));

test('_ and _error are ordinary retained globals without result setters', () =>
  withChild(async (child) => {
    assert.equal(await child.value('1 + 1'), 2);
    assert.equal(await child.value('typeof _ + " " + typeof _error'), 'undefined undefined');
    await failure(child, 'throw new Error("x")');
    assert.equal(await child.value('typeof _error'), 'undefined');
    const { result, text } = await child.run('_ = 5; _error = 6; [_, _error]');
    assert.deepEqual(result.value, [5, 6]);
    assert.equal(text, '', 'no "Expression assignment to _ now disabled"');
    assert.equal(await child.value('7'), 7);
    assert.deepEqual(await child.value('[_, _error]'), [5, 6]);
  }));

test('Node REPL declaration rules: redeclaring let, const or class fails; var does not', () =>
  withChild(async (child) => {
    assert.equal(await child.value('let mutable = 1; const fixed = 2; class Shape {} mutable + fixed'), 3);
    assert.match(await failure(child, 'let mutable = 3'), /^SyntaxError: Identifier 'mutable' has already been declared$/);
    assert.match(await failure(child, 'const fixed = 4'), /^SyntaxError: Identifier 'fixed' has already been declared$/);
    assert.match(await failure(child, 'class Shape {}'), /^SyntaxError: Identifier 'Shape' has already been declared$/);
    assert.match(await failure(child, 'fixed = 5'), /^TypeError: Assignment to constant variable\.\n {4}at .*\[program\]:1:7$/);
    assert.equal(await child.value('mutable = 6; [mutable, fixed]').then((value) => value.join()), '6,2');
  }));

test('a leading { ... } is a statement block; a parenthesized object is returned', () =>
  withChild(async (child) => {
    assert.equal(await child.value('{ a: 1 }'), 1);
    assert.deepEqual(await child.value('({ a: 1 })'), { a: 1 });
    assert.equal(await child.value('{ let temporary = 2; temporary * 2 }'), 4);
    assert.equal(await child.value('typeof temporary'), 'undefined');
    const { result, text } = await child.run('{ const awaited = await Promise.resolve(3); inspect(awaited) } // done');
    assert.equal(result.ok, true);
    assert.equal(text, '3\n');
    assert.equal(await child.value('typeof awaited'), 'undefined');
  }));

test('top-level await works and keeps declarations; top-level return is a clear exception', () =>
  withChild(async (child) => {
    assert.equal(await child.value('const later = await Promise.resolve(5); later'), 5);
    assert.equal(await child.value('later * 2'), 10);
    assert.equal(await failure(child, 'return 1'), `SyntaxError: Illegal return statement\n    at ${process.cwd()}/[program]:1:1\nreturn 1\n^^^^^^`);
    assert.match(await failure(child, 'await null; return 1'), /^SyntaxError: /);
  }));

test('the final expression value is the completion; a Promise completion is not awaited', () =>
  withChild(async (child) => {
    assert.equal(await child.value('let unused = 1; "last"'), 'last');
    assert.equal(await child.value('let nothing = 1'), undefined);
    const { result } = await child.run('new Promise((resolve) => setTimeout(resolve, 5000))');
    assert.deepEqual(result.error, { kind: 'invalid-output', message: 'result is a Promise instance (only plain objects and arrays are JSON)' });
    assert.deepEqual((await child.run('new Promise(() => {})', { discardCompletion: true })).result, { type: 'result', run: 4, ok: true });
  }));

test('no prompt or REPL diagnostics in captured output; console and inspect are captured', () =>
  withChild(async (child) => {
    assert.equal((await child.run('1')).text, '');
    assert.equal((await child.run('inspect("shown"); console.log("logged"); 2')).text, 'shown\nlogged\n');
    assert.equal((await child.run('throw new Error("x")')).text, '');
    assert.equal((await child.run('_ = 1; _error = 2; [_, _error]')).text, '');
  }));

test('require, module and built-in module globals are Node REPL\'s; import() resolves from each cwd', async () => {
  const root = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'ptc-repl-')));
  const [first, second] = ['first', 'second'].map((name) => {
    const dir = path.join(root, name);
    fs.mkdirSync(dir);
    fs.writeFileSync(path.join(dir, `${name}.mjs`), `export const where = ${JSON.stringify(name)};`);
    return dir;
  });
  try {
    await withChild(async (child) => {
      assert.deepEqual(await child.value('[typeof require, typeof module, require("node:path").join("a", "b"), fs.existsSync("/")]'), ['function', 'object', 'a/b', true]);
      assert.equal(await child.value('(await import("./first.mjs")).where', { cwd: first }), 'first');
      assert.deepEqual(await child.value('[(await import("./second.mjs")).where, process.cwd()]', { cwd: second }), ['second', second]);
    });
  } finally {
    fs.rmSync(root, { recursive: true, force: true });
  }
});

test('errors read like the program\'s own: no REPL machinery frames', () =>
  withChild(async (child) => {
    assert.equal(await failure(child, 'let x = 1;\nthrow new Error("boom")'), `Error: boom\n    at ${process.cwd()}/[program]:2:7`);
    assert.equal(await failure(child, 'throw "plain"'), "Uncaught 'plain'");
    assert.match(await failure(child, 'await Promise.reject(new RangeError("awaited"))'), /^RangeError: awaited\n {4}at .*\[program\]:1:/);
    assert.match(await failure(child, 'let = ;'), /^SyntaxError: .*\n {4}at .*\[program\]:1:\d+\nlet = ;\n/);
  }));

test('callbacks fail the active evaluation, are discarded after it, and a frozen throw ends the process', () =>
  withChild(async (child) => {
    assert.match(await failure(child, `setTimeout(() => { throw new Error("in callback") }, 10); ${SLEEP} 1`), /^Error: in callback/);
    assert.match(await failure(child, `Promise.reject(new Error("unhandled")); ${SLEEP} 1`), /^Error: unhandled/);
    assert.equal(await child.value('setTimeout(() => { throw new Error("late") }, 50); var state = "kept"; 1'), 1);
    const { result, text } = await child.run(`${SLEEP} state`);
    assert.deepEqual(result, { type: 'result', run: 4, ok: true, value: 'kept' });
    assert.equal(text, '');
    assert.equal(await child.value('setTimeout(() => { throw Object.freeze(new Error("frozen")) }, 20); 2'), 2);
    const exit = await child.session.exited;
    assert.notEqual(exit.code, 0);
  }));

test('a saved function and a saved tool method call the current evaluation\'s bindings', () =>
  withChild(async (child) => {
    const options = { bindings: TOOLS, reply: echo };
    assert.equal(await child.value('async function find(q) { return (await tools.search(q)).run } var search = tools.search; await find("a")', options), 1);
    const { result, calls } = await child.run('await find("b")', options);
    assert.equal(result.value, 2);
    assert.deepEqual(calls.map((call) => [call.run, call.args]), [[2, ['b']]]);
    assert.equal(await child.value('(await search("c")).run', options), 3);
    assert.equal(await child.value('setTimeout(() => { tools.search("late") }, 50); 4', options), 4);
    const late = await child.run(`${SLEEP} 5`, options);
    assert.deepEqual(late.calls, []);
  }));
