// The vm-script format end to end: Node globals in the Script context, Script semantics,
// awaited completions, module loading from cwd, refused constructs and diagnostics.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { withRetainedChild, runProgram } from './fake-host.js';

const vmScript = (program, options = {}) => runProgram(program, { format: 'vm-script', ...options });

async function value(program, options) {
  const { result } = await vmScript(program, options);
  assert.equal(result.ok, true, JSON.stringify(result));
  return result.value;
}

async function failure(program, options) {
  const { result } = await vmScript(program, options);
  assert.equal(result.ok, false, JSON.stringify(result));
  assert.equal(result.error.kind, 'exception');
  return result.error.message;
}

function moduleDir() {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ptc-vm-script-'));
  fs.writeFileSync(path.join(dir, 'greeting.mjs'), 'export const greeting = "hello from cwd";\n');
  fs.writeFileSync(path.join(dir, 'notes.txt'), 'n\n');
  return dir;
}

test('the documented example: a declaration initialized by top-level await, then used', async () => {
  const cwd = moduleDir();
  const { result, text } = await vmScript('var fs = await import("node:fs/promises"); inspect(await fs.readdir("."))', { cwd });
  assert.deepEqual(result, { type: 'result', run: 1, ok: true });
  assert.equal(text, "[ 'greeting.mjs', 'notes.txt' ]\n");
});

test('Node globals are there as for a Script in Node, require is not', async () => {
  const names = ['console', 'process', 'Buffer', 'setTimeout', 'setImmediate', 'queueMicrotask', 'URL', 'fetch', 'crypto', 'TextEncoder', 'structuredClone', 'AbortController', 'performance'];
  const seen = await value(`[${names.map((name) => `typeof ${name}`).join(', ')}, typeof require, typeof module, global === globalThis, typeof crypto.randomUUID()]`);
  assert.deepEqual(seen.slice(0, names.length), names.map((name) => (name === 'console' || name === 'process' || name === 'crypto' || name === 'performance' ? 'object' : 'function')));
  assert.deepEqual(seen.slice(names.length), ['undefined', 'undefined', true, 'string']);
});

test('console output is captured like inspect output', async () => {
  const { text } = await vmScript('console.log("a", 1); console.error("b"); await null; process.stdout.write("c")');
  assert.equal(text, 'a 1\nb\nc');
});

test('relative dynamic import resolves from cwd, in plain and lowered programs and in functions', async () => {
  const cwd = moduleDir();
  assert.equal(await value('import("./greeting.mjs").then((m) => m.greeting)', { cwd }), 'hello from cwd');
  assert.equal(await value('const { greeting } = await import("./greeting.mjs"); greeting', { cwd }), 'hello from cwd');
  assert.equal(await value('async function load() { return (await import("./greeting.mjs")).greeting } load()', { cwd }), 'hello from cwd');
  // As the host launches it: with --experimental-vm-modules, and no warning in the output.
  const launched = await vmScript('const { greeting } = await import("./greeting.mjs"); inspect(greeting); greeting', {
    cwd,
    nodeArgs: ['--experimental-vm-modules'],
  });
  assert.deepEqual([launched.result.value, launched.text], ['hello from cwd', 'hello from cwd\n']);
});

test('Script semantics: sloppy by default, strict on request, var on the global, this is the global', async () => {
  assert.deepEqual(
    await value('undeclared = 1; var g1 = 2; [this === globalThis, globalThis.undeclared, Object.getOwnPropertyDescriptor(globalThis, "g1").configurable, (function () { return this === globalThis })()]'),
    [true, 1, false, true],
  );
  assert.match(await failure('"use strict"; undeclared = 1'), /^ReferenceError: undeclared is not defined/);
});

test('the final expression is awaited, in plain and lowered programs', async () => {
  assert.equal(await value('const p: Promise<number> = Promise.resolve(42); p'), 42);
  assert.equal(await value('({ then(resolve) { resolve(5) } })'), 5);
  assert.equal(await value('async function f() { await null; return 2 } f()'), 2);
  assert.deepEqual(await value('const x = await Promise.resolve({ a: [1, 2] }); Promise.resolve(x)'), { a: [1, 2] });
  assert.equal(await value('let n = 1; n++;'), 1, 'the Script completion value of the last statement');
});

test('discardCompletion skips serializing the final value but still awaits it', async () => {
  const plain = await vmScript('new Map()', { discardCompletion: true });
  assert.deepEqual(plain.result, { type: 'result', run: 1, ok: true });
  const lowered = await vmScript('await null; new Promise((r) => setTimeout(() => { inspect("settled"); r(() => 1) }, 50))', { discardCompletion: true });
  assert.deepEqual(lowered.result, { type: 'result', run: 1, ok: true });
  assert.equal(lowered.text, 'settled\n');
});

