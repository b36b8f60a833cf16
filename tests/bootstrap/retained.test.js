// Retained vm-script environments: several runs in one process sharing one context. State
// survives, each evaluation gets its own bindings, inspect and cwd, and leftovers of ended
// evaluations never reach a later run.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { withRetainedChild } from './fake-host.js';

const TOOLS = [{ global: 'tools', functions: ['search', 'hang'] }];
const echo = (frame) => (frame.name === 'search' ? { ok: true, value: { run: frame.run, args: frame.args } } : null);

const withChild = (body, options) => withRetainedChild(options, body);

test('a variable survives three runs, in plain and lowered programs', () =>
  withChild(async (child) => {
    assert.equal(await child.value('var count = 1; count'), 1);
    assert.equal(await child.value('count += 1; count'), 2);
    assert.equal(await child.value('await null; count += 1; count'), 3);
    assert.equal(await child.value('const later = await Promise.resolve(count * 10); later'), 30);
    assert.equal(await child.value('later + count'), 33, 'a lowered const is a retained global');
  }));

test('object identities survive: a class instance keeps its identity and class', () =>
  withChild(async (child) => {
    await child.value('class Point { constructor(x) { this.x = x } }; var p = new Point(1); var same = p; 0');
    assert.deepEqual(await child.value('[p === same, p instanceof Point, p.x]'), [true, true, 1]);
    assert.deepEqual(await child.value('await null; p.x = 2; [p === same, p instanceof Point]'), [true, true]);
    assert.equal(await child.value('same.x'), 2);
  }));

test('values initialized through top-level await persist, an imported module included', () =>
  withChild(async (child) => {
    assert.equal(await child.value('var fs = await import("node:fs/promises"); typeof fs.readdir'), 'function');
    assert.equal(await child.value('Array.isArray(await fs.readdir("/"))'), true);
    assert.equal(await child.value('function twice(n) { return 2 * n } twice(1)'), 2);
    assert.equal(await child.value('await null; function thrice(n) { return 3 * n } thrice(1)'), 3);
    assert.deepEqual(await child.value('[twice(2), thrice(2)]'), [4, 6]);
  }));

test('native lexical declarations stay lexical: redeclaring one in a later run fails natively', () =>
  withChild(async (child) => {
    await child.value('let fixed = 1; fixed');
    assert.equal(await child.value('fixed = 2; fixed'), 2);
    const { result } = await child.run('let fixed = 3');
    assert.match(result.error.message, /^SyntaxError: Identifier 'fixed' has already been declared/);
  }));

// V8 refuses such a clash when the Script starts, without a location: the result points at the
// program's declaration like any syntax error, lowered or not, with no frames. A clash inside
// eval is the program's own error and keeps its stack.
test('a declaration clashing with the retained context is reported at the declaration', () =>
  withChild(async (child) => {
    await child.value('let q = 1; let v = 1; q', { cwd: '/tmp' });
    const failure = async (program) => (await child.run(program, { cwd: '/tmp' })).result.error.message;
    assert.equal(await failure('\nconst q = 2'), "SyntaxError: Identifier 'q' has already been declared\n    at /tmp/[program]:2:7\nconst q = 2\n      ^");
    assert.equal(await failure('await null; let v = 2'), "SyntaxError: Identifier 'v' has already been declared\n    at /tmp/[program]:1:17\nawait null; let v = 2\n                ^");
    assert.equal(await failure('function q() {}'), "SyntaxError: Identifier 'q' has already been declared\n    at /tmp/[program]:1:10\nfunction q() {}\n         ^");
    assert.match(await failure('let w = 1; eval("let e; let e")'), /^SyntaxError: Identifier 'e' has already been declared\n {4}at \/tmp\/\[program\]:1:12\n/);
  }));

test('each evaluation starts in its own cwd', () =>
  withChild(async (child) => {
    const dir = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'ptc-retained-')));
    fs.writeFileSync(path.join(dir, 'mod.mjs'), 'export default "from dir";\n');
    assert.equal(await child.value('process.chdir("/"); process.cwd()', { cwd: dir }), '/');
    assert.equal(await child.value('process.cwd()', { cwd: dir }), dir);
    assert.equal(await child.value('(await import("./mod.mjs")).default', { cwd: dir }), 'from dir');
  }));

test('retained functions and saved tool methods call the current evaluation\'s bindings', () =>
  withChild(async (child) => {
    await child.value('var saved = tools.search; function viaGlobal(q) { return tools.search(q) } var oldTools = tools; 0', {
      bindings: TOOLS,
      reply: echo,
    });
    const second = await child.run('[await saved("a"), await viaGlobal("b"), tools !== oldTools]', { bindings: TOOLS, reply: echo });
    assert.deepEqual(second.result.value, [{ run: 2, args: ['a'] }, { run: 2, args: ['b'] }, true]);
    assert.deepEqual(second.calls.map((call) => [call.run, call.call]), [[2, 1], [2, 2]]);
    const third = await child.run(
      'let out; try { await saved("c") } catch (e) { out = [e.name, e.message] } out',
      { bindings: [{ global: 'tools', functions: ['hang'] }], reply: echo },
    );
    assert.deepEqual(third.result.value, ['ToolCallError', 'tools.search is not available in this evaluation']);
    assert.equal(third.calls.length, 0);
  }));

