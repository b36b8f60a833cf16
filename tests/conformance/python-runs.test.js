// The experimental Python runtime through the real `dsh`: bindings, deadlines, cancellation and
// the options it refuses.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { PythonServe, runPython, text } from './python-harness.js';

test('demo tools resolve through the control channel with keyword arguments', async () => {
  const { result } = await runPython('return [await tools.echo({"a": [1, "é"]}), await tools.add(a=2, b=40), await tools.sleep(ms=20)]');
  assert.deepEqual(result.value, [{ a: [1, 'é'] }, 42, null]);
});

test('a rejected binding raises the error class, an Exception, with the member name', async () => {
  const { result } = await runPython('try:\n    await tools.fail(message="nope")\nexcept ToolCallError as e:\n    return [isinstance(e, Exception), str(e), e.member]');
  assert.deepEqual(result.value, [true, 'nope', 'fail']);
});

test('an uncaught binding rejection is an exception result', async () => {
  const { result } = await runPython('await tools.fail(message="broken tool")');
  assert.equal(result.error.kind, 'exception');
  assert.match(result.error.message, /ToolCallError: broken tool$/);
});

test('binding calls run concurrently with asyncio.gather', async () => {
  const s = new PythonServe();
  try {
    s.send({ type: 'run', id: 'g', program: 'import asyncio\nreturn await asyncio.gather(*(h.f(i=i) for i in range(4)))', bindings: [{ global: 'h', functions: ['f'] }] });
    const calls = [];
    while (calls.length < 4) calls.push(await s.next((e) => e.type === 'call'));
    // All four are open at once: none was answered yet.
    for (const call of calls.reverse()) s.send({ type: 'reply', run: call.run, call: call.call, ok: true, value: call.args[0].i * 2 });
    assert.deepEqual((await s.result('g')).value, [0, 2, 4, 6]);
  } finally {
    await s.close();
  }
});

test('calls beyond maxPendingCalls raise inside the program', async () => {
  const { result } = await runPython([
    'import asyncio',
    'async def one():',
    '    try:',
    '        await tools.sleep(ms=300)\n        return "ok"',
    '    except RuntimeError as e:',
    '        return str(e)',
    'return await asyncio.gather(one(), one(), one())',
  ].join('\n'), { runtime: { maxPendingCalls: 2 } });
  assert.deepEqual(result.value.sort(), ['ok', 'ok', 'tools.sleep: too many pending binding calls (limit 2)']);
});

test('client-declared bindings are answered by the client; a rejection uses the declared class', async () => {
  const s = new PythonServe();
  try {
    s.send({ type: 'run', id: 'r', program: 'try:\n    await db.q(sql="x")\nexcept DbError as e:\n    return [str(e), e.member]', bindings: [{ global: 'db', functions: ['q'], errorClass: 'DbError' }] });
    const call = await s.next((e) => e.type === 'call');
    assert.deepEqual(call.args, [{ sql: 'x' }]);
    s.send({ type: 'reply', run: call.run, call: call.call, ok: false, message: 'denied by policy' });
    assert.deepEqual((await s.result('r')).value, ['denied by policy', 'q']);
  } finally {
    await s.close();
  }
});

test('a hot loop times out during execution with the configured budget', async () => {
  const { result } = await runPython('print("before the loop")\nwhile True:\n    pass', { runtime: { timeoutMs: 800 } });
  assert.equal(result.error.kind, 'timeout');
  assert.equal(result.error.message, 'execution timed out during execution (800 ms)');
  assert.equal(text(result), 'before the loop\n');
});

test('a pending binding call counts against the deadline', async () => {
  const { result } = await runPython('await tools.sleep(ms=10000)', { runtime: { timeoutMs: 700 } });
  assert.equal(result.error.kind, 'timeout');
});

