"""Lossless JSON encoding: a value is accepted only if the host reads back exactly what the
program produced. Only None, bool, int (any size: every digit is kept), finite float, str, list
and dict with str keys are JSON; everything else (tuples, sets, bytes, other objects, subclasses
of the JSON types, NaN, infinities, -0.0, lone surrogates, cycles) is refused with a message that
names the offending path ("result['a'][2] is nan")."""

import math
import sys

from .json_text import encode_string

# The deepest nesting of lists and dicts a value sent to the host may have, as for the Node
# runtime (bootstrap/PROTOCOL.md): the host parses frames with a 512-level bound.
MAX_VALUE_DEPTH = 500
_LIMIT_PROBLEM = f'nests arrays and objects deeper than {MAX_VALUE_DEPTH} levels (the limit for values)'
# Recursion-limit units one level of nesting takes in _encode (measured: under 2), with room.
_FRAMES_PER_LEVEL = 3


class LossyValueError(Exception):
    def __init__(self, path, problem):
        super().__init__(f'{path} {problem}')
        self.path = path


def _string(value, path):
    try:
        value.encode('utf-8')
    except UnicodeEncodeError:
        raise LossyValueError(path, 'contains a lone surrogate') from None
    return encode_string(value)


def _describe(value):
    kind = type(value)
    if kind is tuple:
        return 'a tuple (use a list)'
    if kind in (set, frozenset):
        return 'a set (use a list)'
    if kind in (bytes, bytearray, memoryview):
        return 'bytes (decode them to str)'
    if callable(value):
        return 'a function or other callable'
    name = getattr(kind, '__qualname__', None) or 'non-JSON'
    return f'an instance of {name} (only dict, list, str, int, float, bool and None are JSON)'


def _member(path, key):
    # An ASCII identifier ([A-Za-z_][A-Za-z0-9_]*) reads as .key, anything else as ["key"].
    return f'{path}.{key}' if key.isascii() and key.isidentifier() else f'{path}[{_string(key, path)}]'


def _encode(value, path, ancestors, root):
    kind = type(value)
    if value is None:
        return 'null'
    if kind is bool:
        return 'true' if value else 'false'
    if kind is int:
        return int.__repr__(value)
    if kind is float:
        if math.isnan(value):
            raise LossyValueError(path, 'is nan')
        if math.isinf(value):
            raise LossyValueError(path, 'is inf' if value > 0 else 'is -inf')
        if value == 0 and math.copysign(1.0, value) < 0:
            raise LossyValueError(path, 'is -0.0')
        return float.__repr__(value)
    if kind is str:
        return _string(value, path)
    if kind is not list and kind is not dict:
        raise LossyValueError(path, f'is {_describe(value)}')
    if id(value) in ancestors:
        raise LossyValueError(path, 'is a circular reference')
    if len(ancestors) >= MAX_VALUE_DEPTH:
        # The path of the offending level would be hundreds of steps long: name the value instead.
        raise LossyValueError(root, _LIMIT_PROBLEM)
    ancestors.add(id(value))
    try:
        parts = []
        if kind is list:  # a loop, not a generator: each level then costs only this frame
            for i, item in enumerate(value):
                parts.append(_encode(item, f'{path}[{i}]', ancestors, root))
            return '[' + ','.join(parts) + ']'
        for key, item in value.items():
            if type(key) is not str:
                raise LossyValueError(path, f'has a non-string key {key!r}')
            key_path = _member(path, key)
            parts.append(f'{_string(key, key_path + " (key)")}:{_encode(item, key_path, ancestors, root)}')
        return '{' + ','.join(parts) + '}'
    finally:
        ancestors.discard(id(value))


def _stack_depth():
    depth, frame = 0, sys._getframe()
    while frame is not None:
        depth, frame = depth + 1, frame.f_back
    return depth


def encode_lossless(value, root='value'):
    """The JSON text of value, or LossyValueError naming the first lossy path."""
    saved_digits = sys.get_int_max_str_digits()
    saved_limit = sys.getrecursionlimit()
    sys.set_int_max_str_digits(0)  # big ints keep all their digits
    # Room for a value at the limit wherever the caller is; the limit itself stops deeper ones.
    sys.setrecursionlimit(max(saved_limit, _stack_depth() + _FRAMES_PER_LEVEL * (MAX_VALUE_DEPTH + 2) + 50))
    try:
        return _encode(value, root, set(), root)
    except RecursionError:  # not expected (the limit above leaves room); never a crash
        raise LossyValueError(root, 'is nested too deeply to encode') from None
    finally:
        sys.setrecursionlimit(saved_limit)
        sys.set_int_max_str_digits(saved_digits)
