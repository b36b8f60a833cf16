// Environment confinement and the evaluation scope: empty process.env (also through
// node:process imports), reduced native environment, child process environments, cwd, local
// `process` declarations and relative dynamic imports.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { DEFAULT_ENV, runProgram } from './fake-host.js';

function tempDir() {
  return fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'ptc-env-')));
}

async function value(program, options) {
  const { result } = await runProgram(program, options);
  assert.equal(result.ok, true, JSON.stringify(result));
  return result.value;
}

test('process.env is an empty plain object', async () => {
  assert.deepEqual(await value('return [Object.keys(process.env), Object.getPrototypeOf(process.env) === Object.prototype, process.env.PATH ?? null, JSON.stringify(process.env)]'), [
    [],
    true,
    null,
    '{}',
  ]);
});

test('import("node:process") sees the empty env as default and named export', async () => {
  assert.deepEqual(
    await value('const p = await import("node:process"); return [Object.keys(p.default.env), Object.keys(p.env), p.env === process.env]'),
    [[], [], true],
  );
});

test('the native environment keeps only PATH, TMPDIR, TEMP, TMP and the HTTPS proxy', async () => {
  const env = { ...DEFAULT_ENV, TEMP: '/tmp', TMP: '/tmp', HTTPS_PROXY: 'http://127.0.0.1:3128',
    https_proxy: 'http://127.0.0.1:3128', HTTP_PROXY: 'http://evil:1', ALL_PROXY: 'socks5://evil:1' };
  const keys = await value(
    `const { Worker, SHARE_ENV } = await import("node:worker_threads");
     const worker = new Worker("require('node:worker_threads').parentPort.postMessage(Object.keys(process.env).sort())", { eval: true, env: SHARE_ENV });
     return await new Promise((resolve) => worker.once("message", resolve));`,
    { env },
  );
  assert.deepEqual(keys, ['HTTPS_PROXY', 'PATH', 'TEMP', 'TMP', 'TMPDIR', 'https_proxy']);
});

test('a spawned /usr/bin/env sees no secret, only the kept paths', async () => {
  const output = await value('const cp = await import("node:child_process"); return cp.execFileSync("/usr/bin/env", { encoding: "utf8" })');
  const names = output.trim().split('\n').map((line) => line.split('=')[0]).sort();
  assert.deepEqual(names, ['PATH', 'TMPDIR']);
  assert.doesNotMatch(output, /s3cr3t|ELECTRON_RUN_AS_NODE|HOME=|LANG=/);
  assert.ok(output.includes(`TMPDIR=${DEFAULT_ENV.TMPDIR}\n`));
});

test('executable search works for nested processes: spawnSync("env"), execSync("ls"), PATH tools', async () => {
  const dir = tempDir();
  fs.mkdirSync(path.join(dir, 'bin'));
  fs.writeFileSync(path.join(dir, 'bin', 'ptc-test-tool'), '#!/bin/sh\necho tool-ran\n', { mode: 0o755 });
  fs.writeFileSync(path.join(dir, 'listed.txt'), '');
  const env = { ...DEFAULT_ENV, PATH: `${path.join(dir, 'bin')}:${DEFAULT_ENV.PATH}` };
  const [spawned, listed, tool, viaShell] = await value(
    `const cp = await import("node:child_process");
     return [
       cp.spawnSync("env", { encoding: "utf8" }).stdout,
       cp.execSync("ls", { encoding: "utf8" }),
       cp.execFileSync("ptc-test-tool", { encoding: "utf8" }),
       cp.execSync("ptc-test-tool", { encoding: "utf8" }),
     ]`,
    { env, cwd: dir },
  );
  assert.match(spawned, /^PATH=/m);
  assert.doesNotMatch(spawned, /s3cr3t/);
  assert.equal(listed, 'bin\nlisted.txt\n');
  assert.equal(tool, 'tool-ran\n');
  assert.equal(viaShell, 'tool-ran\n');
});