test('lossless results accept the context realm and the program cannot break the encoder', async () => {
  assert.deepEqual(await value('var JSON = 1; Object.prototype.polluted = 1; Array.prototype.extra = 2; [{ a: [1] }]'), [{ a: [1] }]);
  const { result } = await vmScript('[1, undefined]');
  assert.deepEqual(result.error, { kind: 'invalid-output', message: 'result[1] is undefined' });
});

test('thrown errors carry program locations, without bootstrap or vm runner frames', async () => {
  for (const program of ['const a = 1;\nthrow new Error("boom")', 'await null;\nthrow new Error("boom")']) {
    const message = await failure(program, { cwd: '/tmp' });
    assert.match(message, /^Error: boom\n {4}at \/tmp\/\[program\]:2:7/);
    assert.doesNotMatch(message, /bootstrap\/|node:vm/);
  }
  // Created before the first await: no frame of the lowering wrapper below the program's own.
  const early = await failure('const e = new Error("early"); await null; throw e', { cwd: '/tmp' });
  assert.equal(early.split('\n').filter((line) => line.includes('[program]')).join('\n'), '    at /tmp/[program]:1:11');
});

test('programs without top-level await keep native syntax diagnostics', async () => {
  const message = await failure('const ok = 1;\n"use strict"; ok;\nfunction f() { "use strict"; delete ok }', { cwd: '/tmp' });
  assert.equal(message, 'SyntaxError: Delete of an unqualified identifier in strict mode.\n    at /tmp/[program]:3:37\nfunction f() { "use strict"; delete ok }\n                                    ^^');
  assert.match(await failure('let a = 1;\n  let a = 2;', { cwd: '/tmp' }), /^SyntaxError: Identifier 'a' has already been declared\n {4}at \/tmp\/\[program\]:2:7\n/);
});

test('programs with await get the parser message, location and caret, and no stack frames', async () => {
  const message = await failure('const v = await 1;\nfunction f() { "use strict"; delete v }', { cwd: '/tmp' });
  assert.equal(message, 'SyntaxError: Deleting local variable in strict mode\n    at /tmp/[program]:2:30\nfunction f() { "use strict"; delete v }\n                             ^');
  // await used as an identifier: acorn refuses it, V8 compiles it natively.
  assert.equal(await value('var await = 3; await'), 3);
});

test('top-level return, static import/export and top-level using are refused clearly', async () => {
  const cases = [
    ['inspect(1);\nreturn 2', /^SyntaxError: top-level return is not supported in vm-script programs; end the program with an expression/, 2],
    ['import fs from "node:fs"', /^SyntaxError: static import is not supported in vm-script programs; use `await import\(\.\.\.\)`/, 1],
    ['const x = 1;\nexport { x }', /^SyntaxError: export is not supported in vm-script programs/, 2],
    ['using r = null', /^SyntaxError: top-level `using` declarations are not supported in vm-script programs; put disposable bindings inside a block/, 1],
  ];
  for (const [program, pattern, line] of cases) {
    const message = await failure(program, { cwd: '/tmp' });
    assert.match(message, pattern);
    assert.match(message, new RegExp(`\\n {4}at /tmp/\\[program\\]:${line}:1\\n`));
  }
  const { text } = await vmScript('{ using r = { [Symbol.dispose]() { inspect("disposed") } } }\n{ await using s = { async [Symbol.asyncDispose]() { inspect("async disposed") } } }');
  assert.equal(text, 'disposed\nasync disposed\n', 'using inside a block works');
});

test('bindings work from the Script context; their values come from the main realm', async () => {
  const { result, calls } = await vmScript(
    `const hits = await tools.search("q");
     let caught;
     try { await tools.fail() } catch (e) { caught = [e instanceof ToolCallError, e.name, e.message] }
     [Array.isArray(hits), hits instanceof Array, caught]`,
    {
      bindings: [{ global: 'tools', functions: ['search', 'fail'] }],
      reply: (frame) => (frame.name === 'search' ? { ok: true, value: [1, 2] } : { ok: false, message: 'no' }),
    },
  );
  assert.deepEqual(result.value, [true, false, [true, 'ToolCallError', 'no']]);
  assert.equal(calls.length, 2);
});

test('uncaught callback errors fail the active vm-script run', async () => {
  const message = await failure('setTimeout(() => { throw new TypeError("in a timer") }, 1); await new Promise((r) => setTimeout(r, 200))');
  assert.match(message, /^TypeError: in a timer\n/);
});

test('without retain every run gets a fresh context', async () => {
  await withRetainedChild({}, async (child) => {
    assert.equal(await child.value('var q = 1; globalThis.marker = 2; q', { retain: false }), 1);
    assert.deepEqual(await child.value('[typeof q, typeof marker]', { retain: false }), ['undefined', 'undefined']);
  });
});
