"""Child entry point, started by the host as
    python3 -I -S -B process.py --max-message-bytes=<N> --max-pending-calls=<N>
with fd 3 = the control socket. Finds the bootstrap's package (dsh_ptc_child/entry.py sends
`hello`, checks the Python version, confines the environment, captures output, then evaluates
`run` frames one at a time, bootstrap/PROTOCOL.md). It never closes fd 3 itself and exits when
the host closes it. `-I` keeps the script directory, the user site and PYTHON* variables out,
`-S` skips site-packages. The interpreter compiles this file from its text at every start, so
it holds only what must run before the package is found."""

import os
import sys


class BundleFinder:
    """Serves the package's modules from child-bundle.bin (make_bundle.py), which the build
    wrote for this interpreter from the sources as they still are (sizes and modification
    times); in sys.meta_path only while the bootstrap imports itself."""

    def __init__(self, here, codes):
        self._here = here
        self._codes = codes

    @classmethod
    def load(cls, here):
        """The finder, or None when there is no bundle or it does not match (then the package
        is imported from its files)."""
        import marshal
        from _frozen_importlib_external import MAGIC_NUMBER
        try:
            with open(os.path.join(here, 'child-bundle.bin'), 'rb') as bundle:
                magic, sources, codes = marshal.loads(bundle.read())
            if magic != MAGIC_NUMBER:
                return None
            for relative, (mtime, size) in sources.items():
                status = os.stat(os.path.join(here, relative))
                if (status.st_mtime_ns // 1_000_000_000, status.st_size) != (mtime, size):
                    return None
        except (OSError, ValueError, EOFError, TypeError):
            return None
        return cls(here, codes)

    def find_spec(self, name, path=None, target=None):
        entry = self._codes.get(name)
        if entry is None:
            return None
        from _frozen_importlib import ModuleSpec
        origin = os.path.join(self._here, entry[0])
        spec = ModuleSpec(name, self, origin=origin, is_package=name == 'dsh_ptc_child')
        if spec.submodule_search_locations is not None:
            spec.submodule_search_locations.append(os.path.dirname(origin))
        spec.has_location = True
        return spec

    def create_module(self, spec):
        return None

    def exec_module(self, module):
        import _imp
        code = self._codes[module.__name__][1]
        _imp._fix_co_filename(code, module.__spec__.origin)  # as a bytecode file's code gets it
        exec(code, module.__dict__)


def main():
    # The bootstrap's own modules (from the bundle when it is current); once they are loaded its
    # directory and the bundle leave the paths programs import from.
    here = os.path.dirname(os.path.abspath(__file__))
    bundle = BundleFinder.load(here)
    sys.path.insert(0, here)
    if bundle is not None:
        sys.meta_path.insert(0, bundle)

    def imported():
        sys.path.remove(here)
        if bundle is not None:
            sys.meta_path.remove(bundle)

    from dsh_ptc_child.entry import main as run_child
    run_child(sys.argv[1:], imported)


main()
