"""Binding namespaces: `await tools.search(q="x")` sends a `call` frame and resumes when the
host answers with `reply`. Each namespace is an object whose methods are coroutine functions
taking one JSON argument: `f(value)` sends `[value]`, `f(key=value, ...)` collects the keyword
arguments into one dict and sends `[{...}]`, `f()` sends `[]`. Arguments must be lossless JSON;
the number of open calls and their argument bytes are bounded so a program cannot flood the
host. A host rejection raises the namespace's error class (an Exception subclass) with `member`
set to the called function's name."""

from .driver import CallFuture
from .frames import FrameTooLargeError
from .lossless import LossyValueError, encode_lossless
from .run_state import active_run

DEFAULT_ERROR_CLASS = 'ToolCallError'

_error_classes = {}  # name -> class, shared by every binding naming it


def _error_init(self, message='', member=None):
    Exception.__init__(self, message)
    self.message = message
    self.member = member


def error_class_for(name):
    cls = _error_classes.get(name)
    if cls is None:
        cls = type(name, (Exception,), {'__init__': _error_init, '__module__': 'builtins',
                                        '__doc__': 'A binding call the host rejected; `member` names the function.'})
        _error_classes[name] = cls
    return cls


class Namespace:
    """A binding namespace; its methods are the declared functions."""

    def __init__(self, global_name, methods):
        object.__setattr__(self, '_dsh_global', global_name)
        for name, method in methods.items():
            object.__setattr__(self, name, method)

    def __repr__(self):
        names = ', '.join(name for name in vars(self) if name != '_dsh_global')
        return f'<bindings {self._dsh_global}: {names}>'


class _Pending:
    __slots__ = ('future', 'size', 'label', 'name', 'error_class')

    def __init__(self, future, size, label, name, error_class):
        self.future, self.size, self.label, self.name, self.error_class = future, size, label, name, error_class


class Bindings:
    def __init__(self, writer, max_pending_calls, max_message_bytes):
        self._writer = writer
        self._max_pending = max_pending_calls
        self._max_bytes = max_message_bytes

    def globals_for(self, bindings):
        """{name: value}: each namespace and its error class, new objects for every run."""
        out = {}
        for binding in bindings:
            class_name = binding.get('errorClass') or DEFAULT_ERROR_CLASS
            error_class = error_class_for(class_name)
            out[class_name] = error_class
            methods = {name: self._method(binding['global'], name, error_class) for name in binding['functions']}
            out[binding['global']] = Namespace(binding['global'], methods)
        return out

    def _method(self, global_name, name, error_class):
        bindings = self

        async def method(*args, **kwargs):
            return await bindings._call(global_name, name, error_class, args, kwargs)

        method.__name__ = name
        method.__qualname__ = f'{global_name}.{name}'
        return method

    async def _call(self, global_name, name, error_class, args, kwargs):
        label = f'{global_name}.{name}'
        run = active_run()
        if run is None or run.settled:
            await CallFuture()  # an ended run's call never settles
        if run.revoked:
            raise error_class(f'{label}: the run was revoked', name)
        if (global_name, name) not in run.binding_keys:
            raise error_class(f'{label} is not available in this evaluation', name)
        if len(args) > 1 or (args and kwargs):
            raise TypeError(f'{label} takes one JSON argument or keyword arguments, not both or more')
        values = [kwargs] if kwargs else list(args)
        try:
            # Each argument is a value of its own for the depth limit, as in the Node runtime.
            args_json = '[' + ','.join(encode_lossless(value, f'args[{i}]') for i, value in enumerate(values)) + ']'
        except LossyValueError as error:
            raise TypeError(f'{label}: arguments are not lossless JSON: {error}') from None
        if len(run.pending) >= self._max_pending:
            raise RuntimeError(f'{label}: too many pending binding calls (limit {self._max_pending})')
        size = len(args_json.encode('utf-8'))
        if run.outstanding_bytes + size > self._max_bytes:
            raise RuntimeError(f'{label}: outstanding binding arguments would exceed {self._max_bytes} bytes')
        call_id = run.next_call_id
        frame = (f'{{"type":"call","run":{run.id},"call":{call_id},"global":{encode_lossless(global_name)},'
                 f'"name":{encode_lossless(name)},"args":{args_json}}}')
        try:
            self._writer.send_json(frame)
        except FrameTooLargeError:
            raise RuntimeError(f'{label}: call message exceeds {self._max_bytes} bytes') from None
        run.next_call_id += 1
        future = CallFuture()
        run.pending[call_id] = _Pending(future, size, label, name, error_class)
        run.outstanding_bytes += size
        return await future

    def reply(self, run, frame):
        """Settles an open call of run from a `reply` frame; unknown ids are ignored."""
        if run is None or run.settled:
            return
        call = run.pending.pop(frame.get('call'), None) if type(frame.get('call')) is int else None
        if call is None:
            return
        run.outstanding_bytes -= call.size
        if frame.get('ok') is True:
            call.future.set_result(frame.get('value'))
            return
        message = frame.get('message')
        if not isinstance(message, str):
            message = f'{call.label} failed'
        call.future.set_exception(call.error_class(message, call.name))

    def revoke_all(self, run):
        for call in run.pending.values():
            run.outstanding_bytes -= call.size
            if not call.future.done():
                call.future.set_exception(call.error_class(f'{call.label}: the run was revoked', call.name))
        run.pending.clear()
