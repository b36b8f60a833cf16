// scoped-repl format, failures: REPL-style asynchronous failures (callbacks of the active
// evaluation fail it, those of ended evaluations are discarded, a frozen throw ends the
// process), rejected sources (`#!`, `__$binding_`), syntax errors and the 17-column shift.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { withRetainedChild } from './fake-host.js';

const withChild = (body) => withRetainedChild({ format: 'scoped-repl' }, body);

async function failure(child, program) {
  const { result } = await child.run(program);
  assert.equal(result.ok, false, `expected a failure, got ${JSON.stringify(result)}`);
  assert.equal(result.error.kind, 'exception');
  return result.error.message;
}

const SLEEP = 'await new Promise((resolve) => setTimeout(resolve, 200));';

test('a callback exception and an unhandled rejection fail the evaluation that is still active', () =>
  withChild(async (child) => {
    assert.match(await failure(child, `setTimeout(() => { throw new Error("from callback") }, 10); ${SLEEP} "not reached"`), /^Error: from callback\n {4}at Timeout\._onTimeout \(.*\[program\]:1:/);
    assert.match(await failure(child, `Promise.reject(new Error("unhandled")); ${SLEEP} 1`), /^Error: unhandled/);
    assert.equal(await failure(child, `setTimeout(() => { throw "plain" }, 10); ${SLEEP} 1`), "Uncaught 'plain'");
    assert.equal(await child.value('"still alive"'), 'still alive');
  }));

test('a callback that throws after its evaluation ended is not reported later; the process survives', () =>
  withChild(async (child) => {
    assert.equal(await child.value('let state = "kept"; setTimeout(() => { throw new Error("late") }, 50); 1'), 1);
    assert.equal(await child.value('setTimeout(() => Promise.reject(new Error("late rejection")), 50); 2'), 2);
    const { result, text } = await child.run(`${SLEEP} state`);
    assert.deepEqual(result, { type: 'result', run: 3, ok: true, value: 'kept' });
    assert.equal(text, '');
    assert.equal(await child.value('state'), 'kept');
    assert.equal(child.session.exit, undefined);
  }));

test('a callback that throws a frozen object ends the process, as in Node REPL', () =>
  withChild(async (child) => {
    assert.equal(await child.value('setTimeout(() => { throw Object.freeze(new Error("frozen")) }, 20); 1'), 1);
    const exit = await child.session.exited;
    assert.notEqual(exit.code, 0);
    assert.match(child.session.stderr, /not extensible/);
  }));

test('a frozen object thrown by the program itself is an ordinary exception', () =>
  withChild(async (child) => {
    assert.match(await failure(child, 'throw Object.freeze(new Error("frozen sync"))'), /^Error: frozen sync/);
    assert.match(await failure(child, 'await Promise.reject(Object.preventExtensions(new Error("sealed")))'), /^Error: sealed/);
    assert.equal(await child.value('1'), 1);
  }));

test('programs starting with #! or containing __$binding_ anywhere are rejected', () =>
  withChild(async (child) => {
    assert.equal(await failure(child, '#!/usr/bin/env node\n1'), 'SyntaxError: scoped REPL programs cannot start with #!\n    at ' + `${process.cwd()}/[program]:1:1\n#!/usr/bin/env node\n^^`);
    assert.match(await failure(child, 'const text = "__$binding_in"'), /^SyntaxError: scoped REPL programs cannot contain __\$binding_\n {4}at .*\[program\]:1:15\n/);
    assert.match(await failure(child, '1 // __$binding_ in a comment'), /cannot contain __\$binding_/);
    assert.equal(await child.value('" #!".length'), 3);
  }));

test('syntax errors keep V8 wording and the program\'s own locations', () =>
  withChild(async (child) => {
    assert.equal(await failure(child, 'let ok = 1;\nlet = ;'), `SyntaxError: Expression expected\n    at ${process.cwd()}/[program]:2:7\nlet = ;\n      ^`);
    assert.match(await failure(child, '});\n(async () => {'), /^SyntaxError: .*\n {4}at .*\[program\]:1:\d+\n\}\);/, 'the program cannot close the wrapper');
    // Strict-mode errors only V8 reports, also on the final expression's line: not shifted.
    assert.match(await failure(child, 'let gone = 1; delete gone'), /^SyntaxError: Delete of an unqualified identifier in strict mode\.\n {4}at .*\[program\]:1:22\n/);
    assert.match(await failure(child, 'let a = 1; let a = 2'), /^SyntaxError: .*'a' has already been declared/);
    assert.match(await failure(child, 'import x from "y"'), /^SyntaxError: /);
    assert.equal(await child.value('"no state lost"'), 'no state lost');
  }));

test('columns after the inserted completion on the final expression\'s line shift right by 17', () =>
  withChild(async (child) => {
    // The same error as a non-final statement: the insertion comes after it on the line.
    const notFinal = await failure(child, 'let pad = 1; throw new Error("x"); 0');
    const final = await failure(child, 'let pad = 1; (() => { throw new Error("x") })()');
    assert.match(notFinal, /\[program\]:1:20\n/);
    assert.match(final, /\[program\]:1:46\n/, 'column 29 + 17');
    const secondLine = await failure(child, 'null;\n(() => { throw new Error("y") })()');
    assert.match(secondLine, /\[program\]:2:33\n/, 'column 16 + 17, on line 2');
    const laterLine = await failure(child, '[1,\n  (() => { throw new Error("z") })()]');
    assert.match(laterLine, /\[program\]:2:18\n/, 'lines after the insertion keep their columns');
  }));
