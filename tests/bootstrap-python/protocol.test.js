// The fd-3 protocol edges of the Python child: host frames it cannot accept, end of file,
// frame sizes, unknown frame types.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ChildSession, COMMAND, runProgram } from './python-child.js';

async function started(options = {}) {
  const session = new ChildSession({ command: COMMAND, ...options });
  await session.waitFor((f) => f.type === 'hello');
  return session;
}

test('end of file on fd 3 exits with status 0', async () => {
  const session = await started();
  session.closeControl();
  assert.deepEqual(await session.exited, { code: 0, signal: null });
});

for (const [name, raw, why] of [
  ['not JSON', '{nope\n', /incoming control frame is not JSON/],
  ['not an object', '[1]\n', /incoming control frame is not a JSON object/],
  ['NaN token', '{"type":"reply","call":1,"ok":true,"value":NaN}\n', /not JSON/],
  ['a malformed run', '{"type":"run","run":0}\n', /run frame needs a positive integer `run`/],
  ['bindings not an array', '{"type":"run","run":1,"format":"async-function","program":"","cwd":"/","bindings":{}}\n', /`bindings` must be an array/],
  ['a bad image', '{"type":"image-register","attachmentId":"a","path":"/x","width":0,"height":1}\n', /positive integers/],
]) {
  test(`a host frame that is ${name} exits with status 2 and a diagnostic`, async () => {
    const session = await started();
    session.sendRaw(raw);
    assert.deepEqual(await session.exited, { code: 2, signal: null });
    assert.match(session.stderr, why);
  });
}

test('an oversized host frame is refused before it is buffered', async () => {
  const session = await started({ maxMessageBytes: 1024 });
  session.sendRaw('{"type":"x","pad":"' + 'p'.repeat(2000));
  assert.deepEqual(await session.exited, { code: 2, signal: null });
  assert.match(session.stderr, /incoming control frame exceeds 1024 bytes/);
});

test('an unknown host frame type is answered with an error frame; init-ack is ignored', async () => {
  const { result, frames } = await runProgram('return 1', {
    onFrame: (frame, session) => frame.type === 'hello' && session.sendRaw('{"type":"future-thing"}\n{"type":"init-ack","run":1}\n{"run":1}\n'),
  });
  assert.equal(result.value, 1);
  assert.deepEqual(frames.filter((f) => f.type === 'error').map((f) => ({ ...f })), [
    { type: 'error', frame: 'future-thing', message: 'unsupported control frame type "future-thing"' },
    { type: 'error', frame: null, message: 'control frame without a string type' },
  ]);
});

test('bad bootstrap arguments exit with status 2', async () => {
  const session = new ChildSession({ command: COMMAND, args: ['--max-message-bytes=0'] });
  assert.deepEqual(await session.exited, { code: 2, signal: null });
  assert.match(session.stderr, /needs a positive integer/);
});

test('every frame is one JSON object per line within the limit', async () => {
  const { violations, frames } = await runProgram('for i in range(200):\n    print("line", i)\nreturn list(range(100))', { maxMessageBytes: 2048 });
  assert.deepEqual(violations, []);
  assert.ok(frames.every((f) => f.bytes <= 2048));
});

test('nothing follows the terminal frame, even from leftover tasks', async () => {
  const { after } = await runProgram('import asyncio\nasync def late():\n    await asyncio.sleep(0.05)\n    print("late")\nasyncio.get_running_loop().create_task(late())\nreturn 1', { settleMs: 300 });
  assert.deepEqual(after, []);
});

test('an environment initializer is refused: this runtime has none', async () => {
  const session = await started();
  try {
    session.send({ type: 'run', run: 1, format: 'async-function', program: 'return 1', cwd: '/', bindings: [], initializer: 'x = 1' });
    const result = await session.waitFor((f) => f.type === 'result');
    assert.equal(result.error.message, 'environment initializers are not supported by the Python runtime');
  } finally {
    await session.kill();
  }
});
