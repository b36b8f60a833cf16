"""How programs run: without asyncio until something imports it. Importing asyncio costs several
times an interpreter's own start, and most programs never touch it, so the child starts without
it and steps a run's coroutine itself (`Driver`): a binding call's reply is a `CallFuture` the
driver waits for by reading the control channel, a bare `yield` resumes at once, anything else
is answered like an asyncio Task would (`RuntimeError: Task got bad yield`).

The first import of asyncio (by the program, a library or a thread) switches the child to an
asyncio event loop for good: once the import ran (import_watch.py), if it happened inside a step
of the program on the main thread, the driver creates the loop, marks it running and makes the
rest of that step belong to a real Task (`asyncio.current_task()`
is it, `asyncio.get_running_loop()` is the loop, tasks the program creates run on it), exactly
as if the program had been running in that Task from its start. The coroutine's remaining steps
are driven by that Task (`_Rest`), and from then on the control channel is a reader of the
loop. An import outside a step (another thread) switches at the next step boundary. A program
sees asyncio loaded only after something imported it."""

import _thread
import os
import select
import sys

from .import_watch import after_import


class CallFuture:
    """The reply to one binding call: settled by the control loop, awaited by the program."""

    __slots__ = ('_done', '_value', '_error', '_callbacks')

    def __init__(self):
        self._done = False
        self._value = None
        self._error = None
        self._callbacks = []

    def done(self):
        return self._done

    def set_result(self, value):
        self._settle(value, None)

    def set_exception(self, error):
        self._settle(None, error)

    def _settle(self, value, error):
        if self._done:
            return
        self._done, self._value, self._error = True, value, error
        callbacks, self._callbacks = self._callbacks, []
        for callback in callbacks:
            callback()

    def add_done_callback(self, callback):
        if self._done:
            callback()
        else:
            self._callbacks.append(callback)

    def __await__(self):
        if not self._done:
            loop = _driver.loop if _driver is not None else None
            if loop is None:
                yield self  # the driver reads the control channel until it is settled
            else:
                yield from _wait_on_loop(self, loop)
        if self._error is not None:
            raise self._error
        return self._value


def _wait_on_loop(call, loop):
    """Waits for a CallFuture inside a Task: through an asyncio future of the loop."""
    if not call.done():
        waiter = loop.create_future()
        call.add_done_callback(lambda: waiter.done() or waiter.set_result(None))
        yield from waiter


class _Handoff:
    """A run's coroutine as the driver left it: not started, suspended on `yielded`, or finished."""

    __slots__ = ('coro', 'yielded', 'started', 'finished', 'result')

    def __init__(self, coro):
        self.coro, self.yielded, self.started, self.finished, self.result = coro, None, False, False, None


class _Rest:
    """The rest of a coroutine the driver began, as the coroutine of a Task (registered as a
    `collections.abc.Coroutine` when asyncio is loaded): its first step hands the Task what the
    coroutine last yielded (or throws what the Task throws into the coroutine, suspended where
    it was), and every later send or throw goes to the coroutine. A CallFuture it yields is
    awaited through an asyncio future of the loop."""

    __slots__ = ('_handoff', '_loop', '_waiting', '_resumed')

    def __init__(self, handoff, loop):
        self._handoff, self._loop, self._waiting, self._resumed = handoff, loop, None, False

    def __await__(self):
        return self

    def __iter__(self):
        return self

    def __next__(self):
        return self.send(None)

    def send(self, value):
        return self._advance(value, None)

    def throw(self, typ, value=None, traceback=None):
        if value is None:
            value = typ if isinstance(typ, BaseException) else typ()
        if traceback is not None:
            value = value.with_traceback(traceback)
        return self._advance(None, value)

    def close(self):
        self._handoff.coro.close()

    def _advance(self, value, error):
        handoff = self._handoff
        if handoff.finished:
            raise StopIteration(handoff.result)
        if not self._resumed:
            self._resumed = True
            if handoff.started and error is None:
                return self._hand_up(handoff.yielded)
            if not handoff.started:
                value = None
        elif self._waiting is not None:
            try:
                return self._waiting.send(value) if error is None else self._waiting.throw(error)
            except StopIteration:
                value = error = None
            except BaseException as thrown:  # noqa: B036 - the coroutine sees what the wait raised
                error = thrown
            self._waiting = None
        while True:
            try:
                yielded = handoff.coro.send(value) if error is None else handoff.coro.throw(error)
            except StopIteration as stop:
                handoff.finished, handoff.result = True, stop.value
                raise
            handoff.started = True
            if not isinstance(yielded, CallFuture) or not yielded.done():
                return self._hand_up(yielded)
            value = error = None

    def _hand_up(self, yielded):
        if isinstance(yielded, CallFuture):
            if yielded.done():
                return self._advance(None, None)
            self._waiting = _wait_on_loop(yielded, self._loop)
            return next(self._waiting)
        return yielded


