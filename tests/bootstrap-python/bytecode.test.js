// The child's own modules come from what the build compiled (bootstrap-python/make_bundle.py,
// run by meson.build on every build): child-bundle.bin, used while every source still has the
// size and modification time it was built from, and else hash-checked `__pycache__` files (the
// child, started with -B, never writes either).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { cpSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { BOOTSTRAP_DIR, PYTHON, valueOf } from './python-child.js';

const CHECK = `
import importlib.util, os, sys
package = os.path.join(sys.argv[1], 'dsh_ptc_child')
stale = []
for name in sorted(os.listdir(package)):
    if not name.endswith('.py'):
        continue
    source = os.path.join(package, name)
    try:
        with open(importlib.util.cache_from_source(source), 'rb') as cached:
            header = cached.read(16)
    except OSError:
        stale.append(name + ': none')
        continue
    with open(source, 'rb') as text:
        digest = importlib.util.source_hash(text.read())
    if header[:4] != importlib.util.MAGIC_NUMBER or int.from_bytes(header[4:8], 'little') != 3 or header[8:] != digest:
        stale.append(name + ': stale or not hash-checked')
print('\\n'.join(stale))
`;

test('every module of the child has current, hash-checked bytecode', () => {
  assert.equal(execFileSync(PYTHON, ['-I', '-S', '-B', '-c', CHECK, BOOTSTRAP_DIR], { encoding: 'utf8' }).trim(), '');
});

// Which loader served the package, and whether the bundle's finder is still in sys.meta_path.
const LOADERS = 'import sys\nreturn [type(sys.modules["dsh_ptc_child.driver"].__loader__).__name__, [type(f).__name__ for f in sys.meta_path if type(f).__name__ == "BundleFinder"]]';

test('the child serves its package from the current bundle, which programs do not see in sys.meta_path', async () => {
  assert.deepEqual(await valueOf(LOADERS), ['BundleFinder', []]);
});

for (const preserveTimestamps of [false, true]) {
  test(`a copy of the bootstrap ${preserveTimestamps ? 'with' : 'without'} its sources' times ${preserveTimestamps ? 'uses' : 'does not use'} the bundle`, async () => {
    const dir = mkdtempSync(join(tmpdir(), 'py-bundle-'));
    try {
      cpSync(BOOTSTRAP_DIR, dir, { recursive: true, preserveTimestamps });
      const value = await valueOf(LOADERS, { command: [PYTHON, '-I', '-S', '-B', join(dir, 'process.py')] });
      assert.deepEqual(value, [preserveTimestamps ? 'BundleFinder' : 'SourceFileLoader', []]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
}

test('what the build wrote names no path of this tree; loaded code has its real file name', async () => {
  const { readFileSync, readdirSync } = await import('node:fs');
  const written = [join(BOOTSTRAP_DIR, 'child-bundle.bin'),
    ...readdirSync(join(BOOTSTRAP_DIR, 'dsh_ptc_child', '__pycache__')).map((name) => join(BOOTSTRAP_DIR, 'dsh_ptc_child', '__pycache__', name))];
  for (const file of written) assert.equal(readFileSync(file).includes(BOOTSTRAP_DIR), false, file);
  assert.equal(await valueOf('import sys\nreturn sys.modules["dsh_ptc_child.frames"].FrameWriter.send.__code__.co_filename'),
    join(BOOTSTRAP_DIR, 'dsh_ptc_child', 'frames.py'));
});
