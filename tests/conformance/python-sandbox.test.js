// Hostile Python programs against the same sandbox the Node runtime uses: file writes outside
// the policy, network, processes, secrets. Each denial has a control showing the case can pass.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { runPython, tempDir, text } from './python-harness.js';

const SECRETS = { ...process.env, DSH_SECRET_TOKEN: 'hunter2', AWS_SECRET_ACCESS_KEY: 'k', PYTHONSTARTUP: '/x.py', LD_PRELOAD: '/x.so' };

test('workspace-write writes inside the workspace with full enforcement (control)', async () => {
  const { result, ws } = await runPython('open("made.txt", "w").write("hi")\nreturn 1');
  assert.equal(result.ok, true, JSON.stringify(result));
  assert.deepEqual([result.sandbox.mode, result.sandbox.denied, result.sandbox.enforcement], ['workspace-write', false, 'full']);
  assert.equal(readFileSync(join(ws, 'made.txt'), 'utf8'), 'hi');
});

for (const [name, program] of [
  ['a new file outside', (t) => `open(${JSON.stringify(t)}, "w").write("x")`],
  ['os.open outside', (t) => `import os\nos.open(${JSON.stringify(t)}, os.O_CREAT | os.O_WRONLY)`],
  ['a shell child writing outside', (t) => `import subprocess\nsubprocess.run(["/bin/sh", "-c", "echo x > ${t}"], check=True)`],
  ['mkdir outside', (t) => `import os\nos.mkdir(${JSON.stringify(t)})`],
  ['a symlink planted outside', (t) => `import os\nos.symlink("/etc/passwd", ${JSON.stringify(t)})`],
  ['through /proc/self/root', (t) => `open("/proc/self/root" + ${JSON.stringify(t)}, "w").write("x")`],
]) {
  test(`workspace-write denies ${name} and reports denied: true`, async () => {
    const outside = tempDir('dsh-outside-');
    const target = join(outside, 'escape');
    const { result } = await runPython(program(target));
    assert.equal(result.ok, false, JSON.stringify(result));
    assert.equal(result.error.kind, 'exception');
    assert.match(result.error.message, /PermissionError|Errno 1[3]?\]|Read-only|CalledProcessError/);
    assert.equal(result.sandbox.denied, true);
    assert.equal(existsSync(target), false);
  });
}

test('a write through a workspace symlink to a directory outside is denied', async () => {
  const ws = tempDir('dsh-ws-');
  const outside = tempDir('dsh-outside-');
  symlinkSync(outside, join(ws, 'link'));
  const { result } = await runPython('open("link/escape.txt", "w").write("x")', { ws });
  assert.equal(result.ok, false);
  assert.equal(result.sandbox.denied, true);
  assert.equal(existsSync(join(outside, 'escape.txt')), false);
});

test('overwriting a readable file outside is denied', async () => {
  const outside = tempDir('dsh-outside-');
  writeFileSync(join(outside, 'keep.txt'), 'original');
  const { result } = await runPython(`open(${JSON.stringify(join(outside, 'keep.txt'))}, "w").write("changed")`);
  assert.equal(result.ok, false);
  assert.equal(readFileSync(join(outside, 'keep.txt'), 'utf8'), 'original');
});

test('read-only denies workspace writes but still reads the workspace', async () => {
  const ws = tempDir('dsh-ws-');
  writeFileSync(join(ws, 'in.txt'), 'readable');
  const read = await runPython('return open("in.txt").read()', { ws, mode: 'read-only' });
  assert.equal(read.result.value, 'readable');
  const write = await runPython('open("nope.txt", "w").write("x")', { ws, mode: 'read-only' });
  assert.equal(write.result.ok, false);
  assert.deepEqual([write.result.sandbox.mode, write.result.sandbox.denied], ['read-only', true]);
  assert.equal(existsSync(join(ws, 'nope.txt')), false);
});

