"""The child's control loop: takes `run`, `reply`, `revoke` and `image-register` frames,
evaluates one program at a time through the driver (driver.py) and sends exactly one terminal
frame per run (`result`, or `revoked` after a revoke). Once that frame is selected the run is
settled: later output and binding calls of its leftover tasks are dropped."""

import builtins
import os
import sys

from .bindings import Bindings
from .frames import TRUNCATION_MARK, dumps, well_formed
from .images import Image, check_image_descriptor, register_image
from .inspect_values import create_inspect
from .lossless import LossyValueError, encode_lossless
from .program import PROGRAM_NAME, ProgramSyntaxError, compile_program, format_exception
from .run_state import Run, active_run, set_active_run

FORMAT = 'async-function'


def _check_run_frame(frame):
    """What is wrong with a `run` frame, or None."""
    if type(frame.get('run')) is not int or frame['run'] < 1:
        return 'run frame needs a positive integer `run`'
    for key in ('format', 'program', 'cwd'):
        if not isinstance(frame.get(key), str):
            return f'run frame needs a string `{key}`'
    if frame.get('retain') not in (None, True, False):
        return 'run frame `retain` must be a boolean'
    if frame.get('initializer') is not None and not isinstance(frame['initializer'], str):
        return 'run frame `initializer` must be a string'
    images = frame.get('images')
    if images is not None:
        if not isinstance(images, list):
            return 'run frame `images` must be an array'
        for image in images:
            problem = check_image_descriptor(image)
            if problem is not None:
                return problem
    bindings = frame.get('bindings')
    if bindings is None:
        bindings = []
    if not isinstance(bindings, list):
        return 'run frame `bindings` must be an array'
    for binding in bindings:
        if not isinstance(binding, dict):
            return 'binding entries must be objects'
        if not isinstance(binding.get('global'), str) or binding['global'] == '':
            return 'binding `global` must be a string'
        functions = binding.get('functions')
        if not isinstance(functions, list) or not all(isinstance(name, str) for name in functions):
            return 'binding `functions` must be an array of strings'
        if binding.get('errorClass') is not None and not isinstance(binding['errorClass'], str):
            return 'binding `errorClass` must be a string'
    return None


def result_frame(run_id, outcome, max_bytes):
    """The JSON text of the terminal `result` frame, within the message limit. A completion too
    large for one frame is invalid-output; an oversized error message is shortened."""
    if outcome['ok']:
        # None (also a body without `return`) is no completion, like `undefined` in Node.
        if outcome.get('discard') or outcome['value'] is None:
            return f'{{"type":"result","run":{run_id},"ok":true}}'
        try:
            value_json = encode_lossless(outcome['value'], 'result')
        except LossyValueError as error:
            return _error_frame(run_id, 'invalid-output', str(error), max_bytes)
        frame = f'{{"type":"result","run":{run_id},"ok":true,"value":{value_json}}}'
        if len(frame.encode('utf-8')) <= max_bytes:
            return frame
        return _error_frame(run_id, 'invalid-output',
                            f'result is {len(value_json.encode("utf-8"))} bytes of JSON, more than the '
                            f'{max_bytes}-byte control message limit', max_bytes)
    return _error_frame(run_id, outcome['kind'], outcome['message'], max_bytes)


def _error_frame(run_id, kind, message, max_bytes):
    def frame_for(text):
        return dumps({'type': 'result', 'run': run_id, 'ok': False, 'error': {'kind': kind, 'message': text}})

    message = well_formed(message)
    full = frame_for(message)
    if len(full.encode('utf-8')) <= max_bytes:
        return full
    low, high = 0, len(message)
    while low < high:
        mid = (low + high + 1) // 2
        if len(frame_for(message[:mid] + TRUNCATION_MARK).encode('utf-8')) <= max_bytes:
            low = mid
        else:
            high = mid - 1
    return frame_for(message[:low] + TRUNCATION_MARK)


