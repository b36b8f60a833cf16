"""Build step (meson.build, every build): compiles the child's package for the interpreter that
runs this script (Debian's python3, the runtime's default) into

- `child-bundle.bin` next to the sources: every module of dsh_ptc_child/ as one marshalled
  table, with the interpreter's bytecode magic and each source's size and modification time (whole
  seconds, as CPython's own bytecode files keep it).
  process.py serves the package from it when all of those still match (one read instead of a
  path search, a bytecode file and a source file per module), and imports normally otherwise;
- `dsh_ptc_child/__pycache__/`: hash-checked bytecode of each module, what a normal import of a
  stale or refused bundle reads (a source edited since is compiled from its text again).

Both are git-ignored and rewritten only when their content changed.
Usage: python3 make_bundle.py [--stamp FILE]"""

import marshal
import os
import py_compile
import sys
from importlib.util import MAGIC_NUMBER

HERE = os.path.dirname(os.path.abspath(__file__))
PACKAGE = 'dsh_ptc_child'
BUNDLE = os.path.join(HERE, 'child-bundle.bin')


def bundle_bytes():
    sources, codes = {}, {}
    directory = os.path.join(HERE, PACKAGE)
    for name in sorted(os.listdir(directory)):
        if not name.endswith('.py'):
            continue
        path = os.path.join(directory, name)
        with open(path, 'rb') as source:
            text = source.read()
        status = os.stat(path)
        relative = f'{PACKAGE}/{name}'
        module = PACKAGE if name == '__init__.py' else f'{PACKAGE}.{name[:-3]}'
        sources[relative] = (status.st_mtime_ns // 1_000_000_000, status.st_size)  # as bytecode files keep them
        # Named by the relative path: nothing built here names this tree (the installed copy must
        # not), and the loader gives the code its real file name, as for bytecode files.
        codes[module] = (relative, compile(text, relative, 'exec', dont_inherit=True))
    return marshal.dumps((MAGIC_NUMBER, sources, codes))


def write_if_changed(path, data):
    try:
        with open(path, 'rb') as existing:
            if existing.read() == data:
                return
    except OSError:
        pass
    temporary = f'{path}.{os.getpid()}.tmp'
    with open(temporary, 'wb') as out:
        out.write(data)
    os.replace(temporary, path)  # a child starting meanwhile reads the old file or the new one


def main(argv):
    write_if_changed(BUNDLE, bundle_bytes())
    directory = os.path.join(HERE, PACKAGE)
    for name in sorted(os.listdir(directory)):
        if name.endswith('.py'):
            py_compile.compile(os.path.join(directory, name), dfile=f'{PACKAGE}/{name}', doraise=True,
                               invalidation_mode=py_compile.PycInvalidationMode.CHECKED_HASH)
    if len(argv) == 2 and argv[0] == '--stamp':
        with open(argv[1], 'w'):
            pass


if __name__ == '__main__':
    main(sys.argv[1:])
