"""The child's start after process.py found the package: argv, `hello`, the Python version gate,
then the rest of the bootstrap (child_main.py). Kept out of process.py, which the interpreter
compiles from its text at every start, while this module comes from the build's bundle."""

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


def main(argv, imported):
    """Runs the child; `imported()` takes the bootstrap's directory and bundle off the import
    paths once its own modules are loaded."""
    try:
        options = parse_options(argv)
    except ValueError as error:
        diagnose(str(error))
        os._exit(2)
    from .frames import FrameWriter

    def lost(error):
        diagnose(f'control channel lost: {error.strerror or error}')
        os._exit(1)

    writer = FrameWriter(CONTROL_FD, options['max_message_bytes'], lost)
    version = '.'.join(str(part) for part in sys.version_info[:3])
    writer.send({'type': 'hello', 'protocol': PROTOCOL_REVISION, 'python': version})
    if sys.version_info[:2] < MIN_PYTHON:
        diagnose(f'Python {version} is older than {MIN_PYTHON[0]}.{MIN_PYTHON[1]}')
        os._exit(1)
    from .child_main import start_child
    imported()
    start_child(writer, options, CONTROL_FD, diagnose)
