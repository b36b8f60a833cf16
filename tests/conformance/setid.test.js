// No set-user-ID, set-group-ID or file capability from a confined program (host-abi/ABI.md,
// "Roots"), through the real dsh: a workspace-write program copies python3 into its workspace and
// runs a probe it compiles with gcc (setid-probe.c), which tries every call that carries a mode or
// sets an xattr. Each refusal is asserted by its errno and on disk, next to the controls a program
// needs (ordinary modes, the sticky bit, a fifo, a mode the kernel ignores without O_CREAT), and a
// danger-full-access run of the same probe shows each refused call does succeed unconfined. The
// workspace, an extra writable root and a readable root are nosuid and nodev inside: a device node
// the host placed in each does not open.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { chmodSync, lstatSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { NODE, ROOT, runProgram, tempDir, text } from './harness.js';

const root = process.getuid() === 0;
const PROBE = readFileSync(join(ROOT, 'tests/conformance/setid-probe.c'), 'utf8');

const RUNNER = join(ROOT, 'bootstrap/runners/module-map-runner.js');

// The probe's report for the workspace and the roots in dirs (its arguments 1..n).
const probe = (dirs) => `const fs = await import("node:fs"), cp = await import("node:child_process");
fs.copyFileSync("/usr/bin/python3", "py");
fs.writeFileSync("setid-probe.c", ${JSON.stringify(PROBE)});
cp.execFileSync("/usr/bin/gcc", ["-o", "setid-probe", "setid-probe.c"]);
const lines = cp.execFileSync("./setid-probe", ${JSON.stringify(dirs)}, { encoding: "utf8" }).trim().split("\\n");
return Object.fromEntries(lines.map((l) => l.split("=")))`;

// A host-made device node (a copy of the host's /dev/null) in dir; mknod needs a root host.
function withDevice(dir) {
  if (root)
    execFileSync('/usr/bin/mknod', ['-m', '0666', join(dir, 'host-null'), 'c', '1', '3']);
  return dir;
}

// The three kinds of root, each with a device node: the workspace, an extra writable root, and a
// readable root (the runner's directory of a node-script launch).
function roots() {
  const ws = withDevice(tempDir('dsh-ws-'));
  const extra = withDevice(tempDir('dsh-extra-'));
  const runner = withDevice(tempDir('dsh-runner-'));
  chmodSync(runner, 0o755);
  writeFileSync(join(runner, 'runner.mjs'), `import ${JSON.stringify(pathToFileURL(RUNNER).href)};\n`);
  writeFileSync(join(runner, 'module-map.json'), '{}');
  return {
    ws,
    program: probe([extra, runner]),
    sandbox: { extraWritableRoots: [extra] },
    runtime: { launch: { kind: 'node-script', executable: NODE, bootstrapPath: join(runner, 'runner.mjs') } },
  };
}

const refused = {
  'chmod 6755': 'EPERM',
  'chmod 4755': 'EPERM',
  'chmod 2755': 'EPERM',
  'fchmod 4755': 'EPERM',
  'fchmodat 2755': 'EPERM',
  'fchmodat2 4755': 'ENOSYS',
  'open creat 4755': 'EPERM',
  'openat creat 2755': 'EPERM',
  'creat 4755': 'EPERM',
  'open tmpfile 4755': 'EPERM',
  'openat2': 'ENOSYS',
  'mkdir 2755': 'EPERM',
  'mkdirat 4755': 'EPERM',
  'mknod reg 4755': 'EPERM',
  'mknodat reg 2755': 'EPERM',
  'setxattr security.capability': 'EPERM',
  'lsetxattr security.capability': 'EPERM',
  'fsetxattr security.capability': 'EPERM',
  'setxattr user.note': 'EPERM',
  'removexattr user.note': 'EPERM',
};
const controls = {
  'chmod 0755': 'OK',
  'fchmod 0755': 'OK',
  'open creat 0644': 'OK',
  'chmod 0644': 'OK',
  'open read 4755': 'OK',
  'mkdir 0755': 'OK',
  'chmod 1777': 'OK',
  'mknod fifo 0644': 'OK',
};

test('a workspace-write program sets no set-id bit or xattr; ordinary modes still work', async () => {
  const { ws, program, sandbox, runtime } = roots();
  const { result } = await runProgram(program, { ws, sandbox, runtime });
  assert.equal(result.ok, true, JSON.stringify(result));
  assert.deepEqual(result.value, {
    ...refused,
    ...Object.fromEntries([0, 1, 2].flatMap((i) => [[`nosuid ${i}`, 'yes'], [`nodev ${i}`, 'yes'],
      ...(root ? [[`open host device ${i}`, 'EACCES']] : [])])),
    ...controls,
  });
  // On disk: nothing the program made or changed carries a set-id bit; the refused creations made
  // nothing; the copy keeps its control mode.
  for (const name of readdirSync(ws)) {
    const st = lstatSync(join(ws, name));
    assert.equal(st.mode & 0o6000, 0, `${name} has mode ${(st.mode & 0o7777).toString(8)}`);
  }
  assert.deepEqual(readdirSync(ws).filter((n) => n.startsWith('made-')), []);
  assert.equal(lstatSync(join(ws, 'py')).mode & 0o7777, 0o755);
  assert.equal(lstatSync(join(ws, 'plain')).mode & 0o7777, 0o644);
  assert.equal(lstatSync(join(ws, 'dir')).mode & 0o7777, 0o1777);
});

test('control: unconfined, the same calls succeed', async () => {
  const { ws, program, sandbox, runtime } = roots();
  const { result } = await runProgram(program, { ws, sandbox, runtime, mode: 'danger-full-access' });
  assert.equal(result.ok, true, JSON.stringify(result));
  const expected = ['chmod 6755', 'fchmod 4755', 'open creat 4755', 'creat 4755', 'open tmpfile 4755',
    'mknod reg 4755', 'mknodat reg 2755', 'openat2', 'setxattr user.note', 'removexattr user.note'];
  if (root)
    expected.push('setxattr security.capability', 'open host device 0', 'open host device 1', 'open host device 2');
  for (const name of expected)
    assert.equal(result.value[name], 'OK', name);
  assert.equal(lstatSync(join(ws, 'made-node')).mode & 0o7777, 0o4755, 'mknod keeps S_ISUID');
});

test('the reported break: fs.chmodSync(copy of python3, 0o6755) is refused and reported as a denial', async () => {
  const { result, ws } = await runProgram(`const fs = await import("node:fs");
fs.copyFileSync("/usr/bin/python3", "py");
try { fs.chmodSync("py", 0o6755) } catch (e) { console.log(e.message) }
return (fs.statSync("py").mode & 0o7777).toString(8)`);
  assert.equal(result.ok, true, JSON.stringify(result));
  assert.equal(result.value, '755', 'the copy keeps python3\'s mode');
  assert.equal(text(result), "EPERM: operation not permitted, chmod 'py'\n");
  assert.equal(result.sandbox.denied, true);
  const st = lstatSync(join(ws, 'py'));
  assert.equal(st.mode & 0o7777, 0o755);
  assert.equal(st.uid, process.getuid(), 'on disk the host user\'s');
});
