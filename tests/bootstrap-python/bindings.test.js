// Binding namespaces of the Python child: coroutine methods, argument shapes, error classes,
// limits, concurrency and revoke.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ChildSession, COMMAND, runProgram } from './python-child.js';

const TOOLS = [{ global: 'tools', functions: ['echo', 'fail', 'slow'] }];
const echo = (call) => (call.name === 'fail' ? { ok: false, message: 'nope' } : call.name === 'slow' ? null : { ok: true, value: call.args });

test('methods are coroutine functions; one positional value, keywords or nothing', async () => {
  const { result, calls } = await runProgram([
    'import inspect as std',
    'return [std.iscoroutinefunction(tools.echo), await tools.echo({"a": 1}), await tools.echo(q="x", n=2), await tools.echo(), await tools.echo(None)]',
  ].join('\n'), { bindings: TOOLS, reply: echo });
  assert.deepEqual(result.value, [true, [{ a: 1 }], [{ q: 'x', n: 2 }], [], [null]]);
  assert.deepEqual(calls.map((c) => [c.call, c.global, c.name]), [[1, 'tools', 'echo'], [2, 'tools', 'echo'], [3, 'tools', 'echo'], [4, 'tools', 'echo']]);
});

test('big int arguments keep every digit on the wire', async () => {
  const { calls } = await runProgram('await tools.echo(n=2 ** 100)', { bindings: TOOLS, reply: echo });
  assert.equal(calls[0].raw, `{"type":"call","run":1,"call":1,"global":"tools","name":"echo","args":[{"n":${2n ** 100n}}]}`);
});

test('a rejection raises the namespace error class, an Exception subclass, with member', async () => {
  const { result } = await runProgram([
    'try:\n    await tools.fail(x=1)\nexcept ToolCallError as e:\n    return [type(e).__name__, str(e), e.member, issubclass(ToolCallError, Exception)]',
  ].join('\n'), { bindings: TOOLS, reply: echo });
  assert.deepEqual(result.value, ['ToolCallError', 'nope', 'fail', true]);
});

test('a declared error class is a global of its own', async () => {
  const { result } = await runProgram('try:\n    await db.q()\nexcept DbError as e:\n    return [str(e), e.member]',
    { bindings: [{ global: 'db', functions: ['q'], errorClass: 'DbError' }], reply: () => ({ ok: false, message: 'denied' }) });
  assert.deepEqual(result.value, ['denied', 'q']);
});

test('an uncaught rejection is an exception whose traceback ends at the program\'s await', async () => {
  const { result } = await runProgram('await tools.fail()', { bindings: TOOLS, reply: echo, cwd: '/tmp' });
  assert.equal(result.error.message, 'Traceback (most recent call last):\n  File "/tmp/[program]", line 1, in __dsh_main__\n    await tools.fail()\nToolCallError: nope');
});

for (const [program, message] of [
  ['await tools.echo(1, 2)', 'TypeError: tools.echo takes one JSON argument or keyword arguments, not both or more'],
  ['await tools.echo({}, a=1)', 'TypeError: tools.echo takes one JSON argument or keyword arguments, not both or more'],
  ['await tools.echo(t=(1,))', 'TypeError: tools.echo: arguments are not lossless JSON: args[0].t is a tuple (use a list)'],
  ['await tools.echo(float("nan"))', 'TypeError: tools.echo: arguments are not lossless JSON: args[0] is nan'],
]) {
  test(`refused before sending: ${message}`, async () => {
    const { result, calls } = await runProgram(program, { bindings: TOOLS, reply: echo });
    assert.match(result.error.message, new RegExp(`${message.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}$`));
    assert.equal(calls.length, 0);
  });
}

test('calls run concurrently: all are sent before any is answered', async () => {
  const session = new ChildSession({ command: COMMAND });
  try {
    await session.waitFor((f) => f.type === 'hello');
    session.send({ type: 'run', run: 1, format: 'async-function', cwd: '/', bindings: TOOLS,
      program: 'import asyncio\nreturn await asyncio.gather(*(tools.slow(i=i) for i in range(5)))' });
    await session.waitFor(() => session.frames.filter((f) => f.type === 'call').length === 5);
    for (const call of session.frames.filter((f) => f.type === 'call').reverse()) {
      session.send({ type: 'reply', call: call.call, ok: true, value: call.args[0].i * 10 });
    }
    const result = await session.waitFor((f) => f.type === 'result');
    assert.deepEqual(result.value, [0, 10, 20, 30, 40]);
  } finally {
    await session.kill();
  }
});

