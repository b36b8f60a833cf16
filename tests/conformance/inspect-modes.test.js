// The inspect() rules in every execution mode: strings raw, everything else through util.inspect
// without depth, array-length or string-length limits; undefined properties, Errors and cycles
// visible; earlier arguments kept when formatting throws; one newline per text group while raw
// stream writes keep their text; and the output instruction in every mode's executionInstructions.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { DSH, patchFile, runProgram, tempDir, text } from './harness.js';

const MODES = {
  'per-call': {},
  'vm-script': { executionMode: 'vm-script' },
  'retained vm-script': { executionMode: 'vm-script', scriptPersistence: true },
  'scoped REPL': { executionMode: 'persistent-in-memory' },
  'Node REPL': { executionMode: 'persistent-in-memory', replScoped: false },
};

async function describe(runtime) {
  const ws = tempDir('dsh-ws-');
  const child = spawn(DSH, ['headless', '--patch', patchFile({ ws, runtime })], { stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  child.stdout.on('data', (d) => (stdout += d));
  await new Promise((r) => child.on('close', r));
  return JSON.parse(stdout.trim().split('\n')[0]);
}

for (const [mode, runtime] of Object.entries(MODES)) {
  const out = async (program) => {
    const { result } = await runProgram(program, { runtime });
    assert.equal(result.ok, true, JSON.stringify(result));
    return text(result);
  };

  test(`${mode}: strings raw, values via util.inspect, one newline per group`, async () => {
    assert.equal(await out('inspect("a", "b\\nc", 1, ["q"]); inspect();'), "a b\nc 1 [ 'q' ]\n\n");
  });

  test(`${mode}: no depth, array-length or string-length limits`, async () => {
    const t = await out(`let v: any = "bottom"; for (let i = 0; i < 12; i++) v = { v };
      inspect(v, Array.from({ length: 300 }, (_, i) => i), ["x".repeat(20000)]);`);
    assert.match(t, /'bottom'/);
    assert.doesNotMatch(t, /\[Object\]|more items|more characters/);
    assert.ok(t.includes('x'.repeat(20000)));
    assert.match(t, /299/);
  });

  // Buffers have their own preview limit (buffer.INSPECT_MAX_BYTES); the program's defaults for
  // util.inspect neither bring limits back nor turn off the custom inspection Images rely on.
  test(`${mode}: whole Buffers, and util.inspect defaults set by the program do not apply`, async () => {
    const t = await out(`var util = await import("node:util");
      util.inspect.defaultOptions.depth = 0; util.inspect.defaultOptions.maxArrayLength = 1;
      util.inspect.defaultOptions.customInspect = false;
      inspect(Buffer.alloc(60, 0xab), { a: { b: { c: [1, 2, 3] } } }, { [Symbol.for("nodejs.util.inspect.custom")]: () => "custom" });`);
    assert.equal(t.match(/ab/g).length, 60);
    assert.doesNotMatch(t, /more bytes|more items|\[Object\]/);
    assert.match(t, /c: \[ 1, 2, 3 \]/);
    assert.match(t, /custom\n$/);
  });

  test(`${mode}: undefined properties, Errors and cycles stay visible`, async () => {
    const t = await out('var a: any = { u: undefined }; a.self = a; inspect(a, new TypeError("bad"));');
    assert.match(t, /u: undefined/);
    assert.match(t, /\[Circular \*1\]/);
    assert.match(t, /TypeError: bad/);
  });

  test(`${mode}: a throwing formatter keeps earlier arguments visible`, async () => {
    const { result } = await runProgram(
      'var evil = { [Symbol.for("nodejs.util.inspect.custom")]() { throw new Error("fmt") } }; inspect("before", 2, evil);',
      { runtime });
    assert.equal(result.ok, false);
    assert.equal(text(result), 'before 2\n');
    assert.match(result.error.message, /fmt/);
  });

  test(`${mode}: raw stream writes keep their text`, async () => {
    assert.equal(await out('process.stdout.write("a"); process.stderr.write("b"); inspect("c"); process.stdout.write("d");'), 'abc\nd');
  });

  test(`${mode}: executionInstructions carry the output rule`, async () => {
    const d = await describe(runtime);
    assert.ok(d.executionInstructions.includes('Use inspect(...values) to display output. Do not use console.'), d.executionInstructions);
  });
}

// describe(): the program format and retention of each mode, and the deadline choice.
test('describe reports program format, retention and the timeout descriptor', async () => {
  const expected = {
    'per-call': ['async-function', false],
    'vm-script': ['vm-script', false],
    'retained vm-script': ['vm-script', true],
    'scoped REPL': ['scoped-repl', true],
    'Node REPL': ['repl', true],
  };
  for (const [mode, runtime] of Object.entries(MODES)) {
    const d = await describe(runtime);
    assert.deepEqual([d.programFormat, d.retainsState], expected[mode], mode);
  }
  const d = await describe({ timeoutMs: 5000, maxTimeoutMs: 9000 });
  assert.deepEqual(d.timeout, { defaultMs: 5000, maxMs: 9000 });
});
