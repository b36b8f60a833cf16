"""Wires the child together after `hello`: environment confinement, output capture, the fd-3
reader feeding the control loop, and the driver that runs programs (driver.py: by itself until
asyncio is imported, then on an asyncio event loop)."""

import _warnings
import os
import sys

from .child_loop import ChildLoop
from .driver import Driver
from .environment import confine_environment
from .frames import FrameReader
from .output import OutputCapture


def start_child(writer, options, control_fd, diagnose):
    confine_environment(control_fd)
    output = OutputCapture(writer)
    output.install(sys)
    # Warnings (never-awaited coroutines, deprecations) are output like in `python3`, once each:
    # warnings.simplefilter('default') on the filter list the C module and, once something
    # imports it, the warnings module share (the module itself is not loaded for it).
    mutated = getattr(_warnings, '_filters_mutated', None)
    if mutated is not None:
        _warnings.filters.insert(0, ('default', None, Warning, None, 0))
        mutated()
    else:  # an interpreter whose C module has another shape: the module itself
        import warnings
        warnings.simplefilter('default')

    def protocol_error(message):
        diagnose(f'protocol error: {message}')
        os._exit(2)

    def lost(error):
        diagnose(f'control channel error: {error.strerror}')
        os._exit(1)

    def received(chunk):
        if not chunk:
            os._exit(0)  # the host closed the channel
        reader.push(chunk)

    def readable():
        try:
            chunk = os.read(control_fd, 65536)
        except (BlockingIOError, InterruptedError):
            return
        except OSError as error:
            lost(error)
        received(chunk)

    driver = Driver(control_fd, received, lost)
    child = ChildLoop(writer, output, options, driver, protocol_error)
    reader = FrameReader(options['max_message_bytes'], child.handle_frame, lambda error: protocol_error(str(error)))
    driver.serve(readable)
