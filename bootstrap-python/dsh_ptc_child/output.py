"""Captured output. sys.stdout/sys.stderr (so print, logging to stderr, warnings, ...) become
`text` frames sent synchronously. Native writes to fd 1 and fd 2 (os.write, C extensions,
processes the program starts) go into one pipe that replaces both descriptors; its bytes are
forwarded as `text` frames too, drained before every other frame, so Python-level and native
output keep the order in which they were written. A reader thread forwards pipe bytes that
arrive while the program is busy, so output written before a synchronous hot loop still
reaches the host."""

import _thread
import codecs
import io
import os
import select

from .run_state import talking_run

_PIPE_CHUNK = 65536


class _CapturedBytes(io.RawIOBase):
    """sys.stdout.buffer: bytes decoded as UTF-8 (a character split across writes is kept)."""

    def __init__(self, capture):
        self._capture = capture
        self._decoder = codecs.getincrementaldecoder('utf-8')('replace')

    def writable(self):
        return True

    def write(self, data):
        data = bytes(data)
        self._capture.emit(self._decoder.decode(data))
        return len(data)

    def flush_partial(self):
        return self._decoder.decode(b'', final=True)


class CapturedStream(io.TextIOBase):
    """A text stream whose writes are `text` frames of the talking run."""

    def __init__(self, capture, fileno):
        self._capture = capture
        self._fileno = fileno
        self.buffer = _CapturedBytes(capture)

    @property
    def encoding(self):
        return 'utf-8'

    @property
    def errors(self):
        return 'replace'

    def writable(self):
        return True

    def isatty(self):
        return False

    def fileno(self):
        return self._fileno

    def write(self, text):
        if not isinstance(text, str):
            raise TypeError(f'write() argument must be str, not {type(text).__name__}')
        self._capture.emit(self.buffer.flush_partial() + text)
        return len(text)

    def flush(self):
        pass


class OutputCapture:
    def __init__(self, writer):
        self._writer = writer
        self._native_read = -1
        self._native_decoder = codecs.getincrementaldecoder('utf-8')('replace')
        self.streams = []

    def emit(self, text):
        """Sends text for the talking run; dropped silently when no run may talk."""
        if not text:
            return
        run = talking_run()
        if run is not None:
            self._writer.send_text(run.id, text)

    def emit_image(self, image):
        run = talking_run()
        if run is not None:
            self._writer.send({'type': 'image', 'run': run.id, 'attachmentId': image.attachmentId,
                               'path': image.path, 'width': image.width, 'height': image.height})

    def install(self, sys_module):
        """Replaces fd 1/2 by the native pipe and sys.stdout/sys.stderr by captured streams."""
        read_fd, write_fd = os.pipe()
        os.set_blocking(read_fd, False)
        os.dup2(write_fd, 1)
        os.dup2(write_fd, 2)
        os.close(write_fd)
        self._native_read = read_fd
        self._writer.before_write = self._drain_native
        out, err = CapturedStream(self, 1), CapturedStream(self, 2)
        self.streams = [out, err]
        sys_module.stdout = sys_module.__stdout__ = out
        sys_module.stderr = sys_module.__stderr__ = err
        # A bare thread (not one of the threading module's, which the child does not load).
        _thread.start_new_thread(self._forward_native, ())

    def _drain_native(self):
        """Called with the writer lock held: forwards every byte already in the pipe. False once
        every writer closed it (the program closed fd 1 and 2)."""
        while True:
            try:
                data = os.read(self._native_read, _PIPE_CHUNK)
            except (BlockingIOError, InterruptedError):
                return True
            if not data:
                return False
            text = self._native_decoder.decode(data)
            run = talking_run()
            if text and run is not None:
                self._writer.send_text(run.id, text, drain=False)

    def _forward_native(self):
        poller = select.poll()
        poller.register(self._native_read, select.POLLIN)
        open_ = True
        while open_:
            poller.poll()
            with self._writer.lock:
                open_ = self._drain_native()

    def flush(self, run):
        """Everything written so far, before the run's terminal frame (writer lock held)."""
        self._drain_native()
        for stream in self.streams:
            rest = stream.buffer.flush_partial()
            if rest and run.can_talk:
                self._writer.send_text(run.id, rest, drain=False)
