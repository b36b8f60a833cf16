// Handshake, control-channel lifetime and incoming-frame enforcement of bootstrap/process.js.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ChildSession, runProgram } from './fake-host.js';

test('hello is the first frame and names protocol 1, the Node version and strippedPrograms', async () => {
  const { frames, hello, result } = await runProgram('return 1');
  assert.equal(frames[0], hello);
  assert.deepEqual(hello, { type: 'hello', protocol: 1, node: 'v24.22.3', strippedPrograms: true });
  assert.deepEqual(result, { type: 'result', run: 1, ok: true, value: 1 });
});

test('a Node without stripTypeScriptTypes still says hello, then exits', async () => {
  const session = new ChildSession({
    nodeArgs: ['--import', 'data:text/javascript,import m from "node:module"; delete m.stripTypeScriptTypes;'],
  });
  const exit = await session.exited;
  assert.deepEqual(session.frames, [{ type: 'hello', protocol: 1, node: 'v24.22.3', strippedPrograms: true }]);
  assert.equal(exit.code, 1);
  assert.match(session.stderr, /lacks module\.stripTypeScriptTypes/);
});

test('the child exits when the host closes the control socket', async () => {
  const session = new ChildSession();
  await session.waitFor((frame) => frame.type === 'hello');
  session.closeControl();
  assert.deepEqual(await session.exited, { code: 0, signal: null });
});

test('the child keeps fd 3 open after its result until the host ends it', async () => {
  const session = new ChildSession();
  await session.waitFor((frame) => frame.type === 'hello');
  session.send({ type: 'run', run: 1, format: 'async-function', program: 'return 2', cwd: '/', discardCompletion: false, bindings: [] });
  await session.waitFor((frame) => frame.type === 'result');
  await new Promise((resolve) => setTimeout(resolve, 150));
  assert.equal(session.exit, undefined, 'still running after the result');
  session.closeControl();
  assert.equal((await session.exited).code, 0);
});

test('an incoming frame over --max-message-bytes ends the child before it runs anything', async () => {
  const session = new ChildSession({ maxMessageBytes: 256 });
  await session.waitFor((frame) => frame.type === 'hello');
  session.send({ type: 'run', run: 1, format: 'async-function', program: `inspect(1); ${' '.repeat(300)}`, cwd: '/', bindings: [] });
  const exit = await session.exited;
  assert.equal(exit.code, 2);
  assert.match(session.stderr, /exceeds 256 bytes/);
  assert.equal(session.frames.length, 1);
});

test('malformed control input is a protocol error in the child', async () => {
  const session = new ChildSession();
  await session.waitFor((frame) => frame.type === 'hello');
  session.sendRaw('{"type": "run", \n');
  assert.equal((await session.exited).code, 2);
  assert.match(session.stderr, /not JSON/);
});

test('unknown frame types get an error reply and the child keeps serving', async () => {
  const { result, frames } = await runProgram('return "still fine"', {
    onFrame: (frame, child) => {
      if (frame.type === 'hello') {
        child.send({ type: 'from-the-future', x: 1 });
        child.send({ type: 7 });
      }
    },
  });
  assert.deepEqual(result.value, 'still fine');
  assert.deepEqual(frames.filter((frame) => frame.type === 'error'), [
    { type: 'error', frame: 'from-the-future', message: 'unsupported control frame type "from-the-future"' },
    { type: 'error', frame: null, message: 'control frame without a string type' },
  ]);
});

test('bad bootstrap arguments stop the child with a diagnostic', async () => {
  const session = new ChildSession({ args: ['--max-message-bytes=lots'] });
  assert.equal((await session.exited).code, 2);
  assert.match(session.stderr, /positive integer/);
});

test('a format without an evaluator answers an exception result', async () => {
  const { result } = await runProgram('1', { format: 'no-such-format' });
  assert.deepEqual(result.error, {
    kind: 'exception',
    message: 'program format no-such-format is not supported by this bootstrap yet',
  });
});

test('a run frame with a malformed retain, warmUp or initializer is a protocol error', async () => {
  for (const [field, value] of [['retain', 'yes'], ['warmUp', 'yes'], ['initializer', 42], ['stripped', true], ['stripped', '12'], ['syntaxError', 7]]) {
    const session = new ChildSession();
    await session.waitFor((frame) => frame.type === 'hello');
    session.send({ type: 'run', run: 1, format: 'vm-script', program: '1', cwd: '/', bindings: [], [field]: value });
    assert.equal((await session.exited).code, 2);
    assert.match(session.stderr, new RegExp(`\`${field}\` must be`));
  }
});