test('children get variables the program sets; an explicit env is used as given', async () => {
  const [inherited, explicit, promisified] = await value(
    `const cp = await import("node:child_process");
     const { promisify } = await import("node:util");
     process.env.PROGRAM_SET = "yes";
     const viaPromise = await promisify(cp.exec)("echo $PROGRAM_SET:$PTC_TEST_SECRET");
     return [
       cp.spawnSync("/usr/bin/env", { encoding: "utf8" }).stdout.includes("PROGRAM_SET=yes\\n"),
       cp.spawnSync("/usr/bin/env", [], { env: { ONLY: "1" }, encoding: "utf8" }).stdout,
       viaPromise.stdout,
     ]`,
  );
  assert.deepEqual([inherited, explicit, promisified], [true, 'ONLY=1\n', 'yes:\n']);
});

// node:child_process is wrapped when a program first reaches for it (the child does not load it
// before); each way there must find the wrapped functions.
test('every way to node:child_process gives children the kept paths: import, getBuiltinModule, require', async () => {
  const [viaImport, viaBuiltin, viaRequire, afterwards] = await value(
    `const env = (cp) => cp.execFileSync("/usr/bin/env", { encoding: "utf8" }).includes("TMPDIR=");
     const viaBuiltin = env(process.getBuiltinModule("child_process"));
     const { createRequire } = await import("node:module");
     const viaRequire = env(createRequire(process.cwd() + "/")("node:child_process"));
     const viaImport = env(await import("child_process"));
     return [viaImport, viaBuiltin, viaRequire, env(await import("node:child_process"))]`,
  );
  assert.deepEqual([viaImport, viaBuiltin, viaRequire, afterwards], [true, true, true, true]);
});

test('the first way to node:child_process may be an import', async () => {
  assert.equal(await value('const cp = await import("child_process"); return cp.execFileSync("/usr/bin/env", { encoding: "utf8" }).includes("TMPDIR=")'), true);
});

test('the first way to node:child_process may be a require', async () => {
  assert.equal(
    await value('const { createRequire } = await import("node:module"); const cp = createRequire(process.cwd() + "/")("child_process"); return cp.execSync("env", { encoding: "utf8" }).includes("TMPDIR=")'),
    true,
  );
});

test('Node globals and the installed globals are available to the body', async () => {
  assert.deepEqual(
    await value('return [typeof Buffer, typeof setTimeout, typeof fetch, typeof URL, typeof structuredClone, typeof process.versions.node, typeof inspect, typeof ToolCallError, arguments.length]', {
      bindings: [{ global: 'tools', functions: ['x'] }],
    }),
    ['function', 'function', 'function', 'function', 'function', 'string', 'function', 'function', 0],
  );
});

test('the program runs in its cwd and may declare a local process', async () => {
  const dir = tempDir();
  assert.deepEqual(
    await value('const process = await import("node:process"); return [process.cwd(), typeof process.exit]', { cwd: dir }),
    [dir, 'function'],
  );
});

test('relative dynamic import resolves from cwd', async () => {
  const dir = tempDir();
  fs.writeFileSync(path.join(dir, 'helper.mjs'), 'export const answer = 42;\n');
  fs.mkdirSync(path.join(dir, 'lib'));
  fs.writeFileSync(path.join(dir, 'lib', 'data.json'), '{"k": "v"}');
  assert.deepEqual(
    await value(
      'const { answer } = await import("./helper.mjs"); const data = await import("./lib/data.json", { with: { type: "json" } }); return [answer, data.default.k]',
      { cwd: dir },
    ),
    [42, 'v'],
  );
});

test('a missing cwd fails the run with the chdir error', async () => {
  const { result } = await runProgram('return 1', { cwd: '/definitely/not/here' });
  assert.equal(result.error.kind, 'exception');
  assert.match(result.error.message, /ENOENT.*chdir/);
});
