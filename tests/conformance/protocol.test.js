// The child is untrusted: forged or malformed control traffic is a protocol failure, and the host
// stays healthy for the next run.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { realpathSync } from 'node:fs';
import { runProgram, Serve } from './harness.js';

const forge = (line) => `(await import("node:fs")).writeSync(3, ${JSON.stringify(line)}); await new Promise(r => setTimeout(r, 2000))`;

const cases = {
  'garbage bytes': 'this is not json\n',
  'a JSON array': '[1,2,3]\n',
  'an unknown frame type': '{"type":"exec","run":1}\n',
  'a forged run id': '{"type":"text","run":99,"text":"x"}\n',
  'an undeclared binding': '{"type":"call","run":1,"call":77,"global":"fs","name":"rm","args":[]}\n',
  'a duplicate call id': '{"type":"call","run":1,"call":5,"global":"tools","name":"sleep","args":[{"ms":5000}]}\n{"type":"call","run":1,"call":5,"global":"tools","name":"sleep","args":[{"ms":5000}]}\n',
  'a second hello': '{"type":"hello","protocol":1,"node":"v24.0.0"}\n',
  'a host-only failure kind': '{"type":"result","run":1,"ok":false,"error":{"kind":"timeout","message":"fake"}}\n',
  'a frame after the result': '{"type":"result","run":1,"ok":true,"value":1}\n{"type":"text","run":1,"text":"late"}\n',
};

for (const [name, line] of Object.entries(cases)) {
  test(`${name} is a protocol failure and the host survives`, async () => {
    const s = new Serve();
    const r = await s.run('bad', forge(line));
    assert.equal(r.ok, false, JSON.stringify(r));
    assert.equal(r.error.kind, 'protocol', JSON.stringify(r));
    const next = await s.run('good', 'return "still healthy"');
    assert.equal(next.value, 'still healthy');
    await s.close();
  });
}

test('an oversized control line is a protocol failure', async () => {
  const s = new Serve({ runtime: { maxMessageBytes: 4096 } });
  const r = await s.run('big', '(await import("node:fs")).writeSync(3, "x".repeat(10000)); await new Promise(r => setTimeout(r, 2000))');
  assert.equal(r.error.kind, 'protocol');
  assert.match(r.error.message, /maxMessageBytes/);
  await s.close();
});

test('closing the control channel is worker-exit, not a hang', async () => {
  const s = new Serve();
  const r = await s.run('closed', '(await import("node:fs")).closeSync(3); await new Promise(r => setTimeout(r, 60000))');
  assert.equal(r.error.kind, 'worker-exit');
  await s.close();
});

test('a forged success result is only the program speaking for itself', async () => {
  const s = new Serve();
  const r = await s.run('forged', forge('{"type":"result","run":1,"ok":true,"value":"forged"}\n'));
  assert.equal(r.ok, true);
  assert.equal(r.value, 'forged');
  await s.close();
});

test('bad request lines are reported and the server keeps going', async () => {
  const s = new Serve();
  s.child.stdin.write('not json\n');
  const e = await s.next((ev) => ev.type === 'error');
  assert.match(e.message, /.+/);
  const r = await s.run('after', 'return 5');
  assert.equal(r.value, 5);
  await s.close();
});

// The child answers a host frame it does not handle with an `error` frame (bootstrap/PROTOCOL.md).
// The host sends only types the child knows, so such a frame (here forged by the program) is a
// protocol failure naming the child's message, and a retained environment is cleared.
test('an error frame from the child is a protocol failure naming its message', async () => {
  const s = new Serve({ runtime: { executionMode: 'persistent-in-memory' } });
  await s.run('1', 'var kept = 1', { stateOwner: 'o' });
  const line = '{"type":"error","frame":"from-the-future","message":"unsupported control frame type \\"from-the-future\\""}\n';
  const r = await s.run('2', forge(line), { stateOwner: 'o' });
  assert.equal(r.ok, false, JSON.stringify(r));
  assert.deepEqual(r.error, {
    kind: 'protocol',
    message: 'invalid control frame: the bootstrap did not handle a control frame: unsupported control frame type "from-the-future"',
  });
  assert.equal(r.retained.state, 'cleared');
  assert.equal((await s.run('3', 'typeof kept', { stateOwner: 'o' })).value, 'undefined');
  await s.close();
});

// Types are stripped outside the program's process (plugin/README.md, "Type stripping outside the
// program's process"): once the session's stripper is warm (dsh -v logs it, the barrier), a cold
// per-call child never loads amaro, and a program that is not erasable TypeScript still fails
// with its child's own message, location and caret.
test('a per-call child runs the stripper\'s text and never loads amaro', async () => {
  const amaro = "process.moduleLoadList.includes('NativeModule internal/deps/amaro/dist/index')";
  const s = new Serve({ runtime: { prewarmProcesses: 0 }, args: ['-v'] });
  await s.stderrMatching(/type stripper of session "[^"]*" is ready/);
  const result = await s.run('typed', `let x: number = 41;\nreturn [x + 1, ${amaro}]`);
  await s.close();
  assert.deepEqual(result.value, [42, false], JSON.stringify(result));
  const { result: broken, ws } = await runProgram('let y: number = ;\nreturn y', { runtime: { prewarmProcesses: 0 } });
  assert.deepEqual(broken.error, {
    kind: 'exception',
    message: `SyntaxError: Expression expected\n    at ${realpathSync(ws)}/[program]:1:17\nlet y: number = ;\n                ^`,
  });
});
