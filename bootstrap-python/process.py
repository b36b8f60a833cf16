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


def main():
    try:
        options = parse_options(sys.argv[1:])
    except ValueError as error:
        diagnose(str(error))
        os._exit(2)
    # The bootstrap's own modules, then its directory leaves the path programs import from.
    here = os.path.dirname(os.path.abspath(__file__))
    sys.path.insert(0, here)
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
    start_child(writer, options, CONTROL_FD, diagnose)


main()
