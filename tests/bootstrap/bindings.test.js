// Binding proxies: call frames, replies, rejection classes, argument checks, limits, revoke and
// silence after the result.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { runProgram } from './fake-host.js';

const TOOLS = [{ global: 'tools', functions: ['search', 'fail', 'hang'] }];

function answer(frame) {
  if (frame.name === 'search') return { ok: true, value: { query: frame.args[0], hits: [1, 2] } };
  if (frame.name === 'fail') return { ok: false, message: 'search backend is down' };
  return null; // hang: never answered
}

test('a binding call sends its arguments as a JSON array and resolves with the reply value', async () => {
  const { result, calls } = await runProgram('return await tools.search("cats", { limit: 2 })', { bindings: TOOLS, reply: answer });
  assert.deepEqual(calls, [{ type: 'call', run: 1, call: 1, global: 'tools', name: 'search', args: ['cats', { limit: 2 }] }]);
  assert.deepEqual(result.value, { query: 'cats', hits: [1, 2] });
});

test('binding methods are async functions named after the binding', async () => {
  const { result } = await runProgram(
    'return [typeof tools.search, tools.search.name, tools.search.constructor.name, Object.keys(tools)]',
    { bindings: TOOLS },
  );
  assert.deepEqual(result.value, ['function', 'search', 'AsyncFunction', ['search', 'fail', 'hang']]);
});

test('binding names that are Object.prototype or function property names are ordinary methods', async () => {
  const bindings = [{ global: 'host', functions: ['__proto__', 'name', 'constructor', 'length', 'toString'] }];
  const { result, calls } = await runProgram(
    'return [Object.getPrototypeOf(host) === Object.prototype, await host.__proto__(1), await host.name(2), await host.constructor(3), await host.length(4), await host.toString(5)]',
    { bindings, reply: (frame) => ({ ok: true, value: frame.name }) },
  );
  assert.equal(result.ok, true, JSON.stringify(result));
  assert.deepEqual(result.value, [true, '__proto__', 'name', 'constructor', 'length', 'toString']);
  assert.deepEqual(calls.map((c) => c.name), ['__proto__', 'name', 'constructor', 'length', 'toString']);
});

test('a reply without a value resolves to undefined', async () => {
  const { result } = await runProgram('const v = await tools.search("x"); return v === undefined', {
    bindings: TOOLS,
    reply: () => ({ ok: true }),
  });
  assert.equal(result.value, true);
});

test('a rejected call rejects with the default ToolCallError carrying member', async () => {
  const { result } = await runProgram(
    `try { await tools.fail(1) } catch (e) {
       return [e instanceof ToolCallError, e instanceof Error, e.name, e.message, e.member, ToolCallError.name, e.stack.split("\\n")[1]]
     }`,
    { bindings: TOOLS, reply: answer, cwd: '/tmp' },
  );
  assert.deepEqual(result.value.slice(0, 6), [true, true, 'ToolCallError', 'search backend is down', 'fail', 'ToolCallError']);
  assert.match(result.value[6], /^ {4}at \/tmp\/\[program\]:1:/, 'the stack points at the call site');
});

test('each binding namespace exposes its declared error class', async () => {
  const bindings = [
    { global: 'tools', functions: ['fail'] },
    { global: 'files', functions: ['read'], errorClass: 'FileToolError' },
  ];
  const { result } = await runProgram(
    `const caught: any[] = [];
     try { await files.read("/x") } catch (e) { caught.push(e instanceof FileToolError, e instanceof ToolCallError, e.name, e.member) }
     try { await tools.fail() } catch (e) { caught.push(e instanceof ToolCallError, e.name) }
     return caught`,
    { bindings, reply: () => ({ ok: false, message: 'denied' }) },
  );
  assert.deepEqual(result.value, [true, false, 'FileToolError', 'read', true, 'ToolCallError']);
});

test('an uncaught binding rejection fails the run without bootstrap frames', async () => {
  const { result } = await runProgram('await tools.fail()', { bindings: TOOLS, reply: answer });
  assert.match(result.error.message, /^ToolCallError: search backend is down\n {4}at .*\[program\]:1:13/);
  assert.doesNotMatch(result.error.message, /bootstrap\//);
});

test('lossy arguments reject with a TypeError and send no call frame', async () => {
  const { result, calls } = await runProgram(
    `const out: string[] = [];
     for (const bad of [[undefined], [{ n: NaN }], [() => 1], [new Date()], [1n]]) {
       try { await (tools.search as any)(...bad) } catch (e) { out.push(e.constructor.name + ": " + e.message) }
     }
     return out`,
    { bindings: TOOLS, reply: answer },
  );
  assert.equal(calls.length, 0);
  assert.deepEqual(result.value.slice(0, 3), [
    'TypeError: tools.search: arguments are not lossless JSON: args[0] is undefined',
    'TypeError: tools.search: arguments are not lossless JSON: args[0].n is NaN',
    'TypeError: tools.search: arguments are not lossless JSON: args[0] is a function',
  ]);
  assert.match(result.value[3], /^TypeError: .*args\[0\] is a Date instance/);
  assert.match(result.value[4], /^TypeError: .*args\[0\] is a BigInt/);
});

test('calls beyond --max-pending-calls reject with a RangeError', async () => {
  const again = await runProgram(
    `tools.hang(1); tools.hang(2);
     return await tools.hang(3).then(() => "resolved", (e) => e.constructor.name + ": " + e.message)`,
    { bindings: TOOLS, reply: answer, maxPendingCalls: 2 },
  );
  assert.equal(again.result.value, 'RangeError: tools.hang: too many pending binding calls (limit 2)');
  assert.equal(again.calls.length, 2);
});

test('answered calls free their pending slot', async () => {
  const { result, calls } = await runProgram(
    'for (let i = 0; i < 5; i++) await tools.search(i); return "ok"',
    { bindings: TOOLS, reply: answer, maxPendingCalls: 1 },
  );
  assert.equal(result.value, 'ok');
  assert.deepEqual(calls.map((call) => call.call), [1, 2, 3, 4, 5]);
});

test('outstanding argument bytes are bounded by --max-message-bytes', async () => {
  const { result, calls } = await runProgram(
    `tools.hang("a".repeat(2500));
     return await tools.hang("b".repeat(2500)).then(() => "resolved", (e) => e.constructor.name + ": " + e.message)`,
    { bindings: TOOLS, reply: answer, maxMessageBytes: 4096 },
  );
  assert.equal(result.value, 'RangeError: tools.hang: outstanding binding arguments would exceed 4096 bytes');
  assert.equal(calls.length, 1);
});

test('binding calls after the result are dropped silently', async () => {
  const { after, calls } = await runProgram('setTimeout(() => { tools.search("late") }, 30); return 1', {
    bindings: TOOLS,
    reply: answer,
    settleMs: 300,
  });
  assert.deepEqual(after, []);
  assert.equal(calls.length, 0);
});

test('revoke rejects open calls, silences output and is answered by revoked', async () => {
  const { result, frames } = await runProgram(
    `inspect("before");
     try { await tools.hang() } catch (e) { inspect("caught " + e.name) } finally { process.stdout.write("finally") }
     return 1`,
    {
      bindings: TOOLS,
      reply: (frame, session) => {
        session.send({ type: 'revoke', run: 1 });
        return null;
      },
    },
  );
  assert.deepEqual(result, { type: 'revoked', run: 1 });
  assert.deepEqual(
    frames.map((frame) => frame.type),
    ['hello', 'text', 'call', 'revoked'],
  );
});
