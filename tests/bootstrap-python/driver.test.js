// The Python child's driver (bootstrap-python/dsh_ptc_child/driver.py): a program runs without
// asyncio until something imports it, and from that import on it runs in a real asyncio Task
// as if it always had.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ChildSession, COMMAND, DEFAULT_ENV, runProgram, valueOf } from './python-child.js';

const TOOLS = [{ global: 'tools', functions: ['echo', 'fail'] }];
const echo = (call) => (call.name === 'fail' ? { ok: false, message: 'nope' } : { ok: true, value: call.args });

test('a program that does not import asyncio runs without it', async () => {
  assert.deepEqual(await valueOf('import sys\nreturn "asyncio" in sys.modules'), false);
});

test('binding calls before asyncio is imported: values and rejections', async () => {
  const { result } = await runProgram([
    'import sys',
    'a = await tools.echo(1)',
    'try:',
    '    await tools.fail()',
    'except ToolCallError as e:',
    '    b = str(e)',
    'return [a, b, "asyncio" in sys.modules]',
  ].join('\n'), { bindings: TOOLS, reply: echo });
  assert.deepEqual(result.value, [[1], 'nope', false]);
});

test('the step that imports asyncio already runs in a Task on a running loop', async () => {
  assert.deepEqual(await valueOf([
    'first = await tools.echo(1)',
    'import asyncio',
    'task, loop = asyncio.current_task(), asyncio.get_running_loop()',
    'await asyncio.sleep(0)',
    'later = await asyncio.gather(tools.echo(2), tools.echo(3))',
    'async with asyncio.timeout(5):',
    '    await tools.echo(4)',
    'return [first, later, task is asyncio.current_task(), loop is asyncio.get_running_loop(), task is not None]',
  ].join('\n'), { bindings: TOOLS, reply: echo }), [[1], [[2], [3]], true, true, true]);
});

test('a call still open when another thread imports asyncio is answered inside the Task', async () => {
  // The program waits for tools.slow without asyncio; a thread imports it and says so; a frame
  // that answers nothing wakes the driver, which hands the waiting program to a Task; only then
  // comes the reply.
  const session = new ChildSession({ command: COMMAND });
  try {
    await session.waitFor((f) => f.type === 'hello');
    session.send({ type: 'run', run: 1, format: 'async-function', cwd: '/', bindings: [{ global: 'tools', functions: ['slow'] }],
      program: [
        'import sys, threading',
        'threading.Thread(target=lambda: (__import__("asyncio"), print("imported", flush=True))).start()',
        'value = await tools.slow()',
        'import asyncio',
        'return [value, asyncio.current_task() is not None]',
      ].join('\n') });
    const call = await session.waitFor((f) => f.type === 'call');
    await session.waitFor((f) => f.type === 'text' && f.text === 'imported');
    session.send({ type: 'reply', call: 999, ok: true, value: 0 });
    session.send({ type: 'reply', call: call.call, ok: true, value: 'late' });
    const result = await session.waitFor((f) => f.type === 'result');
    assert.deepEqual(result.value, ['late', true]);
  } finally {
    await session.kill();
  }
});

test('asyncio imported by another thread: the rest of the program runs in a Task', async () => {
  assert.deepEqual(await valueOf([
    'import threading, types',
    'thread = threading.Thread(target=lambda: __import__("asyncio"))',
    'thread.start()',
    'thread.join()',
    '@types.coroutine',
    'def bare():',
    '    yield',
    'await bare()',
    'import asyncio',
    'return asyncio.current_task() is not None',
  ].join('\n')), true);
});

for (const asyncio of [false, true]) {
  test(`an awaitable yielding what no Task accepts raises as in a Task (asyncio ${asyncio ? 'imported' : 'not imported'})`, async () => {
    assert.deepEqual(await valueOf([
      ...(asyncio ? ['import asyncio'] : []),
      'import types',
      '@types.coroutine',
      'def odd():',
      '    yield 5',
      '@types.coroutine',
      'def bare():',
      '    yield',
      'await bare()',
      'try:',
      '    await odd()',
      'except RuntimeError as e:',
      '    return str(e)',
    ].join('\n')), 'Task got bad yield: 5');
  });
}

// What the child does not load at start: a program that needs none of these finds none of them.
test('a trivial program runs with none of the heavy standard modules loaded', async () => {
  assert.deepEqual(await valueOf([
    'import sys',
    'heavy = ("asyncio", "json", "re", "enum", "traceback", "linecache", "tempfile", "threading", "ast")',
    'return [name for name in heavy if name in sys.modules]',
  ].join('\n')), []);
});

test('source lines appear in warnings and in tracebacks the program prints, though linecache loads late', async () => {
  const { result, text } = await runProgram([
    'import traceback, warnings',
    'warnings.warn("careful")',
    'try:',
    '    1 / 0',
    'except ZeroDivisionError:',
    '    traceback.print_exc()',
    'return 1',
  ].join('\n'), { cwd: '/tmp' });
  assert.equal(result.value, 1);
  assert.match(text, /\/tmp\/\[program\]:2: UserWarning: careful\n {2}warnings\.warn\("careful"\)\n/);
  assert.match(text, /File "\/tmp\/\[program\]", line 4, in __dsh_main__\n {4}1 \/ 0\n/);
});

test('a module made by hand from a found spec does not count as the import', async () => {
  // tempfile's TMPDIR is set on the module the import makes, not on a private copy.
  assert.deepEqual(await valueOf([
    'import importlib.util',
    'spec = importlib.util.find_spec("tempfile")',
    'private = importlib.util.module_from_spec(spec)',
    'spec.loader.exec_module(private)',
    'import tempfile',
    'return [private is tempfile, tempfile.tempdir]',
  ].join('\n')), [false, DEFAULT_ENV.TMPDIR]);
});

test('warnings show as python3 -W default shows them: ResourceWarning too, once per place', async () => {
  // The filter is set on _warnings' list before the warnings module is loaded (child_main.py).
  const { result, text } = await runProgram([
    'import gc',
    'for _ in range(2):',
    '    open("/dev/null")',
    '    gc.collect()',
    'return 1',
  ].join('\n'), { cwd: '/tmp' });
  assert.equal(result.value, 1);
  assert.equal(text.match(/ResourceWarning: unclosed file/g)?.length, 1, text);
});
