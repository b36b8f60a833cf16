"""The program format: the program is the body of `async def __dsh_main__():`, so top-level
`await` and `return` work and the returned value is the completion. The body is parsed on its
own and placed into the function's AST, so line and column numbers are the program's own and
no indentation is added (multi-line strings keep their text). Failures are rendered as Python
tracebacks of the program's frames: frames of this bootstrap (the runner, binding proxies) and
the event loop frames above the program are removed. The AST comes from `_ast` (what `ast`
wraps), and `traceback` and `linecache` are imported only when something needs them, so a
program that fails nothing loads neither."""

import _ast
import os

from .import_watch import after_import

MAIN_NAME = '__dsh_main__'
PROGRAM_NAME = '[program]'
BOOTSTRAP_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep
UNRENDERABLE_EXCEPTION = 'exception value could not be rendered'


class ProgramSyntaxError(Exception):
    """The program does not compile; `formatted` is the message of the exception result."""

    def __init__(self, formatted):
        super().__init__(formatted)
        self.formatted = formatted


def _children(node):
    for name in node._fields:
        value = getattr(node, name, None)
        if isinstance(value, _ast.AST):
            yield value
        elif isinstance(value, list):
            yield from (item for item in value if isinstance(item, _ast.AST))


def _outside_function(body):
    """The first yield that would turn the body into an async generator, or None."""
    stack = list(body)
    while stack:
        node = stack.pop()
        if isinstance(node, (_ast.Yield, _ast.YieldFrom)):
            return node
        if isinstance(node, (_ast.FunctionDef, _ast.AsyncFunctionDef, _ast.Lambda, _ast.ClassDef)):
            continue
        stack.extend(_children(node))
    return None


def _syntax_error(error):
    import traceback
    return ProgramSyntaxError(''.join(traceback.format_exception_only(type(error), error)).rstrip('\n'))


def _located(node):
    node.lineno, node.col_offset, node.end_lineno, node.end_col_offset = 1, 0, 1, 0
    return node


def compile_program(source, filename):
    """The `__dsh_main__` coroutine function of source, for exec in the program's globals."""
    try:
        module = compile(source, filename, 'exec', _ast.PyCF_ONLY_AST)
        found = _outside_function(module.body)
        if found is not None:
            error = SyntaxError("'yield' outside function",
                                (filename, found.lineno, found.col_offset + 1,
                                 (source.splitlines() or [''])[found.lineno - 1], None, None))
            raise error
        no_arguments = _ast.arguments(posonlyargs=[], args=[], kwonlyargs=[], kw_defaults=[], defaults=[])
        main = _located(_ast.AsyncFunctionDef(name=MAIN_NAME, args=no_arguments,
                                              body=module.body or [_located(_ast.Pass())], decorator_list=[],
                                              returns=None, type_comment=None))
        wrapper = _ast.Module(body=[main], type_ignores=[])
        code = compile(wrapper, filename, 'exec', dont_inherit=True)
    except SyntaxError as error:
        raise _syntax_error(error) from None
    except (ValueError, MemoryError, RecursionError) as error:  # null bytes, nesting too deep
        raise ProgramSyntaxError(f'SyntaxError: {error}') from None
    # Tracebacks and warnings show the program's lines once linecache is loaded (by them); mtime
    # None keeps the entry from being re-read.
    entry = (len(source), None, source.splitlines(True), filename)
    after_import('linecache', lambda linecache: linecache.cache.__setitem__(filename, entry))
    return code


def _is_bootstrap(frame):
    return frame.filename.startswith(BOOTSTRAP_DIR)


def _trim(traceback, exc, seen):
    if exc is None or id(exc) in seen:
        return
    seen.add(id(exc))
    frames = list(exc.stack)
    # The event loop and runner frames sit above the program's first frame.
    first = next((i for i, f in enumerate(frames) if f.name == MAIN_NAME and not _is_bootstrap(f)), 0)
    kept = [f for f in frames[first:] if not _is_bootstrap(f)]
    exc.stack = traceback.StackSummary.from_list(kept)
    _trim(traceback, exc.__cause__, seen)
    _trim(traceback, exc.__context__, seen)
    for sub in getattr(exc, 'exceptions', None) or []:
        _trim(traceback, sub, seen)


def format_exception(error):
    """The message of an `exception` result for an exception the program raised."""
    if isinstance(error, ProgramSyntaxError):
        return error.formatted
    try:
        import traceback
        summary = traceback.TracebackException.from_exception(error)
        _trim(traceback, summary, set())
        return ''.join(summary.format()).rstrip('\n')
    except BaseException:
        return UNRENDERABLE_EXCEPTION
