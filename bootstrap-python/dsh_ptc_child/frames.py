"""Control frames on fd 3 (bootstrap/PROTOCOL.md): size-checked line reading and synchronous,
ordered writes. Every write happens under one lock, so frames from the program's thread and the
native-output reader thread never interleave, and output reaches the host before the next
statement runs (text printed just before a synchronous hot loop is not lost)."""

import _thread
import os
import time

from .json_text import dumps, loads

TRUNCATION_MARK = '\n... [message truncated]'


class FrameTooLargeError(Exception):
    def __init__(self, size, limit):
        super().__init__(f'control frame of {size} bytes exceeds the {limit}-byte message limit')


class FrameError(Exception):
    pass


def well_formed(text):
    """Lone surrogates become U+FFFD (the host needs valid UTF-8); pairs become characters."""
    try:
        text.encode('utf-8')
        return text
    except UnicodeEncodeError:
        return text.encode('utf-16', 'surrogatepass').decode('utf-16', 'replace')


class FrameWriter:
    def __init__(self, fd, max_bytes, on_lost):
        self.fd = fd
        self.max_bytes = max_bytes
        self._on_lost = on_lost
        self._lost = False
        # Reentrant: a write may first drain native output (output.py), which writes frames too.
        self.lock = _thread.RLock()
        self.before_write = None  # called under the lock before every frame (native drain)
        os.register_at_fork(before=self.lock.acquire, after_in_parent=self.lock.release,
                            after_in_child=self._reset_after_fork)

    def _reset_after_fork(self):
        self.lock = _thread.RLock()

    def send_json(self, json_text, drain=True):
        """Sends one frame given as JSON text (no newline); FrameTooLargeError if it is over the
        limit, and nothing is written then."""
        data = json_text.encode('utf-8')
        if len(data) > self.max_bytes:
            raise FrameTooLargeError(len(data), self.max_bytes)
        with self.lock:
            if drain and self.before_write is not None:
                self.before_write()
            self._write_all(data + b'\n')

    def send(self, frame, drain=True):
        self.send_json(dumps(frame), drain)

    def send_text(self, run, text, drain=True):
        """Sends text as one or more `text` frames, none over the limit, split at code points."""
        if not text:
            return
        text = well_formed(text)
        prefix = f'{{"type":"text","run":{run},"text":'
        with self.lock:
            if drain and self.before_write is not None:
                self.before_write()
            for piece in self._pieces(prefix, text):
                self._write_all((prefix + dumps(piece) + '}\n').encode('utf-8'))

    def _pieces(self, prefix, text):
        overhead = len(prefix.encode('utf-8')) + 3
        budget = max(1, self.max_bytes - overhead)
        start = 0
        while start < len(text):
            end = min(len(text), start + budget)
            # Halve until the escaped piece fits; always take at least one code point.
            while end - start > 1 and len(dumps(text[start:end]).encode('utf-8')) - 2 > budget:
                end = start + (end - start) // 2
            yield text[start:end]
            start = end

    def _write_all(self, data):
        if self._lost:
            return
        view = memoryview(data)
        while view:
            try:
                written = os.write(self.fd, view)
            except InterruptedError:
                continue
            except BlockingIOError:
                time.sleep(0.001)
                continue
            except OSError as error:
                self._lost = True
                self._on_lost(error)
                return
            view = view[written:]


class FrameReader:
    """Splits the incoming byte stream into newline-terminated JSON objects. A frame over the
    limit is refused before more of it is buffered."""

    def __init__(self, max_bytes, on_frame, on_error):
        self._max_bytes = max_bytes
        self._on_frame = on_frame
        self._on_error = on_error
        self._pending = bytearray()
        self._failed = False

    def push(self, chunk):
        start = 0
        while not self._failed and start < len(chunk):
            newline = chunk.find(b'\n', start)
            if newline == -1:
                self._buffer(chunk[start:])
                return
            self._buffer(chunk[start:newline])
            if self._failed:
                return
            line = bytes(self._pending)
            self._pending.clear()
            start = newline + 1
            self._deliver(line)

    def _buffer(self, data):
        if len(self._pending) + len(data) > self._max_bytes:
            self._fail(f'incoming control frame exceeds {self._max_bytes} bytes')
            return
        self._pending += data

    def _deliver(self, line):
        try:
            frame = loads(line.decode('utf-8'))
        except (ValueError, UnicodeDecodeError) as error:
            self._fail(f'incoming control frame is not JSON: {error}')
            return
        if not isinstance(frame, dict):
            self._fail('incoming control frame is not a JSON object')
            return
        self._on_frame(frame)

    def _fail(self, message):
        self._failed = True
        self._pending.clear()
        self._on_error(FrameError(message))
