"""A Python client of `dsh headless --serve` (standard library only).

    from dsh_serve import Dsh
    with Dsh(["/path/to/dsh", "headless", "--serve"]) as dsh:
        result = dsh.run("return await host.add({a: 1, b: 2})",
                         bindings={"host": {"add": lambda a: a["a"] + a["b"]}},
                         on_output=lambda entry: print(entry.get("text", ""), end=""))

Requests and events are host-abi/schemas/serve.json. Binding functions receive the call's
arguments (a list) unpacked; what they return is the reply value, an exception rejects the call
with its message. Runs are answered one at a time here; the protocol itself allows concurrency.
"""

import json
import subprocess


class DshError(Exception):
    """An `error` event about one of this client's requests."""


class Dsh:
    def __init__(self, argv, **popen_args):
        self.proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, **popen_args)
        self.hello = self._next_event()
        if self.hello.get("type") != "hello":
            raise DshError(f"expected a hello event, got {self.hello}")
        self._next_id = 0

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def close(self):
        """Ends the session (EOF on dsh's stdin) and returns dsh's exit status."""
        if self.proc.stdin and not self.proc.stdin.closed:
            self.proc.stdin.close()
        return self.proc.wait()

    def _send(self, request):
        self.proc.stdin.write(json.dumps(request, separators=(",", ":")).encode() + b"\n")
        self.proc.stdin.flush()

    def _next_event(self):
        line = self.proc.stdout.readline()
        if not line:
            raise DshError("dsh closed its stdout")
        return json.loads(line)

    def describe(self):
        return self.hello["describe"]

    def run(self, program, bindings=None, on_output=None, **options):
        """Runs program and returns its result object. bindings: {global: {name: callable}}.
        on_output(entry) is called for every output entry while the program runs. options: any
        other run request field (stateOwner, timeoutMs, cwd, discardCompletion, ...)."""
        self._next_id += 1
        run_id = f"py-{self._next_id}"
        bindings = bindings or {}
        request = {"type": "run", "id": run_id, "program": program,
                   "bindings": [{"global": g, "functions": sorted(fns)} for g, fns in bindings.items()],
                   **options}
        if on_output:
            request["stream"] = True
        self._send(request)
        while True:
            ev = self._next_event()
            kind = ev.get("type")
            if kind == "result" and ev.get("id") == run_id:
                return ev["result"]
            if kind == "output" and ev.get("run") == run_id and on_output:
                on_output(ev["entry"])
            elif kind == "call" and ev.get("run") == run_id:
                self._answer(ev, bindings)
            elif kind == "error" and ev.get("id") == run_id:
                raise DshError(ev["message"])

    def _answer(self, call, bindings):
        reply = {"type": "reply", "run": call["run"], "call": call["call"]}
        try:
            value = bindings[call["global"]][call["name"]](*call["args"])
            reply.update(ok=True, value=value)
        except Exception as e:  # the program sees a rejected call with this message
            reply.update(ok=False, message=str(e) or type(e).__name__)
        self._send(reply)
