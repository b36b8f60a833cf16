"""Child entry point, started by the host as
    python3 -I -S -B process.py --max-message-bytes=<N> --max-pending-calls=<N>
with fd 3 = the control socket. Sends `hello`, checks the Python version, confines the
environment, captures output, then evaluates `run` frames one at a time (bootstrap/PROTOCOL.md).
It never closes fd 3 itself and exits when the host closes it. `-I` keeps the script directory,
the user site and PYTHON* variables out, `-S` skips site-packages."""

import os
import sys

CONTROL_FD = 3
PROTOCOL_REVISION = 1
MIN_PYTHON = (3, 11)
DEFAULTS = {'max_message_bytes': 134217728, 'max_pending_calls': 128}
FLAGS = {'--max-message-bytes': 'max_message_bytes', '--max-pending-calls': 'max_pending_calls'}

# Diagnostics go to the stderr the host gave us, kept aside before fd 2 becomes captured output.
_diagnostic_fd = os.dup(2)


def diagnose(message):
    try:
        os.write(_diagnostic_fd, f'ptc bootstrap: {message}\n'.encode('utf-8', 'replace'))
    except OSError:
        pass


def parse_options(argv):
    options = dict(DEFAULTS)
    for argument in argv:
        name, eq, value = argument.partition('=')
        key = FLAGS.get(name)
        if key is None:
            raise ValueError(f'unknown bootstrap argument: {argument}')
        if not eq or not value.isdigit() or int(value) < 1:
            raise ValueError(f'bootstrap argument needs a positive integer: {argument}')
        options[key] = int(value)
    return options


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
    try:
        options = parse_options(sys.argv[1:])
    except ValueError as error:
        diagnose(str(error))
        os._exit(2)
    # The bootstrap's own modules (from the bundle when it is current), then its directory and
    # the bundle leave the paths programs import from.
    here = os.path.dirname(os.path.abspath(__file__))
    bundle = BundleFinder.load(here)
    sys.path.insert(0, here)
    if bundle is not None:
        sys.meta_path.insert(0, bundle)
    from dsh_ptc_child.frames import FrameWriter
    sys.path.remove(here)

    def lost(error):
        diagnose(f'control channel lost: {error.strerror or error}')
        os._exit(1)

    writer = FrameWriter(CONTROL_FD, options['max_message_bytes'], lost)
    version = '.'.join(str(part) for part in sys.version_info[:3])
    writer.send({'type': 'hello', 'protocol': PROTOCOL_REVISION, 'python': version})
    if sys.version_info[:2] < MIN_PYTHON:
        diagnose(f'Python {version} is older than {MIN_PYTHON[0]}.{MIN_PYTHON[1]}')
        os._exit(1)
    sys.path.insert(0, here)
    from dsh_ptc_child.child_main import start_child
    sys.path.remove(here)
    if bundle is not None:
        sys.meta_path.remove(bundle)
    start_child(writer, options, CONTROL_FD, diagnose)


main()
