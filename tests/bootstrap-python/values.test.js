// Program format and lossless values of the Python child runtime, through the fake host.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { runProgram, valueOf } from './python-child.js';

test('hello announces protocol revision 1 and the Python version', async () => {
  const { hello } = await runProgram('return 1');
  assert.equal(hello.protocol, 1);
  assert.match(hello.python, /^3\.\d+\.\d+$/);
});

test('the body of an async function: top-level await and return', async () => {
  assert.equal(await valueOf('import asyncio\nawait asyncio.sleep(0)\nreturn 40 + 2'), 42);
});

test('JSON values round-trip', async () => {
  assert.deepEqual(await valueOf('return {"a": [1, 2.5, "é\\n\\"", None, True, False], "b": {}}'),
    { a: [1, 2.5, 'é\n"', null, true, false], b: {} });
});

test('big ints keep every digit in the result frame', async () => {
  const { result } = await runProgram('return [2 ** 200, -(10 ** 5000)]');
  assert.equal(result.raw, `{"type":"result","run":1,"ok":true,"value":[${2n ** 200n},${-(10n ** 5000n)}]}`);
});

test('floats keep their shortest round-trip text', async () => {
  const { result } = await runProgram('return [1.0, 0.1, 1e300, 5e-324]');
  assert.equal(result.raw, '{"type":"result","run":1,"ok":true,"value":[1.0,0.1,1e+300,5e-324]}');
});

test('None and a body without return have no value', async () => {
  for (const program of ['return None', 'x = 1']) {
    const { result } = await runProgram(program);
    assert.equal(result.raw, '{"type":"result","run":1,"ok":true}');
  }
});

for (const [program, message] of [
  ['return float("nan")', 'result is nan'],
  ['return [1, float("inf")]', 'result[1] is inf'],
  ['return {"a": -float("inf")}', 'result.a is -inf'],
  ['return -0.0', 'result is -0.0'],
  ['return (1, 2)', 'result is a tuple (use a list)'],
  ['return {"s": {1}}', 'result.s is a set (use a list)'],
  ['return {"f": frozenset()}', 'result.f is a set (use a list)'],
  ['return b"x"', 'result is bytes (decode them to str)'],
  ['return bytearray(1)', 'result is bytes (decode them to str)'],
  ['return {1: "a"}', 'result has a non-string key 1'],
  ['return {"a b": object()}', 'result["a b"] is an instance of object (only dict, list, str, int, float, bool and None are JSON)'],
  ['class P:\n    pass\nreturn [P()]', 'result[0] is an instance of __dsh_main__.<locals>.P (only dict, list, str, int, float, bool and None are JSON)'],
  ['import collections\nreturn collections.OrderedDict()', 'result is an instance of OrderedDict (only dict, list, str, int, float, bool and None are JSON)'],
  ['return len', 'result is a function or other callable'],
  ['return "\\ud800"', 'result contains a lone surrogate'],
  ['a = []\na.append(a)\nreturn a', 'result[0] is a circular reference'],
  // Far deeper than Python could recurse: still the limit of every runtime, not a RecursionError.
  ['a = []\nfor _ in range(100000):\n    a = [a]\nreturn a', 'result nests arrays and objects deeper than 500 levels (the limit for values)'],
  ['a = []\nfor _ in range(500):\n    a = [a]\nreturn a', 'result nests arrays and objects deeper than 500 levels (the limit for values)'],
]) {
  test(`invalid-output: ${message}`, async () => {
    const { result } = await runProgram(program);
    assert.deepEqual(result, { type: 'result', run: 1, ok: false, error: { kind: 'invalid-output', message } });
  });
}

test('a subclass of a JSON type is not JSON', async () => {
  const { result } = await runProgram('class N(int):\n    pass\nreturn N(3)');
  assert.equal(result.error.kind, 'invalid-output');
  const bools = await valueOf('return [True, 1]');
  assert.deepEqual(bools, [true, 1]);
});

test('a value nested exactly 500 levels deep is returned whole, also under a program\'s low recursion limit', async () => {
  const depthOf = (value) => (Array.isArray(value) ? 1 + depthOf(value[0]) : 0);
  assert.equal(depthOf(await valueOf('a = []\nfor _ in range(499):\n    a = [a]\nreturn a')), 500);
  // [a, 60] nests 500 levels when a nests 499.
  const [value, limit] = await valueOf('import sys\nsys.setrecursionlimit(60)\na = []\nfor _ in range(498):\n    a = [a]\nreturn [a, sys.getrecursionlimit()]');
  assert.equal(depthOf(value), 499);
  assert.equal(limit, 60);
});

test('a shared (not circular) value is fine', async () => {
  assert.deepEqual(await valueOf('a = [1]\nreturn [a, a]'), [[1], [1]]);
});

test('a result larger than one control message is invalid-output naming its size', async () => {
  const { result } = await runProgram('return "x" * 5000', { maxMessageBytes: 4096 });
  assert.deepEqual(result.error, {
    kind: 'invalid-output',
    message: 'result is 5002 bytes of JSON, more than the 4096-byte control message limit',
  });
});

test('multi-line strings keep their text (the body is not re-indented)', async () => {
  assert.equal(await valueOf('s = """a\nb\n  c"""\nreturn s'), 'a\nb\n  c');
});

test('names assigned in the body are locals of __dsh_main__; global reaches module scope', async () => {
  assert.deepEqual(await valueOf('x = 1\ndef f():\n    return x + 1\nglobal g\ng = 5\nreturn [f(), "x" in globals(), g]'), [2, false, 5]);
});

test('__name__ is __main__ and no bootstrap internals are visible', async () => {
  assert.deepEqual(await valueOf('return [__name__, sorted(k for k in globals() if not k.startswith("__"))]'),
    ['__main__', ['Image', 'inspect']]);
});

test('discardCompletion drops the value', async () => {
  const { result } = await runProgram('return {"big": 1}', { discardCompletion: true });
  assert.equal(result.raw, '{"type":"result","run":1,"ok":true}');
});
