"""The program format: the program is the body of `async def __dsh_main__():`, so top-level
`await` and `return` work and the returned value is the completion. The body is parsed on its
own and placed into the function's AST, so line and column numbers are the program's own and
no indentation is added (multi-line strings keep their text). Failures are rendered as Python
tracebacks of the program's frames: frames of this bootstrap (the runner, binding proxies) and
the event loop frames above the program are removed."""

import ast
import linecache
import os
import traceback

MAIN_NAME = '__dsh_main__'
PROGRAM_NAME = '[program]'
BOOTSTRAP_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep
UNRENDERABLE_EXCEPTION = 'exception value could not be rendered'


class ProgramSyntaxError(Exception):
    """The program does not compile; `formatted` is the message of the exception result."""

    def __init__(self, formatted):
        super().__init__(formatted)
        self.formatted = formatted


def _outside_function(body):
    """The first yield that would turn the body into an async generator, or None."""
    stack = list(body)
    while stack:
        node = stack.pop()
        if isinstance(node, (ast.Yield, ast.YieldFrom)):
            return node
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
            continue
        stack.extend(ast.iter_child_nodes(node))
    return None


def _syntax_error(error):
    return ProgramSyntaxError(''.join(traceback.format_exception_only(type(error), error)).rstrip('\n'))


def compile_program(source, filename):
    """The `__dsh_main__` coroutine function of source, for exec in the program's globals."""
    try:
        module = ast.parse(source, filename, 'exec')
        found = _outside_function(module.body)
        if found is not None:
            error = SyntaxError("'yield' outside function",
                                (filename, found.lineno, found.col_offset + 1,
                                 (source.splitlines() or [''])[found.lineno - 1], None, None))
            raise error
        main = ast.AsyncFunctionDef(name=MAIN_NAME, args=ast.arguments(posonlyargs=[], args=[], kwonlyargs=[],
                                                                        kw_defaults=[], defaults=[]),
                                    body=module.body or [ast.Pass()], decorator_list=[], returns=None,
                                    type_comment=None, lineno=1, col_offset=0)
        wrapper = ast.Module(body=[main], type_ignores=[])
        ast.fix_missing_locations(wrapper)
        code = compile(wrapper, filename, 'exec', dont_inherit=True)
    except SyntaxError as error:
        raise _syntax_error(error) from None
    except (ValueError, MemoryError, RecursionError) as error:  # null bytes, nesting too deep
        raise ProgramSyntaxError(f'SyntaxError: {error}') from None
    # Tracebacks show the program's lines; mtime None keeps the entry from being re-read.
    linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
    return code


def _is_bootstrap(frame):
    return frame.filename.startswith(BOOTSTRAP_DIR)


def _trim(exc, seen):
    if exc is None or id(exc) in seen:
        return
    seen.add(id(exc))
    frames = list(exc.stack)
    # The event loop and runner frames sit above the program's first frame.
    first = next((i for i, f in enumerate(frames) if f.name == MAIN_NAME and not _is_bootstrap(f)), 0)
    kept = [f for f in frames[first:] if not _is_bootstrap(f)]
    exc.stack = traceback.StackSummary.from_list(kept)
    _trim(exc.__cause__, seen)
    _trim(exc.__context__, seen)
    for sub in getattr(exc, 'exceptions', None) or []:
        _trim(sub, seen)


def format_exception(error):
    """The message of an `exception` result for an exception the program raised."""
    if isinstance(error, ProgramSyntaxError):
        return error.formatted
    try:
        summary = traceback.TracebackException.from_exception(error)
        _trim(summary, set())
        return ''.join(summary.format()).rstrip('\n')
    except BaseException:
        return UNRENDERABLE_EXCEPTION
