// Environment initializers: a run frame's `initializer` is evaluated before the program as a
// separate compilation, then the child sends `initialized` and waits for `init-ack`.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { withRetainedChild } from './fake-host.js';

const withChild = (body, options) => withRetainedChild(options, body);

test('the initializer runs first, shares the run output, and the program starts after init-ack', () =>
  withChild(async (child) => {
    let atInitialized = -1;
    let atAck = -1;
    const first = await child.run('inspect("program"); base + 1', {
      initializer: 'var base = await Promise.resolve(10); inspect("init")',
      onInitialized: (frame, session) => {
        atInitialized = session.frames.length;
        setTimeout(() => {
          atAck = session.frames.length;
          session.send({ type: 'init-ack', run: frame.run });
        }, 100);
      },
    });
    assert.deepEqual(first.frames.map((frame) => frame.type), ['text', 'initialized', 'text', 'result']);
    assert.deepEqual(first.frames[1], { type: 'initialized', run: 1 });
    assert.equal(first.text, 'init\nprogram\n');
    assert.equal(first.result.value, 11);
    assert.equal(atAck, atInitialized, 'the program waited for the ack');
    assert.equal(await child.value('base'), 10, 'initialized state is retained');
  }));

test('the initializer completion is discarded, never serialized', () =>
  withChild(async (child) => {
    const { result } = await child.run('"program value"', { initializer: 'new Map([[1, () => 2]])' });
    assert.deepEqual(result, { type: 'result', run: 1, ok: true, value: 'program value' });
  }));

test('initializer lines do not shift program locations', () =>
  withChild(async (child) => {
    const { result } = await child.run('const a = 1;\nthrow new Error("in program")', {
      cwd: '/tmp',
      initializer: '// line 1\n// line 2\n// line 3\nvar ready = true',
    });
    assert.match(result.error.message, /^Error: in program\n {4}at \/tmp\/\[program\]:2:7/);
  }));

test('a failing initializer fails the run as initialization and the program never runs', () =>
  withChild(async (child) => {
    const { result, frames, text } = await child.run('inspect("program ran"); 1', {
      cwd: '/tmp',
      initializer: 'inspect("init output");\nthrow new Error("bad init")',
    });
    assert.equal(result.ok, false);
    assert.equal(result.error.kind, 'exception');
    assert.match(result.error.message, /^environment initialization failed: Error: bad init\n {4}at \/tmp\/\[initializer\]:2:7/);
    assert.equal(text, 'init output\n');
    assert.equal(frames.some((frame) => frame.type === 'initialized'), false);
  }));

test('initializer syntax errors and asynchronous failures are initialization failures too', () =>
  withChild(async (child) => {
    const syntax = await child.run('1', { cwd: '/tmp', initializer: 'let = ;' });
    assert.match(syntax.result.error.message, /^environment initialization failed: SyntaxError: .*\n {4}at \/tmp\/\[initializer\]:1:/);
    const late = await child.run('1', { initializer: 'setTimeout(() => { throw new Error("timer in init") }, 5); await new Promise((r) => setTimeout(r, 100))' });
    assert.match(late.result.error.message, /^environment initialization failed: Error: timer in init/);
  }));

test('a revoke instead of init-ack ends the run with revoked and the program does not start', () =>
  withChild(async (child) => {
    const { result, frames } = await child.run('inspect("program ran"); 1', {
      initializer: 'var initialized = true',
      onInitialized: (frame, session) => session.send({ type: 'revoke', run: frame.run }),
    });
    assert.deepEqual(result, { type: 'revoked', run: 1 });
    assert.deepEqual(frames.map((frame) => frame.type), ['initialized', 'revoked']);
  }));

test('a revoke during the initializer ends the run with revoked after it settles', () =>
  withChild(async (child) => {
    const { result, frames } = await child.run('inspect("program ran"); 1', {
      bindings: [{ global: 'tools', functions: ['hang'] }],
      initializer: 'try { await tools.hang() } finally { inspect("dropped") }',
      reply: (frame, session) => {
        session.send({ type: 'revoke', run: frame.run });
        return null;
      },
    });
    assert.deepEqual(result, { type: 'revoked', run: 1 });
    assert.deepEqual(frames.map((frame) => frame.type), ['call', 'revoked']);
  }));

test('the initializer sees the run\'s bindings and works for every format', () =>
  withChild(
    async (child) => {
      const { result, calls } = await child.run('return seen', {
        bindings: [{ global: 'tools', functions: ['search'] }],
        initializer: 'globalThis.seen = await tools.search("from init")',
        reply: (frame) => ({ ok: true, value: frame.args[0] }),
      });
      assert.equal(result.value, 'from init');
      assert.equal(calls.length, 1);
    },
    { format: 'async-function' },
  ));
