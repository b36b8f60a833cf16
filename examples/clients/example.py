#!/usr/bin/env python3
"""Drives dsh from Python: a program calls a Python function through a binding, its output is
printed while it runs, then the value. Usage: example.py DSH [dsh headless options...]"""

import sys

from dsh_serve import Dsh

PROGRAM = """
inspect("looking up", 3, "keys");
const values = [];
for (const key of ["a", "b", "c"]) values.push(await kv.get({ key }));
try { await kv.get({ key: "missing" }) } catch (e) { inspect("caught:", e.message) }
return values;
"""

STORE = {"a": 1, "b": 2, "c": 3}


def get(arg):
    if arg["key"] not in STORE:
        raise LookupError(f"no key {arg['key']}")
    return STORE[arg["key"]]


def main():
    with Dsh([sys.argv[1], "headless", *sys.argv[2:], "--serve"]) as dsh:
        print("runtime:", dsh.describe()["programFormat"], flush=True)
        result = dsh.run(PROGRAM, bindings={"kv": {"get": get}},
                         on_output=lambda e: print("output:", e.get("text", "").rstrip("\n"), flush=True))
        print("ok:", result["ok"], "value:", result.get("value"), flush=True)
        return 0 if result["ok"] else 1


if __name__ == "__main__":
    sys.exit(main())