test('inspect is reinstalled for every evaluation', () =>
  withChild(async (child) => {
    await child.value('var keep = inspect; inspect = null; 0');
    const { text } = await child.run('inspect("fresh"); keep("kept")');
    assert.equal(text, 'fresh\nkept\n');
  }));

test('callbacks of an ended evaluation cannot print, call bindings or fail a later run', () =>
  withChild(async (child) => {
    await child.value(
      `setTimeout(() => { inspect("late text"); tools.search("late") }, 50);
       setTimeout(() => { throw new Error("late throw") }, 60);
       setTimeout(() => { Promise.reject(new Error("late rejection")) }, 70);
       0`,
      { bindings: TOOLS, reply: echo },
    );
    const second = await child.run('await new Promise((r) => setTimeout(r, 250)); "still fine"', { bindings: TOOLS, reply: echo });
    assert.deepEqual(second.result, { type: 'result', run: 2, ok: true, value: 'still fine' });
    assert.deepEqual(second.frames.map((frame) => frame.type), ['result'], 'nothing from the first run');
    assert.equal(await child.value('1 + 1'), 2, 'the process survived');
  }));

test('an exception settles the run once and keeps earlier mutations', () =>
  withChild(async (child) => {
    await child.value('var m = 1; 0');
    const failed = await child.run('m = 2; setTimeout(() => { throw new Error("second") }, 10); throw new Error("first")', { settleMs: 100 });
    assert.match(failed.result.error.message, /^Error: first/);
    assert.equal(failed.frames.filter((frame) => frame.type === 'result').length, 1);
    assert.equal(await child.value('await null; m'), 2);
  }));

test('revoke: open calls reject inside the program, later output is dropped, the context stays usable', () =>
  withChild(async (child) => {
    await child.value('var state = "before"; 0');
    const revoked = await child.run(
      `state = "started"; inspect("visible");
       try { await tools.hang() } catch (e) { state = "caught " + e.message; inspect("dropped") } finally { process.stdout.write("dropped too") }
       state`,
      {
        bindings: TOOLS,
        reply: (frame, session) => {
          session.send({ type: 'revoke', run: frame.run });
          return null;
        },
      },
    );
    assert.deepEqual(revoked.result, { type: 'revoked', run: 2 });
    assert.deepEqual(revoked.frames.map((frame) => frame.type), ['text', 'call', 'revoked']);
    assert.equal(revoked.text, 'visible\n');
    assert.equal(await child.value('state'), 'caught tools.hang: the run was revoked');
  }));

test('a revoke for an earlier run, even while a later one is active, changes nothing', () =>
  withChild(async (child) => {
    const first = await child.run('1');
    child.session.send({ type: 'revoke', run: first.run });
    const second = await child.run('await tools.search("x"); inspect("shown"); 2', {
      bindings: TOOLS,
      reply: (frame, session) => {
        session.send({ type: 'revoke', run: first.run });
        return { ok: true, value: 0 };
      },
    });
    assert.deepEqual(second.result, { type: 'result', run: 2, ok: true, value: 2 });
    assert.equal(second.text, 'shown\n');
  }));

test('a revoke for a queued run that never started answers revoked at once', () =>
  withChild(async (child) => {
    await child.ready;
    const { session } = child;
    const run = (id, program) => ({ type: 'run', run: id, format: 'vm-script', program, cwd: '/', bindings: [], retain: true });
    session.send(run(1, 'await new Promise((r) => setTimeout(r, 150)); 1'));
    session.send(run(2, 'inspect("never"); 2'));
    session.send({ type: 'revoke', run: 2 });
    await session.waitFor((frame) => frame.type === 'result' && frame.run === 1);
    await new Promise((resolve) => setTimeout(resolve, 100));
    assert.deepEqual(
      session.frames.slice(1).map((frame) => [frame.type, frame.run]),
      [['revoked', 2], ['result', 1]],
    );
  }));

// bootstrap/evaluators/main-globals.js: reading a lazy Node global's descriptor loads its module
// (FormData: undici), so a context copies each global on first use only.
for (const format of ['vm-script', 'scoped-repl']) {
  test(`${format}: a lazy Node global loads its module when a program first uses it, then is the main global's property`, () =>
    withRetainedChild({ format }, async (child) => {
      const undiciLoaded = 'process.moduleLoadList.some((m) => m.endsWith("internal/deps/undici/undici"))';
      assert.equal(await child.value(undiciLoaded), false, 'nothing used FormData yet');
      assert.deepEqual(await child.value('var before = Object.getOwnPropertyDescriptor(globalThis, "FormData"); [typeof before.get, before.enumerable]'), ['function', false]);
      assert.equal(await child.value('typeof FormData'), 'function');
      assert.equal(await child.value(undiciLoaded), true, 'the first use loaded it');
      assert.deepEqual(
        await child.value('var after = Object.getOwnPropertyDescriptor(globalThis, "FormData"); [after.value === FormData, after.writable, after.enumerable, after.configurable]'),
        [true, true, false, true],
        'a data property, as on the main global',
      );
      // Node's accessors keep forwarding to the main global; an assignment shadows either kind.
      assert.equal(await child.value('typeof process.pid'), 'number');
      assert.deepEqual(await child.value('Blob = 5; process = 6; [Blob, process]'), [5, 6]);
      assert.deepEqual(await child.value('Object.keys(globalThis).includes("setTimeout")'), true, 'enumerability is the main global\'s');
    }));
}