test('a deadline shorter than startup times out before code started', async () => {
  const { result } = await runPython('return 1', { runtime: { timeoutMs: 200 }, sandbox: { confineDelayMs: 1500 } });
  assert.equal(result.error.message, 'execution timed out before code started (200 ms)');
});

test('a numeric timeoutMs override is refused as unsupported caller misuse', async () => {
  const s = new PythonServe();
  try {
    s.send({ type: 'run', id: 'o', program: 'return 1', timeoutMs: 5000 });
    const e = await s.next((ev) => ev.id === 'o');
    assert.equal(e.type, 'error', JSON.stringify(e));
    assert.match(e.message, /timeoutMs overrides are not supported by @deepseek-ai\/dsh-ptc-runtime-python: every run has the configured deadline \(120000 ms\); only null/);
    // Control: the same request without the override runs.
    assert.equal((await s.run('p', 'return 2')).value, 2);
  } finally {
    await s.close();
  }
});

test('timeoutMs: null disables the elapsed timer', async () => {
  const s = new PythonServe({ runtime: { timeoutMs: 300 } });
  try {
    const r = await s.run('n', 'import asyncio\nawait asyncio.sleep(0.9)\nreturn "done"', { timeoutMs: null });
    assert.equal(r.value, 'done', JSON.stringify(r));
  } finally {
    await s.close();
  }
});

test('stateOwner is refused: the Python runtime retains nothing', async () => {
  const s = new PythonServe();
  try {
    s.send({ type: 'run', id: 's', program: 'return 1', stateOwner: 'agent-1' });
    const e = await s.next((ev) => ev.id === 's');
    assert.equal(e.type, 'error');
    assert.match(e.message, /stateOwner is not supported by @deepseek-ai\/dsh-ptc-runtime-python/);
  } finally {
    await s.close();
  }
});

test('cancellation during execution is abort and keeps output', async () => {
  const s = new PythonServe();
  try {
    s.send({ type: 'run', id: 'a', program: 'import asyncio\nprint("started", flush=True)\nawait asyncio.Event().wait()', bindings: [{ global: 'h', functions: ['mark'] }] });
    // Barrier: wait for the printed text to be in flight by asking for a call first is not
    // needed; the run is cancelled once the program has surely started.
    s.send({ type: 'run', id: 'b', program: 'await h.mark()', bindings: [{ global: 'h', functions: ['mark'] }] });
    await s.next((e) => e.type === 'call');
    s.send({ type: 'cancel', id: 'a', reason: 'user pressed stop' });
    const r = await s.result('a');
    assert.equal(r.error.kind, 'abort');
    assert.match(r.error.message, /user pressed stop/);
  } finally {
    await s.close();
  }
});

test('grandchild processes are killed before the result is delivered', async () => {
  const { result, ws } = await runPython([
    'import subprocess, asyncio',
    'subprocess.Popen(["/bin/sh", "-c", "while true; do date +%s%N >> tick; sleep 0.05; done"], start_new_session=True)',
    'await asyncio.sleep(0.3)',
    'return "spawned"',
  ].join('\n'));
  assert.equal(result.value, 'spawned', JSON.stringify(result));
  const size = statSync(join(ws, 'tick')).size;
  await new Promise((r) => setTimeout(r, 400));
  assert.equal(statSync(join(ws, 'tick')).size, size, 'the grandchild kept writing after the result');
});

test('a daemon that double-forks and setsids dies with the run', async () => {
  const { result, ws } = await runPython([
    'import subprocess, asyncio',
    "subprocess.run([\"/bin/sh\", \"-c\", \"(setsid sh -c 'while true; do echo x >> daemon.log; sleep 0.05; done' </dev/null >/dev/null 2>&1 &) ; exit 0\"])",
    'await asyncio.sleep(0.3)',
    'return "forked"',
  ].join('\n'));
  assert.equal(result.value, 'forked');
  const before = readFileSync(join(ws, 'daemon.log'), 'utf8').length;
  await new Promise((r) => setTimeout(r, 400));
  assert.equal(readFileSync(join(ws, 'daemon.log'), 'utf8').length, before);
});

