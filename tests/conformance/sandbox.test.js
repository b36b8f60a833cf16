// result.sandbox, file policy, and the empty environment, through the whole product.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { runProgram, tempDir, text } from './harness.js';

test('workspace-write reports full enforcement and may write the workspace', async () => {
  const { result, ws } = await runProgram('const fs = await import("node:fs/promises"); await fs.writeFile("made.txt", "hi"); return 1');
  assert.equal(result.ok, true, JSON.stringify(result));
  assert.deepEqual({ mode: result.sandbox.mode, denied: result.sandbox.denied, enforcement: result.sandbox.enforcement },
                   { mode: 'workspace-write', denied: false, enforcement: 'full' });
  assert.equal(readFileSync(join(ws, 'made.txt'), 'utf8'), 'hi');
});

test('workspace-write denies writes outside the workspace with denied: true', async () => {
  const outside = tempDir('dsh-outside-');
  const target = join(outside, 'escape.txt');
  const { result } = await runProgram(`(await import("node:fs")).writeFileSync(${JSON.stringify(target)}, "x")`);
  assert.equal(result.ok, false);
  assert.equal(result.error.kind, 'exception');
  assert.match(result.error.message, /EACCES|EPERM|EROFS|permission|read-only/i);
  assert.equal(result.sandbox.denied, true);
  assert.equal(existsSync(target), false);
});

test('read-only denies workspace writes with denied: true', async () => {
  const { result, ws } = await runProgram('(await import("node:fs")).writeFileSync("nope.txt", "x")', { mode: 'read-only' });
  assert.equal(result.ok, false);
  assert.equal(result.sandbox.mode, 'read-only');
  assert.equal(result.sandbox.denied, true);
  assert.equal(existsSync(join(ws, 'nope.txt')), false);
});

test('read-only still reads the workspace', async () => {
  const ws = tempDir('dsh-ws-');
  (await import('node:fs')).writeFileSync(join(ws, 'in.txt'), 'readable');
  const { result } = await runProgram('return (await import("node:fs")).readFileSync("in.txt", "utf8")', { ws, mode: 'read-only' });
  assert.equal(result.value, 'readable');
  assert.equal(result.sandbox.denied, false);
});

test('a caught denial is still observed', async () => {
  const { result } = await runProgram('try { (await import("node:fs")).writeFileSync("/etc/dsh-test", "x") } catch (e) { inspect(e.code) } return "handled"');
  assert.equal(result.ok, true);
  assert.equal(result.sandbox.denied, true);
  assert.match(text(result), /EACCES|EPERM|EROFS/);
});

test('danger-full-access is explicit and reported unconfined', async () => {
  const { result } = await runProgram('return 1', { mode: 'danger-full-access' });
  assert.equal(result.ok, true);
  assert.equal(result.sandbox.mode, 'danger-full-access');
  assert.equal(result.sandbox.enforcement, 'none');
});

test('the program sees an empty process.env', async () => {
  const { result } = await runProgram('return [Object.keys(process.env).length, (await import("node:process")).env, Object.keys((await import("node:process")).default.env)]',
    { env: { ...process.env, DSH_SECRET_TOKEN: 'hunter2', AWS_SECRET_ACCESS_KEY: 'k' } });
  assert.deepEqual(result.value, [0, {}, []]);
});

test('children of the program inherit no host secrets', async () => {
  const { result } = await runProgram('return (await import("node:child_process")).execFileSync("/usr/bin/env").toString()',
    { env: { ...process.env, DSH_SECRET_TOKEN: 'hunter2', NODE_OPTIONS: '--require /nonexistent.js', LD_PRELOAD: '/x.so' } });
  assert.equal(result.ok, true, JSON.stringify(result));
  assert.doesNotMatch(result.value, /hunter2|NODE_OPTIONS|LD_PRELOAD/);
});

test('network sockets are denied', async () => {
  const { result } = await runProgram(`
    const net = await import("node:net");
    return await new Promise((resolve) => {
      const s = net.connect(80, "127.0.0.1");
      s.on("error", (e) => resolve(e.code));
      s.on("connect", () => resolve("connected"));
    })`);
  assert.notEqual(result.value, 'connected');
  assert.match(String(result.value), /EACCES|EPERM|EAFNOSUPPORT/);
});

test('cwd defaults to the workspace root', async () => {
  const { result, ws } = await runProgram('return process.cwd()');
  assert.equal(result.value, ws);
});