test('a caught denial is still observed', async () => {
  const outside = tempDir('dsh-outside-');
  const { result } = await runPython(`try:\n    open(${JSON.stringify(join(outside, 'x'))}, "w")\nexcept OSError as e:\n    print(e)\n    return "caught"`);
  assert.equal(result.value, 'caught', JSON.stringify(result));
  assert.equal(result.sandbox.denied, true);
  assert.match(text(result), /Permission denied|Read-only file system|Operation not permitted/);
});

test('the private temp dir is writable and tempfile uses it', async () => {
  const { result } = await runPython('import tempfile, os\nwith tempfile.NamedTemporaryFile(delete=False) as f:\n    f.write(b"x")\nreturn os.path.dirname(f.name) == tempfile.gettempdir()');
  assert.equal(result.value, true, JSON.stringify(result));
});

for (const [name, program] of [
  ['TCP connect to the host', 'import socket\nsocket.create_connection(("127.0.0.1", 80), timeout=2)'],
  ['a TCP listener', 'import socket\ns = socket.socket()\ns.bind(("127.0.0.1", 0))\ns.listen()'],
  ['a UDP datagram', 'import socket\nsocket.socket(socket.AF_INET, socket.SOCK_DGRAM).sendto(b"x", ("127.0.0.1", 53))'],
  ['an IPv6 socket', 'import socket\nsocket.socket(socket.AF_INET6, socket.SOCK_DGRAM)'],
  ['a netlink socket', 'import socket\nsocket.socket(socket.AF_NETLINK, socket.SOCK_RAW, 0)'],
]) {
  test(`network: ${name} is denied`, async () => {
    const { result } = await runPython(program);
    assert.equal(result.ok, false, JSON.stringify(result));
    assert.match(result.error.message, /PermissionError|Errno 1\]|Errno 13\]|Errno 97\]|not supported/);
  });
}

test('network: socketpair still works (control)', async () => {
  const { result } = await runPython('import socket\na, b = socket.socketpair()\na.send(b"ok")\nreturn b.recv(2).decode()');
  assert.equal(result.value, 'ok');
});

test('ptrace and unshare are denied to Python programs', async () => {
  const { result } = await runPython([
    'import ctypes, os',
    'libc = ctypes.CDLL(None, use_errno=True)',
    'out = []',
    'out.append(libc.ptrace(16, os.getppid(), 0, 0) == -1 and ctypes.get_errno())',
    'out.append(libc.unshare(0x10000000) == -1 and ctypes.get_errno())',
    'return out',
  ].join('\n'));
  assert.equal(result.ok, true, JSON.stringify(result));
  for (const errno of result.value) assert.ok(errno === 1 || errno === 13 || errno === 38, `errno ${errno}`);
});

test('the program sees an empty os.environ and children inherit no host secrets', async () => {
  const { result } = await runPython('import os, subprocess\nreturn [dict(os.environ), subprocess.run(["/usr/bin/env"], capture_output=True, text=True).stdout]', { env: SECRETS });
  assert.deepEqual(result.value[0], {});
  assert.doesNotMatch(result.value[1], /hunter2|AWS_SECRET|PYTHONSTARTUP|LD_PRELOAD/);
});

test('host PYTHON* variables do not reach the interpreter', async () => {
  const ws = tempDir('dsh-ws-');
  mkdirSync(join(ws, 'evil'));
  writeFileSync(join(ws, 'evil', 'json.py'), 'raise SystemExit("hijacked")\n');
  const { result } = await runPython('import json, sys\nreturn [json.__name__, sys.flags.isolated]', { ws, env: { ...SECRETS, PYTHONPATH: join(ws, 'evil') } });
  assert.deepEqual(result.value, ['json', 1]);
});

test('cwd defaults to the workspace root', async () => {
  const { result, ws } = await runPython('import os\nreturn os.getcwd()');
  assert.equal(result.value, ws);
});
