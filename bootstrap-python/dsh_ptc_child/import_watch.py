"""Work that waits for a standard module's first import instead of importing it at start (the
child loads as little as it can: asyncio, tempfile and linecache cost more than the interpreter's
own start). `after_import(name, callback)` calls callback(module) once the top-level module name
has been executed, by whoever imports it, or at once when it is already loaded. A finder at the
front of `sys.meta_path` lends the real finders' spec a loader that runs the real one and then the
callbacks; the module keeps its real loader, and the finder leaves `sys.meta_path` once nothing is
waited for."""

import sys

_waiting = {}  # module name -> [callback]


def after_import(name, callback):
    module = sys.modules.get(name)
    if module is not None:
        callback(module)
        return
    _waiting.setdefault(name, []).append(callback)
    if _FINDER not in sys.meta_path:
        sys.meta_path.insert(0, _FINDER)


def _loaded(name, module):
    for callback in _waiting.pop(name, ()):
        callback(module)


class _Finder:
    def find_spec(self, name, path=None, target=None):
        if name not in _waiting:
            return None
        for finder in sys.meta_path:
            find = getattr(finder, 'find_spec', None) if finder is not self else None
            spec = find(name, path, target) if find is not None else None
            if spec is not None:
                break
        else:
            return None
        if spec.loader is not None and hasattr(spec.loader, 'exec_module'):
            spec.loader = _NotifyingLoader(spec.loader)
        return spec


class _NotifyingLoader:
    def __init__(self, loader):
        self._loader = loader

    def create_module(self, spec):
        return self._loader.create_module(spec)

    def exec_module(self, module):
        module.__spec__.loader = self._loader
        module.__loader__ = self._loader
        self._loader.exec_module(module)
        if sys.modules.get(module.__name__) is not module:
            return  # a module made from a found spec by hand, not the import: keep waiting
        _loaded(module.__name__, module)
        if not _waiting and _FINDER in sys.meta_path:
            sys.meta_path.remove(_FINDER)


_FINDER = _Finder()
