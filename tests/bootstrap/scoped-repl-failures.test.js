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

// The process's end, or a failure once `exited` has not come within 10 s (a hang without the rule).
async function processEnd(child) {
  let timer;
  const hung = new Promise((resolve, reject) => {
    timer = setTimeout(() => reject(new Error('the process did not end')), 10000);
  });
  try {
    return await Promise.race([child.session.exited, hung]);
  } finally {
    clearTimeout(timer);
  }
}

const UNTAGGABLE = 'TypeError: Cannot attribute the uncaught exception to its evaluation: object is not extensible';

test('a callback that throws a frozen object ends the process, as in Node REPL', () =>
  withChild(async (child) => {
    assert.equal(await child.value('setTimeout(() => { throw Object.freeze(new Error("frozen")) }, 20); 1'), 1);
    const exit = await processEnd(child);
    assert.equal(exit.code, 7, 'Node ends with 7 when an uncaughtException handler throws');
    assert.ok(child.session.stderr.includes(UNTAGGABLE), child.session.stderr);
  }));

test('a non-extensible throw by a callback of the active evaluation ends the process before any result', () =>
  withChild(async (child) => {
    const program = `setTimeout(() => { throw Object.preventExtensions(() => {}) }, 10); ${SLEEP} 1`;
    child.session.send({ type: 'run', run: 1, format: 'scoped-repl', program, cwd: process.cwd(), bindings: [], retain: true });
    const exit = await processEnd(child);
    assert.equal(exit.code, 7);
    assert.ok(child.session.stderr.includes(UNTAGGABLE), child.session.stderr);
    assert.deepEqual(child.session.frames.filter((frame) => frame.type === 'result'), []);
  }));

test('control: in vm-script a callback\'s frozen throw only fails its evaluation', () =>
  withRetainedChild({ format: 'vm-script' }, async (child) => {
    const { result } = await child.run(`setTimeout(() => { throw Object.freeze(new Error("frozen")) }, 10); ${SLEEP} 1`);
    assert.equal(result.ok, false);
    assert.match(result.error.message, /^Error: frozen/);
    assert.equal(await child.value('"alive"'), 'alive');
  }));

test('evaluations run outside any domain', () =>
  withChild(async (child) => {
    // A domain would turn on async hooks for the whole process (see scoped-repl-evaluator.js).
    assert.equal(await child.value('await new Promise((resolve) => setTimeout(() => resolve(process.domain === null), 1))'), true);
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
