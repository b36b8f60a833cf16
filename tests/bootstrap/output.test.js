// Captured output: inspect() rendering, the native console, raw stream writes, ordering,
// synchronous delivery, frame splitting and silence after the result.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ChildSession, runProgram } from './fake-host.js';

async function printed(program, options) {
  const { text, result, violations } = await runProgram(program, options);
  assert.equal(result.ok, true, JSON.stringify(result));
  assert.deepEqual(violations, []);
  return text;
}

test('inspect prints strings raw, other values via util.inspect, joined by spaces', async () => {
  assert.equal(await printed('inspect("plain", 42, "two words", ["quoted"], null)'), "plain 42 two words [ 'quoted' ] null\n");
});

test('each inspect call is one text frame ending in a newline', async () => {
  const { frames } = await runProgram('inspect("a"); inspect(); inspect({ b: 1 })');
  assert.deepEqual(
    frames.filter((frame) => frame.type === 'text').map((frame) => frame.text),
    ['a\n', '\n', '{ b: 1 }\n'],
  );
});

test('inspect has no depth limit', async () => {
  const text = await printed('let v: any = "bottom"; for (let i = 0; i < 12; i++) v = { v }; inspect(v)');
  assert.match(text, /'bottom'/);
  assert.doesNotMatch(text, /\[Object\]/);
});

test('inspect has no array-length or string-length limit', async () => {
  const text = await printed('inspect(Array.from({ length: 300 }, (_, i) => i), { s: "y".repeat(20000) })');
  assert.match(text, /299/);
  assert.doesNotMatch(text, /more item/);
  assert.ok(text.includes(`'${'y'.repeat(20000)}'`));
  assert.doesNotMatch(text, /more character/);
});

test('inspect shows undefined properties, circular references and Errors', async () => {
  const text = await printed(`
    const o: any = { gone: undefined }; o.self = o;
    inspect(o, new Error("shown error"));`);
  assert.match(text, /^<ref \*1> \{ gone: undefined, self: \[Circular \*1\] \} Error: shown error\n {4}at /);
});

test('if formatting an argument throws, earlier arguments are still printed', async () => {
  const { text, result } = await runProgram(`
    const bad = { [Symbol.for("nodejs.util.inspect.custom")]() { throw new Error("cannot format") } };
    inspect("before", { n: 1 }, bad, "after");`);
  assert.equal(text, 'before { n: 1 }\n');
  assert.match(result.error.message, /^Error: cannot format/);
});

test('the native console is captured in order with inspect output', async () => {
  const text = await printed(`
    inspect("i1");
    console.log("log %s %d", "x", 5);
    console.error("error");
    console.warn("warn");
    console.info("info");
    console.debug("debug");
    inspect("i2");
    console.group("group");
    console.log("indented");
    console.groupEnd();
    console.count(); console.count();
    console.assert(false, "asserted");
    console.dir({ d: { e: { f: { g: 1 } } } }, { depth: 0 });
    console.table([{ a: 1 }]);
    console.time("t"); console.timeEnd("t");
    console.trace("traced");
    inspect("i3");`);
  const expectedPrefix = [
    'i1',
    'log x 5',
    'error',
    'warn',
    'info',
    'debug',
    'i2',
    'group',
    '  indented',
    'default: 1',
    'default: 2',
    'Assertion failed: asserted',
    '{ d: [Object] }',
  ].join('\n');
  assert.ok(text.startsWith(`${expectedPrefix}\n`), text);
  assert.match(text, /│ \(index\) │ a │/);
  assert.match(text, /\nt: [\d.]+ms\n/);
  assert.match(text, /\nTrace: traced\n {4}at /);
  assert.ok(text.endsWith('i3\n'));
});

test('raw stdout/stderr writes keep their exact text', async () => {
  const { frames } = await runProgram('process.stdout.write("no newline"); process.stderr.write("err-raw"); process.stdout.write("");');
  assert.deepEqual(
    frames.filter((frame) => frame.type === 'text').map((frame) => frame.text),
    ['no newline', 'err-raw'],
  );
});