class ChildLoop:
    def __init__(self, writer, output, options, driver, on_protocol_error):
        self._writer = writer
        self._output = output
        self._bindings = Bindings(writer, options['max_pending_calls'], options['max_message_bytes'])
        self._on_protocol_error = on_protocol_error
        self._inspect = create_inspect(output.emit, output.emit_image)
        self._queue = []
        self._driver = driver

    def handle_frame(self, frame):
        kind = frame.get('type')
        if kind == 'run':
            problem = _check_run_frame(frame)
            if problem is not None:
                self._on_protocol_error(problem)
                return
            for image in frame.get('images') or []:
                register_image(image)
            self._queue.append(frame)
            if active_run() is None:
                self._start_next()
        elif kind == 'image-register':
            problem = check_image_descriptor(frame)
            if problem is not None:
                self._on_protocol_error(problem)
                return
            register_image(frame)
        elif kind == 'reply':
            self._bindings.reply(active_run(), frame)
        elif kind == 'revoke':
            self._revoke(frame.get('run'))
        elif kind != 'init-ack':  # init-ack is ignored: this runtime has no environment initializers
            # A frame this child does not handle is answered, as the Node child does (PROTOCOL.md).
            message = (f'unsupported control frame type {dumps(kind)}' if isinstance(kind, str)
                       else 'control frame without a string type')
            self._writer.send({'type': 'error', 'frame': kind if isinstance(kind, str) else None, 'message': message})

    def _start_next(self):
        if active_run() is not None or not self._queue:
            return
        frame = self._queue.pop(0)
        bindings = frame.get('bindings') or []
        keys = {(binding['global'], name) for binding in bindings for name in binding['functions']}
        run = Run(frame['run'], keys)
        set_active_run(run)
        self._driver.start(self._execute(run, frame))

    def _program_globals(self, bindings):
        scope = {'__name__': '__main__', '__doc__': None, '__builtins__': builtins}
        scope.update(self._bindings.globals_for(bindings))
        scope['inspect'] = self._inspect
        scope['Image'] = Image
        return scope

    async def _execute(self, run, frame):
        if frame['format'] != FORMAT:
            self._settle(run, {'ok': False, 'kind': 'exception',
                               'message': f'unsupported program format: {frame["format"]} (this runtime runs {FORMAT})'})
            return
        if frame.get('initializer') is not None:
            self._settle(run, {'ok': False, 'kind': 'exception',
                               'message': 'environment initializers are not supported by the Python runtime'})
            return
        try:
            os.chdir(frame['cwd'])
            cwd = os.getcwd()
            filename = os.path.join(cwd, PROGRAM_NAME)
            code = compile_program(frame['program'], filename)
            scope = self._program_globals(frame.get('bindings') or [])
            # Modules next to the program import like `python -c` would find them.
            sys.path[:] = [cwd] + [entry for entry in sys.path if entry != cwd]
            exec(code, scope)
            value = await scope.pop('__dsh_main__')()
        except SystemExit as stop:
            self._exit(run, stop)
        except ProgramSyntaxError as error:
            self._settle(run, {'ok': False, 'kind': 'exception', 'message': error.formatted})
        except BaseException as error:  # noqa: B036 - every program failure is a result
            self._settle(run, {'ok': False, 'kind': 'exception', 'message': format_exception(error)})
        else:
            self._settle(run, {'ok': True, 'value': value, 'discard': frame.get('discardCompletion') is True})

    def _exit(self, run, stop):
        """sys.exit() ends the process as it would end `python3`: the host reports the exit."""
        code = stop.code
        if code is None:
            status = 0
        elif type(code) is int:
            status = code & 0xFF
        else:
            sys.stderr.write(f'{code}\n')
            status = 1
        with self._writer.lock:
            self._output.flush(run)
        os._exit(status)

    def _revoke(self, run_id):
        for i, queued in enumerate(self._queue):
            if queued['run'] == run_id:
                del self._queue[i]
                self._writer.send({'type': 'revoked', 'run': run_id})
                return
        run = active_run()
        if run is None or run.id != run_id or run.settled or run.revoked:
            return
        run.revoked = True
        self._bindings.revoke_all(run)

    def _settle(self, run, outcome):
        if run.settled:
            return
        with self._writer.lock:
            self._output.flush(run)
            # Settled before encoding: repr/getters run by the encoder can no longer print.
            run.settled = True
            if run.revoked:
                self._writer.send({'type': 'revoked', 'run': run.id}, drain=False)
            else:
                self._writer.send_json(result_frame(run.id, outcome, self._writer.max_bytes), drain=False)
        set_active_run(None)
        if self._queue:
            self._driver.call_soon(self._start_next)