test('describe names the Python provider and has no timeout descriptor', async () => {
  const { spawnSync } = await import('node:child_process');
  const { DSH, patchFile, tempDir } = await import('./harness.js');
  const patch = patchFile({ ws: tempDir(), provider: '@deepseek-ai/dsh-ptc-runtime-python', rows: [{ id: 'workflow', disabled: true }] });
  const out = spawnSync(DSH, ['headless', '--patch', patch], { encoding: 'utf8' });
  assert.equal(out.status, 0, out.stderr);
  const d = JSON.parse(out.stdout);
  assert.equal(d.name, '@deepseek-ai/dsh-ptc-runtime-python');
  assert.equal(d.programFormat, 'async-function');
  assert.equal('timeout' in d, false);
  assert.match(d.executionInstructions, /async Python 3\.11 function/);
});

test('an environment initializer is wrong-mode', async () => {
  const { spawnSync } = await import('node:child_process');
  const { writeFileSync } = await import('node:fs');
  const { DSH, patchFile, tempDir } = await import('./harness.js');
  const ws = tempDir();
  const patch = patchFile({ ws, provider: '@deepseek-ai/dsh-ptc-runtime-python', rows: [{ id: 'workflow', disabled: true }] });
  writeFileSync(join(ws, 'init.py'), 'x = 1');
  writeFileSync(join(ws, 'p.py'), 'return 1');
  const out = spawnSync(DSH, ['headless', '--patch', patch, '--initializer', join(ws, 'init.py'), '--program', join(ws, 'p.py')], { encoding: 'utf8', cwd: ws });
  assert.notEqual(out.status, 0);
  assert.match(out.stderr, /wrong-mode|has no environment initializers/);
});

test('the workflow engine refuses a lent Python runtime: its guest is JavaScript', async () => {
  const { spawnSync } = await import('node:child_process');
  const { writeFileSync } = await import('node:fs');
  const { DSH, patchFile, tempDir } = await import('./harness.js');
  const ws = tempDir();
  const patch = patchFile({ ws, provider: '@deepseek-ai/dsh-ptc-runtime-python' });
  writeFileSync(join(ws, 'w.js'), 'return 1');
  const out = spawnSync(DSH, ['workflow', 'run', join(ws, 'w.js'), '--patch', patch], { encoding: 'utf8', cwd: ws });
  assert.equal(out.status, 2, out.stderr);
  assert.match(out.stderr, /the lent runtime must run TypeScript async-function programs/);
});

// Fault-injection double: a bootstrap that announces an older Python (the real python3 runs it,
// so only the version in its hello is false). The host checks the version at readiness.
test('a child announcing Python older than 3.11 fails the run as protocol, naming the version', async () => {
  const { writeFileSync } = await import('node:fs');
  const { tempDir } = await import('./harness.js');
  const dir = tempDir('dsh-old-python-');
  const fake = join(dir, 'process.py');
  writeFileSync(fake, 'import os, time\nos.write(3, b\'{"type":"hello","protocol":1,"python":"3.9.18"}\\n\')\ntime.sleep(60)\n');
  const { result } = await runPython('return 1', { runtime: { bootstrapPath: fake } });
  assert.equal(result.error.kind, 'protocol', JSON.stringify(result));
  assert.match(result.error.message, /Python 3\.9\.18 is older than the supported 3\.11/);
  // Control: the real bootstrap at the same path layout runs.
  assert.equal((await runPython('return 1')).result.value, 1);
});

test('a configured python that is not on PATH fails the run naming the field', async () => {
  const { result } = await runPython('return 1', { runtime: { python: 'no-such-python3' } });
  assert.equal(result.ok, false);
  assert.match(result.error.message, /python no-such-python3 was not found on PATH/);
});
