#!/usr/bin/env python3
"""A dsh host in Python (ctypes only): loads the installed plugin, lends it the installed Linux
services, runs one program whose `tools.add` binding Python answers, and prints the result JSON.

Everything it knows comes from the installed headers (include/dsh/*.h, mirrored below) and
pkg-config (dsh-host-abi: the plugin; dsh-linux-services: the library). Exit 0 when the run is ok.
    python3 python_host.py ['return 1 + await tools.add({a: 1, b: 2})']
"""
import ctypes as C
import json
import subprocess
import sys


def pkg_variable(package, name):
    """A variable of an installed .pc file; without one, says where pkg-config must look and exits 1."""
    try:
        found = subprocess.run(["pkg-config", "--variable=" + name, package], text=True,
                               capture_output=True)
    except FileNotFoundError:
        sys.exit("python_host.py: pkg-config is not installed (Debian: apt-get install pkg-config)")
    if found.returncode != 0:
        sys.exit(f"python_host.py: pkg-config does not know {package}: set PKG_CONFIG_PATH to the "
                 "pkgconfig directory of the installed prefix (e.g. /opt/dsh/lib/x86_64-linux-gnu/pkgconfig)")
    return found.stdout.strip()


services_lib = C.CDLL(pkg_variable("dsh-linux-services", "libdir") + "/libdsh-linux-services.so.1")
plugin = C.CDLL(pkg_variable("dsh-host-abi", "provider"), mode=C.RTLD_LOCAL)

DSH_ABI_MAJOR, DSH_ABI_MINOR = 1, 1
P = C.c_void_p
HEADER = [("struct_size", C.c_uint32), ("abi_major", C.c_uint16), ("abi_minor", C.c_uint16)]


class Error(C.Structure):  # struct dsh_error
    _fields_ = [("code", C.c_int32), ("message", C.c_char * 1024)]


OnCall = C.CFUNCTYPE(None, P, C.c_uint64, C.c_uint64, C.c_char_p, C.c_char_p, P, C.c_size_t)
OnDone = C.CFUNCTYPE(None, P, C.c_uint64, P, C.c_size_t)


class RunCallbacks(C.Structure):  # struct dsh_run_callbacks
    _fields_ = [("struct_size", C.c_uint32), ("on_call", OnCall), ("on_done", OnDone), ("userdata", P)]


class Provider(C.Structure):  # struct dsh_provider, in table order
    _fields_ = HEADER + [
        ("name", C.c_char_p), ("version", C.c_char_p),
        ("load", C.CFUNCTYPE(C.c_int, C.c_char_p, C.c_size_t, P, C.POINTER(P), C.POINTER(Error))),
        ("resolve", C.CFUNCTYPE(C.c_int, P, C.c_char_p, C.c_size_t, C.POINTER(P), C.POINTER(C.c_size_t),
                                C.POINTER(Error))),
        ("run", C.CFUNCTYPE(C.c_int, P, P, C.c_size_t, C.POINTER(RunCallbacks), C.POINTER(C.c_uint64),
                            C.POINTER(Error))),
        ("release", P), ("registerEnvironmentInitializer", P), ("get_fd", P), ("dispatch", P), ("cancel", P),
        ("reply", C.CFUNCTYPE(C.c_int, P, C.c_uint64, C.c_uint64, C.c_bool, C.c_char_p, C.c_size_t)),
        ("describe", P),
        ("unload", C.CFUNCTYPE(None, P)),
        ("unregisterEnvironmentInitializer", P),
        ("free_text", C.CFUNCTYPE(None, P)),
        ("wait", C.CFUNCTYPE(C.c_int, P, C.c_int)),
        ("registerImage", P),
        ("readable_roots", C.CFUNCTYPE(C.POINTER(C.c_char_p))),  # 1.1
    ]


class ServicesOptions(C.Structure):  # struct dsh_linux_services_options
    _fields_ = [
        ("struct_size", C.c_uint32), ("launcher_path", C.c_char_p), ("extra_writable_roots", C.POINTER(C.c_char_p)),
        ("max_landlock_abi", C.c_int), ("confine_delay_ms", C.c_uint32), ("default_mode", C.c_char_p),
        ("workspace_root", C.c_char_p), ("defer", P), ("loop", P), ("logger", P),
        ("extra_readable_roots", C.POINTER(C.c_char_p)), ("supervisor_path", C.c_char_p), ("temp_root", C.c_char_p),
        ("max_processes", C.c_uint32), ("disable_namespaces", C.c_bool),
        ("fail_quiescence_observations", C.c_uint32), ("require_full_enforcement", C.c_bool),
    ]