_driver = None


class Driver:
    """Runs callbacks and coroutines on the child's main thread: by itself until asyncio is
    imported, then on an asyncio event loop (`loop`)."""

    def __init__(self, control_fd, on_chunk, on_lost):
        global _driver
        _driver = self
        self.loop = None
        self._fd = control_fd
        self._on_chunk = on_chunk  # bytes read from the control channel
        self._on_lost = on_lost  # (OSError) when reading it fails
        self._soon = []
        self._main = _thread.get_ident()
        self._stepping = None  # the _Handoff of the step in progress on the main thread
        self._entered = None  # (loop, task) entered for the rest of that step
        after_import('asyncio', self._asyncio_loaded)

    def call_soon(self, callback):
        if self.loop is not None:
            self.loop.call_soon(callback)
        else:
            self._soon.append(callback)

    def start(self, coro):
        """Runs a coroutine to its end (its result is not kept)."""
        if self.loop is not None:
            self.loop.create_task(coro)
        else:
            handoff = _Handoff(coro)
            self._soon.append(lambda: self._drive(handoff))

    def serve(self, readable):
        """Reads the control channel and runs what it starts, forever; `readable` is the loop's
        reader once asyncio is in use."""
        while self.loop is None:
            while self._soon and self.loop is None:
                self._soon.pop(0)()
            if self.loop is None and 'asyncio' in sys.modules:
                self._make_loop()
            if self.loop is None:
                self._read()
        for callback in self._soon:
            self.loop.call_soon(callback)
        self._soon.clear()
        self.loop.add_reader(self._fd, readable)
        self.loop.run_forever()

    def _read(self):
        try:
            chunk = os.read(self._fd, 65536)
        except InterruptedError:
            return
        except BlockingIOError:
            select.select([self._fd], [], [])
            return
        except OSError as error:
            self._on_lost(error)
            return
        self._on_chunk(chunk)

    def _drive(self, handoff):
        """Steps a coroutine until it ends or the child switches to asyncio (then a Task takes
        the rest). Runs on the main thread, from serve(), never inside a frame's handling."""
        coro = handoff.coro
        while True:
            if 'asyncio' in sys.modules and self.loop is None:
                self._make_loop()  # imported where the finder could not switch (a thread)
            if self.loop is not None:
                self.loop.create_task(_Rest(handoff, self.loop))
                return
            send = error = None
            if handoff.started:
                yielded = handoff.yielded
                if isinstance(yielded, CallFuture):
                    if not yielded.done():
                        self._read()
                        continue
                elif yielded is not None:
                    error = RuntimeError(f'Task got bad yield: {yielded!r}')
            self._stepping = handoff
            try:
                handoff.yielded = coro.send(send) if error is None else coro.throw(error)
            except StopIteration as stop:
                handoff.finished, handoff.result = True, stop.value
            finally:
                self._stepping = None
                handoff.started = True
            if self._entered is not None:
                # asyncio was imported in this step: the Task made for it takes the rest.
                loop, task = self._entered
                self._entered = None
                import asyncio
                asyncio.tasks._leave_task(loop, task)
                asyncio._set_running_loop(None)
                return
            if handoff.finished:
                return

    def _asyncio_loaded(self, _module):
        if self.loop is not None or _thread.get_ident() != self._main:
            return
        self._make_loop()
        if self._stepping is not None:
            # The rest of this step runs as a Task of the new loop, which is running for it.
            import asyncio
            task = self.loop.create_task(_Rest(self._stepping, self.loop))
            asyncio._set_running_loop(self.loop)
            asyncio.tasks._enter_task(self.loop, task)
            self._entered = (self.loop, task)

    def _make_loop(self):
        import asyncio
        import collections.abc
        collections.abc.Coroutine.register(_Rest)
        loop = asyncio.new_event_loop()
        asyncio.set_event_loop(loop)
        self.loop = loop
