// The program's dedicated identity and the default-deny syscall filter, through the real dsh:
// root's 0600 file in a readable root (the runner's directory of a node-script launch), the
// ownership of what a workspace-write program creates, and a syscall newer than the filter's
// review issued by a C helper the program compiles with gcc. Each case has a
// danger-full-access control. The identity cases need a root host (there are no ids to give
// away otherwise).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { chmodSync, chownSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { ROOT, NODE, runProgram, tempDir, text } from './harness.js';

const notRoot = process.getuid() === 0 ? false : `not root (uid ${process.getuid()}): a dedicated identity needs a root host`;
const RUNNER = join(ROOT, 'bootstrap/runners/module-map-runner.js');

function runnerWithSecret() {
  const dir = tempDir('dsh-runner-');
  chmodSync(dir, 0o755); // a readable root a stranger may enter
  writeFileSync(join(dir, 'runner.mjs'), `import ${JSON.stringify(pathToFileURL(RUNNER).href)};\n`);
  writeFileSync(join(dir, 'module-map.json'), '{}');
  writeFileSync(join(dir, 'public.txt'), 'public');
  writeFileSync(join(dir, 'secret.txt'), 'root only');
  chownSync(join(dir, 'secret.txt'), 0, 0);
  chmodSync(join(dir, 'secret.txt'), 0o600);
  return { dir, launch: { kind: 'node-script', executable: NODE, bootstrapPath: join(dir, 'runner.mjs') } };
}

test('root\'s 0600 file in a readable root is unreadable; the root itself stays readable', { skip: notRoot }, async () => {
  const { dir, launch } = runnerWithSecret();
  const program = `const fs = await import("node:fs");
const read = (f) => { try { return fs.readFileSync(${JSON.stringify(dir)} + "/" + f, "utf8") } catch (e) { return e.code } };
return [read("public.txt"), read("secret.txt")]`;
  for (const mode of ['read-only', 'workspace-write']) {
    const { result } = await runProgram(program, { mode, runtime: { launch } });
    assert.equal(result.ok, true, JSON.stringify(result));
    assert.deepEqual(result.value, ['public', 'EACCES'], mode);
    assert.equal(result.sandbox.capabilities.identity, 'full');
  }
  // Control: as the host's uid the same program reads it.
  const { result } = await runProgram(program, { mode: 'danger-full-access', runtime: { launch } });
  assert.deepEqual(result.value, ['public', 'root only']);
});

test('what a workspace-write program creates is the host user\'s on disk', { skip: notRoot }, async () => {
  const { result, ws } = await runProgram(`const fs = await import("node:fs");
fs.writeFileSync("made.txt", "x"); fs.mkdirSync("dir");
return [process.getuid(), fs.statSync("made.txt").uid]`);
  assert.equal(result.ok, true, JSON.stringify(result));
  const [uid, seenUid] = result.value;
  assert.notEqual(uid, 0, 'the program runs as a dedicated uid');
  assert.equal(seenUid, uid, 'inside, the program owns what it made');
  for (const name of ['made.txt', 'dir']) {
    const st = statSync(join(ws, name));
    assert.deepEqual([st.uid, st.gid], [process.getuid(), process.getgid()], name);
  }
  const control = await runProgram('return process.getuid()', { mode: 'danger-full-access' });
  assert.equal(control.result.value, process.getuid());
});

test('a syscall newer than the filter\'s review answers ENOSYS; gcc and the helper still run', async () => {
  // lsm_list_modules (Linux 6.8) is not in the reviewed table.
  const program = `const fs = await import("node:fs"), cp = await import("node:child_process");
fs.writeFileSync("probe.c", '#include <errno.h>\\n#include <stdio.h>\\n#include <unistd.h>\\nint main(void){unsigned long long ids[64];unsigned size=sizeof(ids);long r=syscall(461,ids,&size,0U);puts(r>=0?"OK":errno==ENOSYS?"ENOSYS":"other error");return 0;}\\n');
cp.execFileSync("/usr/bin/gcc", ["-o", "probe", "probe.c"]);
return cp.execFileSync("./probe", { encoding: "utf8" }).trim()`;
  const { result } = await runProgram(program);
  assert.equal(result.ok, true, JSON.stringify(result));
  assert.equal(result.value, 'ENOSYS');
  assert.equal(text(result), '');
  const control = await runProgram(program, { mode: 'danger-full-access' });
  assert.equal(control.result.value, 'OK', JSON.stringify(control.result));
});
