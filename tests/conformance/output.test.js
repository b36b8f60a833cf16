// Captured output: inspect, the native console, raw stream writes, order and the output budget.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { runProgram, Serve, text } from './harness.js';

const out = async (program, opts) => {
  const { result } = await runProgram(program, opts);
  assert.equal(result.ok, true, JSON.stringify(result));
  return text(result);
};

test('inspect renders strings raw and ends the group with a newline', async () => {
  assert.equal(await out('inspect("a", "b\\nc")'), 'a b\nc\n');
});

test('inspect renders objects without depth limits', async () => {
  const t = await out('inspect({ a: { b: { c: { d: { e: { f: 1 } } } } } })');
  assert.match(t, /f: 1/);
  assert.doesNotMatch(t, /\[Object\]/);
});

test('inspect renders long arrays and strings completely', async () => {
  const t = await out('inspect(Array.from({ length: 300 }, (_, i) => i)); inspect(["x".repeat(20000)])');
  assert.match(t, /299/);
  assert.doesNotMatch(t, /more items/);
  assert.ok(t.includes('x'.repeat(20000)));
});

test('inspect shows undefined properties, errors and cycles', async () => {
  const t = await out('const a: any = { u: undefined }; a.self = a; inspect(a, new TypeError("bad"))');
  assert.match(t, /u: undefined/);
  assert.match(t, /\[Circular \*1\]/);
  assert.match(t, /TypeError: bad/);
});

test('a throwing formatter keeps earlier arguments visible', async () => {
  const { result } = await runProgram(
    'const evil = { [Symbol.for("nodejs.util.inspect.custom")]() { throw new Error("fmt") } }; inspect("before", evil)');
  assert.equal(result.ok, false);
  assert.equal(result.error.kind, 'exception');
  assert.match(text(result), /before/);
});

test('console methods go to the captured output in order with inspect', async () => {
  const t = await out('console.log("one"); inspect("two"); console.error("three"); console.warn("four"); console.info("five"); console.debug("six")');
  assert.equal(t, 'one\ntwo\nthree\nfour\nfive\nsix\n');
});

test('console.table, dir, group, count and assert are the native console', async () => {
  const t = await out('console.table([{ a: 1 }]); console.group("g"); console.log("in"); console.groupEnd(); console.count(); console.count(); console.assert(false, "nope"); console.dir({ d: 1 })');
  assert.match(t, /┌/);
  assert.match(t, /g\n  in\n/);
  assert.match(t, /default: 2/);
  assert.match(t, /Assertion failed: nope/);
  assert.match(t, /\{ d: 1 \}/);
});

test('raw stdout and stderr writes keep their text', async () => {
  assert.equal(await out('process.stdout.write("no newline"); process.stderr.write("|err|"); process.stdout.write("end\\n")'), 'no newline|err|end\n');
});

test('multi-byte text survives output', async () => {
  assert.equal(await out('inspect("日本語 ✓ 🎉")'), '日本語 ✓ 🎉\n');
});

test('output of a child process reaches the result', async () => {
  const t = await out('const { execFileSync } = await import("node:child_process"); process.stdout.write(execFileSync("/bin/echo", ["from-child"]).toString())');
  assert.equal(t, 'from-child\n');
});

test('native writes to fd 1 by a grandchild are captured', async () => {
  const t = await out('const { spawnSync } = await import("node:child_process"); spawnSync("/bin/sh", ["-c", "echo raw-fd"], { stdio: "inherit" }); await new Promise(r => setTimeout(r, 50))');
  assert.match(t, /raw-fd/);
});

test('output just before a hot loop still reaches the host', async () => {
  const { result } = await runProgram('inspect("before the loop"); for (;;) {}', { runtime: { timeoutMs: 1500 } });
  assert.equal(result.error.kind, 'timeout');
  assert.equal(text(result), 'before the loop\n');
});

test('output-limit keeps the fitting text prefix', async () => {
  const { result, status } = await runProgram('inspect("abcdefghij"); inspect("klmnop")', { runtime: { maxOutputBytes: 15 } });
  assert.equal(result.ok, false);
  assert.equal(result.error.kind, 'output-limit');
  assert.equal(text(result), 'abcdefghij\nklmn');
  assert.equal(status, 1);
});

test('output-limit counts the completion value', async () => {
  const { result } = await runProgram('inspect("12345"); return "x".repeat(20)', { runtime: { maxOutputBytes: 16 } });
  assert.equal(result.error.kind, 'output-limit');
  assert.equal(text(result), '12345\n');
});

test('output-limit keeps an exception message prefix', async () => {
  const { result } = await runProgram('inspect("1234"); throw new Error("y".repeat(100))', { runtime: { maxOutputBytes: 20 } });
  assert.equal(result.error.kind, 'output-limit');
  assert.equal(text(result), '1234\n');
  assert.match(result.error.message, /exception: Error: y+/);
  assert.ok(!result.error.message.includes('y'.repeat(50)));
});

test('output-limit prefix never splits a character', async () => {
  const { result } = await runProgram('inspect("€€€€")', { runtime: { maxOutputBytes: 7 } });
  assert.equal(result.error.kind, 'output-limit');
  assert.equal(text(result), '€€');
});

test('output within the budget exactly is fine', async () => {
  const { result } = await runProgram('inspect("abc")', { runtime: { maxOutputBytes: 4 } });
  assert.equal(result.ok, true, JSON.stringify(result));
  assert.equal(text(result), 'abc\n');
});

// Idle stderr: between evaluations a retained Node process's own stderr (console.error,
// process.stderr.write) feeds only the host's bounded diagnostic tail.
const RETAINED = { executionMode: 'persistent-in-memory' };

test('stderr written while idle reaches the diagnostic of an idle death', async () => {
  const s = new Serve({ runtime: RETAINED });
  const r = await s.run(
    '1',
    'setTimeout(() => { console.error("last words"); process.stderr.write("bye\\n"); process.exit(3) }, 10); 1',
    { stateOwner: 'o' },
  );
  assert.equal(r.ok, true, JSON.stringify(r));
  const log = await s.stderrMatching(/ended while idle/);
  await s.stderrMatching(/bye\n/);
  assert.match(
    log,
    /dsh: \[warn\] retained environment of owner "o" ended while idle \(worker-exit\): the Node process exited \(exit code 3\); stderr: last words\nbye\n/,
  );
  await s.close();
});

test('idle stderr stays out of later results and appears in a later exit diagnostic', async () => {
  const s = new Serve({ runtime: RETAINED, mode: 'workspace-write' });
  const marker = join(s.ws, 'idle-done');
  const r = await s.run(
    '1',
    'var fs = await import("node:fs"); setTimeout(() => { console.error("idle note"); fs.writeFileSync("idle-done", "") }, 10); 1',
    { stateOwner: 'o' },
  );
  assert.equal(r.ok, true, JSON.stringify(r));
  while (!existsSync(marker)) await new Promise((resolve) => setTimeout(resolve, 20)); // barrier: the idle write happened
  const quiet = await s.run('2', 'inspect("run 2"); 2', { stateOwner: 'o' });
  assert.equal(text(quiet), 'run 2\n');
  const exited = await s.run('3', 'process.exit(4)', { stateOwner: 'o' });
  assert.equal(exited.ok, false);
  assert.deepEqual(exited.error, {
    kind: 'worker-exit',
    message: 'the Node process exited before completing (exit code 4); stderr: idle note\n',
  });
  await s.close();
});