class Services(C.Structure):  # struct dsh_services
    _fields_ = HEADER + [("fs", P), ("subprocess", P), ("sandbox", P), ("sandbox_policy", P), ("logger", P),
                         ("runtime", P)]


services_lib.dsh_strerror.restype = C.c_char_p
services_lib.dsh_strerror.argtypes = [C.c_int]
services_lib.dsh_error_name.restype = C.c_char_p
services_lib.dsh_error_name.argtypes = [C.c_int]
services_lib.dsh_linux_services_create.argtypes = [C.POINTER(ServicesOptions), C.POINTER(P), C.POINTER(Error)]
for getter in ("fs", "subprocess", "sandbox", "sandbox_policy"):
    getattr(services_lib, "dsh_linux_" + getter).restype = P
    getattr(services_lib, "dsh_linux_" + getter).argtypes = [P]
services_lib.dsh_linux_services_destroy.argtypes = [P]


def check(rc, what, err):
    if rc < 0:
        name = services_lib.dsh_error_name(rc) or b"error"
        text = err.message or services_lib.dsh_strerror(rc)
        sys.exit(f"python host: {what} failed ({name.decode()}): {text.decode()}")


def main():
    program = sys.argv[1] if len(sys.argv) > 1 else "return 1 + await tools.add({a: 1, b: 2})"
    plugin.dsh_provider_entry.restype = C.POINTER(Provider)
    provider = plugin.dsh_provider_entry(DSH_ABI_MAJOR).contents
    if provider.struct_size < C.sizeof(Provider):
        sys.exit("python host: the plugin predates host ABI 1.1 (no readable_roots)")
    err = Error()
    # The plugin's own files (bootstrap, Node) must be readable in the execution world.
    options = ServicesOptions(struct_size=C.sizeof(ServicesOptions), extra_readable_roots=provider.readable_roots())
    linux = P()
    check(services_lib.dsh_linux_services_create(C.byref(options), C.byref(linux), C.byref(err)), "services", err)
    bundle = Services(C.sizeof(Services), DSH_ABI_MAJOR, DSH_ABI_MINOR,
                      *(getattr(services_lib, "dsh_linux_" + g)(linux) for g in ("fs", "subprocess", "sandbox",
                                                                                    "sandbox_policy")))
    instance = P()
    check(provider.load(b"", 0, C.byref(bundle), C.byref(instance), C.byref(err)), "load", err)

    state = {"result": None}

    def on_call(_userdata, run, call, global_name, name, args, args_len):
        if (global_name, name) == (b"tools", b"add"):
            arg = json.loads(C.string_at(args, args_len))[0]
            value = json.dumps(arg["a"] + arg["b"]).encode()
            provider.reply(instance, run, call, True, value, len(value))
        else:
            message = b"the Python host answers only tools.add"
            provider.reply(instance, run, call, False, message, len(message))

    def on_done(_userdata, _run, result, result_len):
        state["result"] = C.string_at(result, result_len).decode()

    callbacks = RunCallbacks(C.sizeof(RunCallbacks), OnCall(on_call), OnDone(on_done), None)
    request = json.dumps({"program": program, "bindings": [{"global": "tools", "functions": ["add"]}]}).encode()
    spec, spec_len, run = P(), C.c_size_t(), C.c_uint64()
    check(provider.resolve(instance, request, len(request), C.byref(spec), C.byref(spec_len), C.byref(err)),
          "resolve", err)
    rc = provider.run(instance, spec, spec_len, C.byref(callbacks), C.byref(run), C.byref(err))
    provider.free_text(spec)
    check(rc, "run", err)
    while state["result"] is None:  # on_call and on_done arrive inside wait()
        check(provider.wait(instance, -1), "wait", err)
    provider.unload(instance)
    services_lib.dsh_linux_services_destroy(linux)
    print(state["result"])
    return 0 if json.loads(state["result"])["ok"] else 1


if __name__ == "__main__":
    sys.exit(main())
