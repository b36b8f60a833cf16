// The experimental Python runtime through the real `dsh`: values, output, exceptions.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { runPython, text } from './python-harness.js';

const ok = async (program, opts) => {
  const r = await runPython(program, opts);
  assert.equal(r.result.ok, true, JSON.stringify(r.result) + r.stderr);
  return r;
};
const fails = async (program, kind, opts) => {
  const r = await runPython(program, opts);
  assert.equal(r.result.ok, false, JSON.stringify(r.result));
  assert.equal(r.result.error.kind, kind, JSON.stringify(r.result));
  assert.equal(r.status, 1);
  return r;
};

for (const [program, value] of [
  ['return 1', 1],
  ['return "é✓🎉"', 'é✓🎉'],
  ['return {"a": [1, 2.5, None, True], "b": {}}', { a: [1, 2.5, null, true], b: {} }],
  ['import asyncio\nawait asyncio.sleep(0.01)\nreturn [x * x for x in range(4)]', [0, 1, 4, 9]],
  ['def f(n):\n    return 1 if n < 2 else n * f(n - 1)\nreturn f(10)', 3628800],
]) {
  test(`value: ${program.split('\n').at(-1)}`, async () => {
    assert.deepEqual((await ok(program)).result.value, value);
  });
}

test('big ints keep every digit in the result JSON', async () => {
  const { stdout } = await ok('return [2 ** 100, -(3 ** 60)]');
  assert.ok(stdout.includes(`"value":[${2n ** 100n},${-(3n ** 60n)}]`), stdout);
});

test('a program without return has no value', async () => {
  const { result } = await ok('x = 1');
  assert.equal('value' in result, false);
});

// The nesting limit of every runtime (tests/conformance/nesting.test.js): 500 levels of lists and dicts.
const LIMIT_MESSAGE = 'nests arrays and objects deeper than 500 levels (the limit for values)';
const nested = (levels) => `v = 1\nfor i in range(${levels}):\n    v = {"k": v} if i % 2 else [v]\n`;
const depthOf = (value) => (value !== null && typeof value === 'object' ? 1 + depthOf(Array.isArray(value) ? value[0] : value.k) : 0);

test('a completion nested 500 levels deep is returned whole; 501 is invalid-output naming the limit', async () => {
  assert.equal(depthOf((await ok(`${nested(500)}return v`)).result.value), 500);
  const { result } = await fails(`${nested(501)}return v`, 'invalid-output');
  assert.equal(result.error.message, `result ${LIMIT_MESSAGE}`);
});

test('a binding argument deeper than the limit rejects the call inside the program', async () => {
  const { result } = await ok(`${nested(500)}back = await tools.echo(v)\ntry:\n    await tools.echo([v])\nexcept TypeError as error:\n    return [len(str(back)) > 0, str(error)]`);
  assert.deepEqual(result.value, [true, `tools.echo: arguments are not lossless JSON: args[0] ${LIMIT_MESSAGE}`]);
});

for (const [program, message] of [
  ['return float("nan")', 'result is nan'],
  ['return [float("inf")]', 'result[0] is inf'],
  ['return (1, 2)', 'result is a tuple (use a list)'],
  ['return {"s": {1, 2}}', 'result.s is a set (use a list)'],
  ['return b"bytes"', 'result is bytes (decode them to str)'],
  ['return {"o": object()}', 'result.o is an instance of object (only dict, list, str, int, float, bool and None are JSON)'],
  ['return {2: "x"}', 'result has a non-string key 2'],
]) {
  test(`invalid-output: ${message}`, async () => {
    const { result } = await fails(program, 'invalid-output');
    assert.equal(result.error.message, message);
  });
}

test('print, stderr, native fd writes and a child process keep their order', async () => {
  const { result } = await ok([
    'import os, sys, subprocess',
    'print("one")',
    'os.write(1, b"two\\n")',
    'print("three", file=sys.stderr)',
    'os.write(2, b"four\\n")',
    'subprocess.run(["/bin/sh", "-c", "echo five; echo six >&2"])',
    'sys.stdout.write("seven\\n")',
  ].join('\n'));
  assert.equal(text(result), 'one\ntwo\nthree\nfour\nfive\nsix\nseven\n');
});

test('inspect renders strings raw and other values with repr', async () => {
  const { result } = await ok('inspect("a", {"k": (1, None)}, [b"x"])');
  assert.equal(text(result), "a {'k': (1, None)} [b'x']\n");
});

test('output-limit keeps the fitting text prefix', async () => {
  const { result } = await fails('print("abcdefghij")\nprint("klmnop")', 'output-limit', { runtime: { maxOutputBytes: 15 } });
  assert.equal(text(result), 'abcdefghij\nklmn');
});

test('output-limit counts the completion value', async () => {
  const { result } = await fails('print("12345")\nreturn "x" * 20', 'output-limit', { runtime: { maxOutputBytes: 16 } });
  assert.equal(text(result), '12345\n');
});

test('output within the budget exactly is fine', async () => {
  assert.equal(text((await ok('print("abc")', { runtime: { maxOutputBytes: 4 } })).result), 'abc\n');
});

test('an exception is the traceback of the program frames only', async () => {
  const { result, ws } = await fails('def inner():\n    raise ValueError("deep")\ninner()', 'exception');
  assert.equal(result.error.message, [
    'Traceback (most recent call last):',
    `  File "${ws}/[program]", line 3, in __dsh_main__`,
    '    inner()',
    `  File "${ws}/[program]", line 2, in inner`,
    '    raise ValueError("deep")',
    'ValueError: deep',
  ].join('\n'));
});

test('a syntax error is an exception with Python\'s message', async () => {
  const { result, ws } = await fails('x = = 1', 'exception');
  assert.equal(result.error.message, `  File "${ws}/[program]", line 1\n    x = = 1\n        ^\nSyntaxError: invalid syntax`);
});

test('output before an exception is kept', async () => {
  const { result } = await fails('print("progress")\nraise RuntimeError("then failed")', 'exception');
  assert.equal(text(result), 'progress\n');
  assert.match(result.error.message, /RuntimeError: then failed$/);
});

test('sys.exit ends the run as worker-exit with the exit code', async () => {
  const { result } = await fails('import sys\nsys.exit(7)', 'worker-exit');
  assert.match(result.error.message, /exit code 7/);
});

test('a top-level yield is a syntax error', async () => {
  const { result } = await fails('yield 1', 'exception');
  assert.match(result.error.message, /SyntaxError: 'yield' outside function$/);
});
