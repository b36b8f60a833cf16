// The child's own modules come from bytecode the build compiled (meson.build,
// `bootstrap-python-bytecode`): next to every module of dsh_ptc_child/ a hash-checked
// `__pycache__` file of the runtime's interpreter whose hash is the current source's, so the
// child (started with -B, never writing) unmarshals instead of compiling.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { BOOTSTRAP_DIR, PYTHON } from './python-child.js';

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
