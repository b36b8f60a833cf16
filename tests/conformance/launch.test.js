// Launch: the local carrier, an explicit node-script launch and an embedded carrier; the heap limit
// reaches Node through argv or through a provider-created NODE_OPTIONS, never the ambient one.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { chmodSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { runProgram, ROOT, NODE, tempDir } from './harness.js';

const heapLimit = 'return Math.round((await import("node:v8")).getHeapStatistics().heap_size_limit / 1048576)';
const carrier = join(ROOT, 'examples/carrier/dsh-node-carrier');

test('the default local carrier applies maxOldGenerationSizeMb through argv', async () => {
  const small = await runProgram(heapLimit, { runtime: { maxOldGenerationSizeMb: 64 } });
  const large = await runProgram(heapLimit, { runtime: { maxOldGenerationSizeMb: 1024 } });
  // heap_size_limit adds the young generation to the old-generation cap
  assert.ok(large.result.value - small.result.value >= 900, `${small.result.value} vs ${large.result.value}`);
});

test('an explicit node-script launch runs the named bootstrap', async () => {
  const { result } = await runProgram('return 40 + 2', {
    runtime: { launch: { kind: 'node-script', executable: NODE, bootstrapPath: join(ROOT, 'bootstrap/process.js') } },
  });
  assert.equal(result.value, 42, JSON.stringify(result));
});

test('an embedded carrier gets the heap limit through NODE_OPTIONS and the program sees no env', async () => {
  const { result } = await runProgram(`${heapLimit.replace('return ', 'const mb = ')}; return [mb, Object.keys(process.env).length]`, {
    runtime: { maxOldGenerationSizeMb: 64, launch: { kind: 'embedded', executable: carrier } },
    env: { ...process.env, NODE_OPTIONS: '--max-old-space-size=4096' },
  });
  assert.equal(result.ok, true, JSON.stringify(result));
  assert.ok(result.value[0] < 1000, `heap limit ${result.value[0]} MiB: the ambient NODE_OPTIONS leaked`);
  assert.equal(result.value[1], 0);
});

// README (Status): an absolute launch.executable that does not exist fails the run as
// worker-exit naming the path (see also messages.test.js for a node-script launch).
test('a launch executable that does not exist fails the run, not the host', async () => {
  const dir = tempDir('dsh-carrier-'); // exists, so dsh can list it as readable
  const missing = join(dir, 'missing-carrier');
  const { result, status } = await runProgram('return 1', { runtime: { launch: { kind: 'embedded', executable: missing } } });
  assert.equal(status, 1, JSON.stringify(result));
  assert.deepEqual(result.error, {
    kind: 'worker-exit',
    message: `the Node process could not be started: launch.executable ${missing} does not exist`,
  });
});

// A bare launch.executable is looked up on PATH; the execution world must see where it is found
// (here the workspace), and a name found nowhere fails the run saying so.
test('a bare launch executable is found on PATH', async () => {
  const ws = tempDir('dsh-ws-');
  mkdirSync(join(ws, 'bin'));
  const wrapper = join(ws, 'bin', 'ptc-test-carrier');
  writeFileSync(wrapper, `#!/bin/sh\nexec ${NODE} --experimental-vm-modules ${join(ROOT, 'bootstrap/process.js')} "$@"\n`);
  chmodSync(wrapper, 0o755);
  const env = { ...process.env, PATH: `${join(ws, 'bin')}:${process.env.PATH}` };
  const found = await runProgram('return 40 + 2', { ws, env, runtime: { launch: { kind: 'embedded', executable: 'ptc-test-carrier' } } });
  assert.equal(found.result.value, 42, JSON.stringify(found.result));
  const missing = await runProgram('return 1', { ws, env, runtime: { launch: { kind: 'embedded', executable: 'no-such-ptc-carrier' } } });
  assert.equal(missing.result.error?.kind, 'worker-exit', JSON.stringify(missing.result));
  assert.match(missing.result.error.message, /could not be started: launch\.executable no-such-ptc-carrier was not found on PATH/);
});
