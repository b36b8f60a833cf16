// "Failures": program errors are results of kind exception, never host errors.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { runProgram, text } from './harness.js';

const fails = async (program, kind = 'exception') => {
  const { result, status } = await runProgram(program);
  assert.equal(result.ok, false, JSON.stringify(result));
  assert.equal(result.error.kind, kind, JSON.stringify(result));
  assert.equal(status, 1);
  return result;
};

test('a thrown Error reports its name and message', async () => {
  const r = await fails('throw new RangeError("out of range")');
  assert.match(r.error.message, /^RangeError: out of range/);
});

test('the stack names the program, not bootstrap internals', async () => {
  const r = await fails('function inner() { throw new Error("deep") }\ninner()');
  assert.match(r.error.message, /inner/);
  assert.doesNotMatch(r.error.message, /bootstrap\//);
});

test('a thrown string is reported', async () => {
  const r = await fails('throw "boom"');
  assert.match(r.error.message, /boom/);
});

test('a thrown plain object is rendered', async () => {
  const r = await fails('throw { code: 42 }');
  assert.match(r.error.message, /code: 42/);
});

// bootstrap/README.md: "values whose rendering throws read `exception value could not be rendered`".
test('an unrenderable thrown value gives the documented message', async () => {
  const r = await fails('throw new Proxy({}, { get() { throw new Error("trap") }, getPrototypeOf() { throw new Error("trap") }, ownKeys() { throw new Error("trap") } })');
  assert.equal(r.error.message, 'exception value could not be rendered');
  // Control: the same object without traps renders, so the case above is the rendering failure.
  const plain = await fails('throw new Proxy({}, {})');
  assert.equal(plain.error.message, 'Uncaught {}');
});

test('a rejected promise completion is an exception', async () => {
  const r = await fails('return Promise.reject(new Error("rejected"))');
  assert.match(r.error.message, /rejected/);
});

test('an unhandled rejection during the run fails it', async () => {
  const r = await fails('Promise.reject(new Error("unhandled")); await new Promise(r => setTimeout(r, 200)); return 1');
  assert.match(r.error.message, /unhandled/);
});

test('an uncaught exception in a callback fails the run', async () => {
  const r = await fails('setTimeout(() => { throw new Error("in timer") }, 10); await new Promise(r => setTimeout(r, 300))');
  assert.match(r.error.message, /in timer/);
});

test('non-erasable TypeScript (enum) is an exception', async () => {
  const r = await fails('enum Color { Red }\nreturn Color.Red');
  assert.ok(r.error.message.length > 0);
});

test('non-erasable TypeScript (parameter properties) is an exception', async () => {
  await fails('class A { constructor(private x: number) {} }\nreturn 1');
});

test('a syntax error is an exception with the parser message', async () => {
  const r = await fails('let = = 3');
  assert.match(r.error.message, /SyntaxError|Unexpected|Expected/i);
});

test('output before an exception is kept', async () => {
  const r = await fails('inspect("progress"); throw new Error("then failed")');
  assert.equal(text(r), 'progress\n');
});

test('process.exit ends the run as worker-exit with the exit code', async () => {
  const r = await fails('process.exit(7)', 'worker-exit');
  assert.match(r.error.message, /exit code 7/);
});

// The exit status must survive the race between the program's exit and the host's terminate
// request (a supervisor that exits with that request unread once lost it: "signal KILL").
test('the exit code is reported on every run, however the exit races the cleanup', async () => {
  const { Serve } = await import('./harness.js');
  const s = new Serve();
  try {
    const results = await Promise.all(Array.from({ length: 20 }, (_, i) => s.run(`x${i}`, `process.exit(${(i % 5) + 3})`)));
    results.forEach((r, i) => assert.match(r.error?.message ?? '', new RegExp(`exit code ${(i % 5) + 3}\\)`), JSON.stringify(r)));
  } finally {
    await s.close();
  }
});

test('the heap limit ends a runaway allocation as worker-exit', async () => {
  const { result } = await runProgram('const a = []; for (;;) a.push(new Array(1e6).fill(1.5))', {
    runtime: { maxOldGenerationSizeMb: 64, timeoutMs: 60000 },
  });
  assert.equal(result.ok, false);
  assert.equal(result.error.kind, 'worker-exit', JSON.stringify(result.error));
  assert.match(result.error.message, /heap|signal|exit code/i);
});
