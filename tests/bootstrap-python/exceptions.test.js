// Failures of Python programs: tracebacks of the program's frames, syntax errors, sys.exit.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { runProgram } from './python-child.js';

const failure = async (program, options) => {
  const { result, session } = await runProgram(program, options);
  assert.equal(result.ok, false, JSON.stringify(result));
  assert.equal(result.error.kind, 'exception');
  return { message: result.error.message, session };
};

test('a raised exception is the traceback of the program frames only', async () => {
  const { message } = await failure('def inner():\n    raise ValueError("deep")\n\ninner()', { cwd: '/tmp' });
  assert.equal(message, [
    'Traceback (most recent call last):',
    '  File "/tmp/[program]", line 4, in __dsh_main__',
    '    inner()',
    '  File "/tmp/[program]", line 2, in inner',
    '    raise ValueError("deep")',
    'ValueError: deep',
  ].join('\n'));
});

test('library frames below the program stay; chained exceptions keep their cause', async () => {
  const { message } = await failure('import json\ntry:\n    json.loads("{")\nexcept ValueError as e:\n    raise RuntimeError("wrapped") from e');
  assert.match(message, /json\/decoder\.py/);
  assert.match(message, /The above exception was the direct cause of the following exception:/);
  assert.match(message, /RuntimeError: wrapped$/);
  assert.doesNotMatch(message, /bootstrap-python|asyncio\/(events|base_events)\.py/);
});

test('a syntax error reads like Python\'s, pointing into the program', async () => {
  const { message } = await failure('x = 1\ny = = 2', { cwd: '/tmp' });
  assert.equal(message, '  File "/tmp/[program]", line 2\n    y = = 2\n        ^\nSyntaxError: invalid syntax');
});

test('yield at top level is a syntax error, not an async generator', async () => {
  const { message } = await failure('yield 1', { cwd: '/tmp' });
  assert.match(message, /^  File "\/tmp\/\[program\]", line 1\n[\s\S]*SyntaxError: 'yield' outside function$/);
});

test('a null byte in the program is a syntax error', async () => {
  const { message } = await failure('x = 1\u0000');
  assert.match(message, /SyntaxError/);
});

test('a BaseException such as KeyboardInterrupt or CancelledError is an exception result', async () => {
  assert.match((await failure('raise KeyboardInterrupt')).message, /KeyboardInterrupt$/);
  assert.match((await failure('import asyncio\nraise asyncio.CancelledError()')).message, /CancelledError$/);
});

test('an exception whose str() raises still gives a result', async () => {
  const { message } = await failure('class E(Exception):\n    def __str__(self):\n        raise RuntimeError("no")\nraise E()');
  assert.match(message, /E: <exception str\(\) failed>$/);
});

test('an exception group lists its members', async () => {
  const { message } = await failure('raise ExceptionGroup("many", [ValueError("a"), TypeError("b")])');
  assert.match(message, /ExceptionGroup: many \(2 sub-exceptions\)[\s\S]*ValueError: a[\s\S]*TypeError: b/);
});

test('an oversized message is shortened to fit the control message limit', async () => {
  const { result } = await runProgram('raise ValueError("y" * 10000)', { maxMessageBytes: 2048 });
  assert.equal(result.error.kind, 'exception');
  assert.ok(result.raw.length <= 2048);
  assert.match(result.error.message, /\n\.\.\. \[message truncated\]$/);
});

test('output before an exception is kept', async () => {
  const { result, text } = await runProgram('print("progress")\nraise Exception("then failed")');
  assert.equal(result.error.kind, 'exception');
  assert.equal(text, 'progress\n');
});

for (const [program, status, text] of [
  ['import sys\nprint("bye")\nsys.exit(7)', 7, 'bye\n'],
  ['raise SystemExit', 0, ''],
  ['import sys\nsys.exit("fatal")', 1, 'fatal\n'],
]) {
  test(`${program.split('\n').at(-1)} ends the process with status ${status} after its output`, async () => {
    const { ChildSession, COMMAND } = await import('./python-child.js');
    const session = new ChildSession({ command: COMMAND });
    await session.waitFor((f) => f.type === 'hello');
    session.send({ type: 'run', run: 1, format: 'async-function', program, cwd: '/', bindings: [] });
    const exit = await session.exited;
    assert.deepEqual(exit, { code: status, signal: null });
    assert.equal(session.frames.filter((f) => f.type === 'text').map((f) => f.text).join(''), text);
    assert.equal(session.frames.some((f) => f.type === 'result'), false);
  });
}

test('an unsupported program format is an exception naming the format', async () => {
  const { message } = await failure('return 1', { format: 'vm-script' });
  assert.equal(message, 'unsupported program format: vm-script (this runtime runs async-function)');
});
