"""Environment confinement, done once before any program runs. The native environment keeps
only executable-search and temporary paths and the sandbox's HTTPS proxy (PATH, TMPDIR, TEMP, TMP,
HTTPS_PROXY, https_proxy: a network allow-list sets the last two; everything else is unset),
and the program-visible os.environ starts empty. Processes the program starts without an
explicit env inherit the native environment: those paths plus what the program put into
os.environ, so executable search and the sandbox's temp dir keep working and no secret is
inherited. The control descriptor is not inherited by them."""

import os

from .import_watch import after_import

KEPT_NATIVE_VARIABLES = ('PATH', 'TMPDIR', 'TEMP', 'TMP', 'HTTPS_PROXY', 'https_proxy')


def confine_environment(control_fd):
    for key in list(os.environ):
        if key not in KEPT_NATIVE_VARIABLES:
            del os.environ[key]  # unsetenv: gone for native code and child processes too
    temp = os.environ.get('TMPDIR')
    if temp:
        # tempfile would look in the emptied os.environ: it gets the native TMPDIR once imported.
        after_import('tempfile', lambda tempfile: setattr(tempfile, 'tempdir', temp))
    # os.environ and os.environb share this mapping; emptying it leaves the native copies.
    os.environ._data.clear()
    os.set_inheritable(control_fd, False)
