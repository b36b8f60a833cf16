"""JSON text for the control channel without importing the `json` package at start (it pulls in
`re` and `enum`, a few milliseconds a process): the same C scanner and string encoder `json` uses
(`_json`), and `json` itself, imported then, for everything off the common path (the scanner
cannot even raise its own errors before `json.decoder` is loaded), so every error
and every value is exactly what `json.loads`/`json.dumps` give. Without `_json` (another Python
build) it is `json` throughout."""

try:
    from _json import encode_basestring as _encode_string, make_scanner as _make_scanner
except ImportError:  # pragma: no cover - CPython always has it
    _encode_string = _make_scanner = None

_WHITESPACE = ' \t\n\r'


def _no_constants(name):
    raise ValueError(f'{name} is not JSON')


class _Context:
    """What the C scanner reads from a json.JSONDecoder: strict, the defaults, NaN refused."""

    strict = True
    object_hook = None
    object_pairs_hook = None
    parse_float = float
    parse_int = int
    parse_constant = staticmethod(_no_constants)
    memo = None


_scan = None
if _make_scanner is not None:
    try:
        _scan = _make_scanner(_Context())
    except (TypeError, AttributeError):  # pragma: no cover - a scanner of another shape
        _scan = None


def loads(text):
    """Strict JSON: NaN/Infinity tokens are refused, integers keep every digit."""
    if _scan is not None and not text.startswith('\ufeff'):
        start = len(text) - len(text.lstrip(_WHITESPACE))
        try:
            value, end = _scan(text, start)
        except Exception:  # noqa: BLE001 - json.loads below says what is wrong, as it always did
            value, end = None, -1
        if end >= 0 and not text[end:].strip(_WHITESPACE):
            return value
    import json  # the exact error (or, should the fast path ever disagree, the exact value)
    return json.loads(text, parse_constant=_no_constants)


def encode_string(text):
    """json.dumps(text, ensure_ascii=False)."""
    if _encode_string is not None:
        return _encode_string(text)
    import json
    return json.dumps(text, ensure_ascii=False)


def dumps(value):
    """json.dumps(value, ensure_ascii=False, separators=(',', ':'), allow_nan=False) for the
    frames the bootstrap builds (dicts with str keys, lists, str, int, bool, None)."""
    parts = []
    if _encode_string is None or not _dump(value, parts):
        import json
        return json.dumps(value, ensure_ascii=False, separators=(',', ':'), allow_nan=False)
    return ''.join(parts)


def _dump(value, parts):
    """Appends value's JSON to parts; False for anything but the plain types (json then)."""
    kind = type(value)
    if value is None:
        parts.append('null')
    elif kind is bool:
        parts.append('true' if value else 'false')
    elif kind is str:
        parts.append(_encode_string(value))
    elif kind is int:
        parts.append(int.__repr__(value))
    elif kind is list:
        parts.append('[')
        for i, item in enumerate(value):
            if i:
                parts.append(',')
            if not _dump(item, parts):
                return False
        parts.append(']')
    elif kind is dict:
        parts.append('{')
        for i, (key, item) in enumerate(value.items()):
            if type(key) is not str:
                return False
            parts.append(',' if i else '')
            parts.append(_encode_string(key))
            parts.append(':')
            if not _dump(item, parts):
                return False
        parts.append('}')
    else:
        return False
    return True
