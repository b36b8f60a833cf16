// Confinement of the Python child: empty os.environ, isolated interpreter, no inherited secrets
// or control descriptor.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { BOOTSTRAP_DIR, DEFAULT_ENV, valueOf } from './python-child.js';

test('os.environ is empty for the program', async () => {
  assert.deepEqual(await valueOf('import os\nreturn [dict(os.environ), dict((k.decode(), v.decode()) for k, v in os.environb.items()), os.getenv("PTC_TEST_SECRET")]'), [{}, {}, null]);
});

test('a started process sees only the kept paths plus what the program set', async () => {
  const env = await valueOf([
    'import os, subprocess',
    'os.environ["MINE"] = "1"',
    'out = subprocess.run(["/usr/bin/env"], capture_output=True, text=True).stdout',
    'return sorted(line.split("=")[0] for line in out.splitlines())',
  ].join('\n'));
  assert.deepEqual(env, ['MINE', 'PATH', 'TMPDIR']);
  assert.ok(DEFAULT_ENV.PTC_TEST_SECRET, 'the fake host passes a secret the child must drop');
});

test('the HTTPS proxy a network allow-list sets reaches started processes; other proxies do not', async () => {
  const env = await valueOf([
    'import os, subprocess',
    'out = subprocess.run(["/usr/bin/env"], capture_output=True, text=True).stdout',
    'return [sorted(line.split("=")[0] for line in out.splitlines()), dict(os.environ)]',
  ].join('\n'), { env: { ...DEFAULT_ENV, HTTPS_PROXY: 'http://127.0.0.1:3128', https_proxy: 'http://127.0.0.1:3128',
    HTTP_PROXY: 'http://evil:1', ALL_PROXY: 'socks5://evil:1' } });
  assert.deepEqual(env, [['HTTPS_PROXY', 'PATH', 'TMPDIR', 'https_proxy'], {}]);
});

test('tempfile uses the TMPDIR the host gave', async () => {
  assert.equal(await valueOf('import tempfile\nreturn tempfile.gettempdir()'), DEFAULT_ENV.TMPDIR);
});

test('the interpreter is isolated: -I -S, no site-packages, no bootstrap on sys.path', async () => {
  const [isolated, noSite, site, paths] = await valueOf('import sys\nreturn [sys.flags.isolated, sys.flags.no_site, "site" in sys.modules, sys.path]', { cwd: '/tmp' });
  assert.equal(isolated, 1);
  assert.equal(noSite, 1);
  assert.equal(site, false);
  assert.equal(paths[0], '/tmp');
  assert.equal(paths.some((p) => p.includes('site-packages') || p.includes('dist-packages') || p.startsWith(BOOTSTRAP_DIR)), false);
});

test('modules next to the program import from its cwd', async () => {
  const { mkdtempSync, writeFileSync, realpathSync } = await import('node:fs');
  const { join } = await import('node:path');
  const { tmpdir } = await import('node:os');
  const dir = realpathSync(mkdtempSync(join(tmpdir(), 'py-cwd-')));
  writeFileSync(join(dir, 'helper_mod.py'), 'VALUE = 41\n');
  assert.equal(await valueOf('import os, helper_mod\nreturn [helper_mod.VALUE + 1, os.getcwd()]', { cwd: dir }).then((v) => v[0]), 42);
});

test('the control descriptor is not inherited by processes the program starts', async () => {
  // close_fds=False: only the descriptor's own close-on-exec flag keeps it from the child.
  const links = await valueOf('import subprocess\nreturn subprocess.run(["/bin/sh", "-c", "for f in /proc/$$/fd/*; do readlink $f; done"], capture_output=True, text=True, close_fds=False).stdout.split()');
  assert.equal(links.some((link) => link.startsWith('socket:')), false, `descriptors: ${links}`);
});