// `warmUp` (a prewarmed process's constant evaluations, plugin/env/env_io.c): the run's binding
// namespaces and error classes leave the main global once it settles.
async function afterWarmUp(format, warmUp) {
  const session = new ChildSession();
  await session.waitFor((frame) => frame.type === 'hello');
  const bindings = [{ global: 'ptcWarmUp', functions: ['echo'], errorClass: 'WarmUpError' }];
  session.send({ type: 'run', run: 1, format, program: 'await ptcWarmUp.echo(1); 0', cwd: '/', discardCompletion: true, bindings, ...warmUp });
  const call = await session.waitFor((frame) => frame.type === 'call');
  session.send({ type: 'reply', call: call.call, ok: true, value: call.args });
  const warmed = await session.waitFor((frame) => frame.type === 'result');
  const look = '[typeof ptcWarmUp, typeof WarmUpError, Object.getOwnPropertyNames(globalThis).filter((name) => /warm/i.test(name))]';
  session.send({ type: 'run', run: 2, format, program: format === 'async-function' ? `return ${look}` : look, cwd: '/', bindings: [] });
  const result = await session.waitFor((frame) => frame.type === 'result' && frame.run === 2);
  await session.kill();
  assert.deepEqual(warmed, { type: 'result', run: 1, ok: true }, format);
  return result.value;
}

test('a warm-up run (warmUp) leaves none of its binding globals to the next run', async () => {
  for (const format of ['async-function', 'vm-script', 'scoped-repl', 'repl']) {
    assert.deepEqual(await afterWarmUp(format, { warmUp: true }), ['undefined', 'undefined', []], format);
  }
});

test('control: without warmUp the next run in the main context still sees them', async () => {
  assert.deepEqual(await afterWarmUp('async-function', {}), ['object', 'function', ['WarmUpError', 'ptcWarmUp']]);
});

// `stripped` (the host's checked strip of `program`): compiled instead of stripping, so the child
// never loads amaro; messages still quote the program itself.
const AMARO = "process.moduleLoadList.includes('NativeModule internal/deps/amaro/dist/index')";
test('a run frame with stripped runs that text and never loads amaro', async () => {
  for (const format of ['async-function', 'vm-script', 'scoped-repl', 'repl']) {
    const tail = format === 'async-function' ? `return [x, ${AMARO}]` : `[x, ${AMARO}]`;
    const program = `let x: number = 2;\n${tail}`;
    const stripped = `let x         = 2;\n${tail}`;
    const session = new ChildSession();
    await session.waitFor((frame) => frame.type === 'hello');
    session.send({ type: 'run', run: 1, format, program, stripped, cwd: '/', bindings: [] });
    const result = await session.waitFor((frame) => frame.type === 'result');
    assert.deepEqual(result, { type: 'result', run: 1, ok: true, value: [2, false] }, format);
    await session.kill();
  }
  const { result } = await runProgram(`let x: number = 2;\nreturn [x, ${AMARO}]`);
  assert.deepEqual(result.value, [2, true], 'the control: stripping in the child loads amaro');
});

test('a compile error of a stripped program quotes the program, not the stripped text', async () => {
  const program = 'let y: number = 1; let y: string = 2;';
  const session = new ChildSession();
  await session.waitFor((frame) => frame.type === 'hello');
  session.send({ type: 'run', run: 1, format: 'async-function', program, stripped: 'let y         = 1; let y         = 2;', cwd: '/', bindings: [] });
  const viaHost = await session.waitFor((frame) => frame.type === 'result');
  await session.kill();
  const { result: inChild } = await runProgram(program, { cwd: '/' });
  assert.equal(viaHost.ok, false);
  assert.equal(viaHost.error.message, inChild.error.message);
  assert.match(viaHost.error.message, /\nlet y: number = 1; let y: string = 2;\n/);
});

test('frames larger than one read, written in pieces, arrive whole before and after the first run', async () => {
  const session = new ChildSession({ maxMessageBytes: 1 << 20 });
  try {
    await session.waitFor((frame) => frame.type === 'hello');
    const hash = (text) => {
      let h = 0;
      for (const c of text) h = (h * 31 + c.charCodeAt(0)) >>> 0;
      return h;
    };
    // About 190 KB of text that differs everywhere, so a lost or reused piece changes the hash.
    const payload = (seed) => Array.from({ length: 30000 }, (_, i) => (i * seed) % 100003).join(',');
    const program = (run, text) =>
      `const s${run} = "${text}"; let h${run} = 0; for (const c of s${run}) h${run} = (h${run} * 31 + c.charCodeAt(0)) >>> 0; [s${run}.length, h${run}]`;
    // The first run is read synchronously (control-reader.js), the second by the adopted socket.
    for (const [run, seed] of [[1, 7], [2, 13]]) {
      const text = payload(seed);
      const frame = { type: 'run', run, format: 'vm-script', program: program(run, text), cwd: '/', bindings: [], retain: true };
      const line = `${JSON.stringify(frame)}\n`;
      for (let at = 0; at < line.length; at += 7001) {
        session.sendRaw(line.slice(at, at + 7001));
        await new Promise((resolve) => setImmediate(resolve));
      }
      const result = await session.waitFor((f) => f.type === 'result' && f.run === run);
      assert.ok(result.ok, `run ${run}: ${JSON.stringify(result).slice(0, 300)}`);
      assert.deepEqual(result.value, [text.length, hash(text)]);
    }
    session.closeControl();
    assert.equal((await session.exited).code, 0);
  } finally {
    await session.kill();
  }
});