test('multi-byte text survives, also when a character is split across Buffer writes', async () => {
  const text = await printed(`
    inspect("日本語 🎉 é");
    const bytes = Buffer.from("x🎉y");
    process.stdout.write(bytes.subarray(0, 3));
    process.stdout.write(bytes.subarray(3));
    process.stdout.write("\\n");`);
  assert.equal(text, '日本語 🎉 é\nx🎉y\n');
});

test('output larger than one control message is split into frames within the limit', async () => {
  const { frames, violations, result } = await runProgram('inspect("é🎉\\"\\u0001".repeat(3000)); return 1', { maxMessageBytes: 1024 });
  const texts = frames.filter((frame) => frame.type === 'text');
  assert.equal(result.value, 1);
  assert.deepEqual(violations, []);
  assert.ok(texts.length > 10);
  assert.ok(texts.every((frame) => frame.bytes <= 1024));
  assert.equal(texts.map((frame) => frame.text).join(''), `${'é🎉"\u0001'.repeat(3000)}\n`);
});

test('output printed before a synchronous hot loop reaches the host', async () => {
  const session = new ChildSession();
  await session.waitFor((frame) => frame.type === 'hello');
  session.send({ type: 'run', run: 1, format: 'async-function', program: 'inspect("x"); for (;;) {}', cwd: '/', bindings: [] });
  const frame = await session.waitFor((f) => f.type === 'text', { timeoutMs: 5000 });
  assert.deepEqual(frame, { type: 'text', run: 1, text: 'x\n' });
  await session.kill();
});

test('output waits for a slow host instead of being lost (non-blocking fd 3)', async () => {
  const session = new ChildSession({ maxMessageBytes: 65536 });
  await session.waitFor((frame) => frame.type === 'hello');
  session.child.stdio[3].pause();
  session.send({ type: 'run', run: 1, format: 'async-function', program: 'for (let i = 0; i < 2000; i++) inspect(String(i).padEnd(1000, ".")); return "done"', cwd: '/', bindings: [] });
  await new Promise((resolve) => setTimeout(resolve, 300));
  session.child.stdio[3].resume();
  const result = await session.waitFor((frame) => frame.type === 'result');
  assert.equal(result.value, 'done');
  const texts = session.frames.filter((frame) => frame.type === 'text');
  assert.equal(texts.length, 2000);
  assert.ok(texts.every((frame, i) => frame.text === `${String(i).padEnd(1000, '.')}\n`));
  await session.kill();
});

test('output from callbacks after the result is dropped', async () => {
  const { after, text } = await runProgram(
    'inspect("in time"); setTimeout(() => { inspect("late"); console.log("late log"); process.stdout.write("late raw"); }, 30); return 1',
    { settleMs: 300 },
  );
  assert.equal(text, 'in time\n');
  assert.deepEqual(after, []);
});

test("program warnings print; the runtime's own experimental warnings do not", async () => {
  const text = await printed(`
    const m = await import("node:module");
    m.stripTypeScriptTypes("let a: number = 1");
    process.emitWarning("program warning");
    await new Promise((r) => setTimeout(r, 20));`);
  assert.match(text, /Warning: program warning/);
  assert.doesNotMatch(text, /ExperimentalWarning/);
});

test('the vm-modules experimental warning stays out of the output under --experimental-vm-modules', async () => {
  const { text, result, session } = await runProgram(
    `const vm = await import("node:vm");
     const mod = new vm.SourceTextModule("export default 7");
     await mod.link(() => {}); await mod.evaluate();
     await new Promise((r) => setTimeout(r, 20));
     return mod.namespace.default`,
    { nodeArgs: ['--experimental-vm-modules'] },
  );
  assert.equal(result.value, 7);
  assert.equal(text, '');
  assert.equal(session.stderr, '');
});
