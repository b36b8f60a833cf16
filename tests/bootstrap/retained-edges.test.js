// Retained evaluation rules that sit between the evaluators: module namespaces kept across calls,
// the scoped REPL's statement blocks, callbacks created during a later call by a function of an
// earlier one, non-extensible callback throws, and the declaration rules of await lowering.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { withRetainedChild } from './fake-host.js';

const withChild = (format, body) => withRetainedChild({ format }, body);

for (const format of ['vm-script', 'scoped-repl', 'repl']) {
  test(`${format}: imported modules are kept across calls`, () =>
    withChild(format, async (child) => {
      assert.equal(await child.value('const m = await import("node:path"); 0'), 0);
      assert.equal(await child.value('m.join("a", "b")'), 'a/b');
    }));

  // The callback belongs to the evaluation active when it was created, not to the earlier call
  // that declared the function creating it.
  test(`${format}: a callback an earlier function creates during a later call fails that call`, () =>
    withChild(format, async (child) => {
      await child.value('function later() { setTimeout(() => { throw new Error("cb") }, 10) } 0');
      const { result } = await child.run('later(); await new Promise((r) => setTimeout(r, 200)); 1');
      assert.equal(result.ok, false, JSON.stringify(result));
      assert.match(result.error.message, /^Error: cb/);
      assert.equal(await child.value('2'), 2);
    }));
}

test('scoped-repl: a leading { ... } is a statement block with top-level await and temporary declarations', () =>
  withChild('scoped-repl', async (child) => {
    const { text } = await child.run('{ const a = await Promise.resolve(3); inspect(a) }');
    assert.equal(text, '3\n');
    assert.equal(await child.value('typeof a'), 'undefined');
    assert.deepEqual(await child.value('({ a: 1 })'), { a: 1 });
  }));

test('scoped-repl: a callback throwing a non-extensible object ends the process, as in Node REPL', () =>
  withChild('scoped-repl', async (child) => {
    assert.equal(await child.value('setTimeout(() => { throw Object.preventExtensions(new Error("ne")) }, 20); 1'), 1);
    const exit = await child.session.exited;
    assert.notEqual(exit.code, 0);
    assert.match(child.session.stderr, /not extensible/);
  }));

test('vm-script lowering: direct-eval declarations stay in their evaluation; declarations run when reached', () =>
  withChild('vm-script', async (child) => {
    assert.equal(await child.value('await null; eval("var z = 1"); z'), 1);
    assert.equal(await child.value('typeof z'), 'undefined');
    // A function declaration is copied to the global only when execution reaches it.
    await child.run('await null; throw 1; function g() {}');
    assert.equal(await child.value('typeof g'), 'undefined');
    // A lowered class declaration is an assignment: no temporal dead zone before it.
    assert.equal(await child.value('await null; var t = typeof K; class K {}; t'), 'undefined');
  }));