test('calls beyond maxPendingCalls raise inside the program and are not sent', async () => {
  const { result, calls } = await runProgram([
    'import asyncio',
    'async def one(i):',
    '    try:',
    '        return await tools.slow(i=i)',
    '    except RuntimeError as e:',
    '        return str(e)',
    'tasks = [asyncio.create_task(one(i)) for i in range(3)]',
    'await asyncio.sleep(0.2)',
    'return tasks[2].result()',
  ].join('\n'), { bindings: TOOLS, reply: echo, maxPendingCalls: 2 });
  assert.equal(result.value, 'tools.slow: too many pending binding calls (limit 2)');
  assert.equal(calls.length, 2);
});

test('outstanding argument bytes are bounded by maxMessageBytes', async () => {
  const { result, calls } = await runProgram([
    'import asyncio',
    'first = asyncio.create_task(tools.slow("x" * 3000))',
    'await asyncio.sleep(0.1)',
    'try:\n    await tools.slow("y" * 3000)\nexcept RuntimeError as e:\n    return str(e)',
  ].join('\n'), { bindings: TOOLS, reply: echo, maxMessageBytes: 4096 });
  assert.equal(result.value, 'tools.slow: outstanding binding arguments would exceed 4096 bytes');
  assert.equal(calls.length, 1);
});

test('a call whose frame would exceed the message limit raises', async () => {
  const { result } = await runProgram('try:\n    await tools.echo("z" * 4090)\nexcept RuntimeError as e:\n    return str(e)',
    { bindings: TOOLS, reply: echo, maxMessageBytes: 4096 });
  assert.equal(result.value, 'tools.echo: call message exceeds 4096 bytes');
});

test('replies for unknown calls are ignored', async () => {
  const { result } = await runProgram('return await tools.echo(1)', {
    bindings: TOOLS,
    reply: (call, session) => {
      session.send({ type: 'reply', call: 99, ok: true, value: 'stray' });
      return { ok: true, value: 'real' };
    },
  });
  assert.equal(result.value, 'real');
});

test('revoke rejects open calls with the error class, drops output and answers revoked', async () => {
  const session = new ChildSession({ command: COMMAND });
  try {
    await session.waitFor((f) => f.type === 'hello');
    session.send({ type: 'run', run: 1, format: 'async-function', cwd: '/', bindings: TOOLS,
      program: 'try:\n    await tools.slow()\nexcept ToolCallError as e:\n    print("caught", e)\n    return str(e)' });
    await session.waitFor((f) => f.type === 'call');
    session.send({ type: 'revoke', run: 1 });
    const terminal = await session.waitFor((f) => f.type === 'revoked' || f.type === 'result');
    assert.deepEqual({ ...terminal }, { type: 'revoked', run: 1 });
    assert.equal(session.frames.some((f) => f.type === 'text'), false);
  } finally {
    await session.kill();
  }
});

const LIMIT = 'nests arrays and objects deeper than 500 levels (the limit for values)';

test('each argument may nest 500 levels; a deeper one rejects inside the program and sends no call', async () => {
  const one = () => ({ ok: true, value: 1 });
  const { result, calls } = await runProgram([
    'import sys',
    'sys.setrecursionlimit(80)',
    'a = []',
    'for _ in range(499):',
    '    a = [a]',
    'sent = await tools.echo(a)',
    'try:',
    '    await tools.echo([a])',
    'except TypeError as error:',
    '    return [sent, str(error), sys.getrecursionlimit()]',
  ].join('\n'), { bindings: TOOLS, reply: one });
  assert.deepEqual(result.value, [1, `tools.echo: arguments are not lossless JSON: args[0] ${LIMIT}`, 80]);
  assert.equal(calls.length, 1, 'the deeper argument sends no call');
});

