// `dsh headless --serve` end to end: results, client bindings and replies, demo tools next to
// client namespaces, concurrent runs, cancel, retained state + release, EOF with runs in flight.
import assert from "node:assert/strict";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { Dsh, check, done } from "./harness.mjs";

const [dshPath, srcRoot] = process.argv.slice(2).map((p) => resolve(p));
const cwd = mkdtempSync(join(tmpdir(), "dsh-serve-"));
const dsh = new Dsh(dshPath, [], { cwd });

await check("a run gives one result event with the request id", async () => {
  dsh.send({ type: "run", id: "r1", program: "inspect('hi'); return 1 + 2" });
  const ev = await dsh.result("r1");
  assert.equal(ev.result.ok, true, JSON.stringify(ev));
  assert.equal(ev.result.value, 3);
  assert.deepEqual(ev.result.output, [{ type: "text", text: "hi\n" }]);
});

await check("numeric ids are echoed as numbers", async () => {
  dsh.send({ type: "run", id: 7, program: "return 'seven'" });
  const ev = await dsh.result(7);
  assert.equal(ev.result.value, "seven");
});

await check("a failing program is a result, not an error event", async () => {
  dsh.send({ type: "run", id: "f", program: "throw new Error('boom')" });
  const ev = await dsh.result("f");
  assert.equal(ev.result.ok, false);
  assert.equal(ev.result.error.kind, "exception");
  assert.match(ev.result.error.message, /boom/);
});

await check("client bindings: call events answered with reply", async () => {
  dsh.send({
    type: "run", id: "b1",
    program: "const a = await host.lookup({ key: 'k' }); let m; try { await host.lookup({ key: 'bad' }) } catch (e) { m = e.message } return [a, m]",
    bindings: [{ global: "host", functions: ["lookup"] }],
  });
  const c1 = await dsh.next((e) => e.type === "call");
  assert.equal(c1.run, "b1");
  assert.equal(c1.global, "host");
  assert.equal(c1.name, "lookup");
  assert.deepEqual(c1.args, [{ key: "k" }]);
  assert.equal(typeof c1.call, "number");
  dsh.send({ type: "reply", run: "b1", call: c1.call, ok: true, value: { found: 1.5e300 } });
  const c2 = await dsh.next((e) => e.type === "call");
  dsh.send({ type: "reply", run: "b1", call: c2.call, ok: false, message: "no such key" });
  const ev = await dsh.result("b1");
  assert.deepEqual(ev.result.value, [{ found: 1.5e300 }, "no such key"], JSON.stringify(ev));
});

await check("a reply without value answers undefined", async () => {
  dsh.send({ type: "run", id: "u", program: "return typeof (await h.f())", bindings: [{ global: "h", functions: ["f"] }] });
  const c = await dsh.next((e) => e.type === "call" && e.run === "u");
  dsh.send({ type: "reply", run: "u", call: c.call, ok: true });
  assert.equal((await dsh.result("u")).result.value, "undefined");
});

await check("a second reply to the same call is an error event", async () => {
  dsh.send({ type: "run", id: "twice", program: "return await h.f()", bindings: [{ global: "h", functions: ["f"] }] });
  const c = await dsh.next((e) => e.type === "call" && e.run === "twice");
  dsh.send({ type: "reply", run: "twice", call: c.call, ok: true, value: 1 });
  dsh.send({ type: "reply", run: "twice", call: c.call, ok: true, value: 2 });
  const err = await dsh.next((e) => e.type === "error");
  assert.match(err.message, /no open call/);
  assert.equal((await dsh.result("twice")).result.value, 1);
});

await check("demo tools are declared next to client namespaces", async () => {
  dsh.send({ type: "run", id: "d", program: "return [await tools.add({ a: 2, b: 3 }), await h.g()]", bindings: [{ global: "h", functions: ["g"] }] });
  const c = await dsh.next((e) => e.type === "call" && e.run === "d");
  assert.equal(c.global, "h");
  dsh.send({ type: "reply", run: "d", call: c.call, ok: true, value: "client" });
  assert.deepEqual((await dsh.result("d")).result.value, [5, "client"]);
});

await check("a client namespace named tools wins over the demo one", async () => {
  dsh.send({ type: "run", id: "t", program: "return [typeof tools.add, await tools.echo(1)]", bindings: [{ global: "tools", functions: ["echo"] }] });
  const c = await dsh.next((e) => e.type === "call" && e.run === "t");
  assert.equal(c.global, "tools");
  assert.equal(c.name, "echo");
  dsh.send({ type: "reply", run: "t", call: c.call, ok: true, value: "from client" });
  assert.deepEqual((await dsh.result("t")).result.value, ["undefined", "from client"]);
});

await check("runs are concurrent: a short run finishes before a long one", async () => {
  dsh.send({ type: "run", id: "long", program: "await tools.sleep({ ms: 1500 }); return 'long'" });
  dsh.send({ type: "run", id: "short", program: "await tools.sleep({ ms: 100 }); return 'short'" });
  const first = await dsh.next((e) => e.type === "result");
  assert.equal(first.id, "short");
  const second = await dsh.result("long");
  assert.equal(second.result.value, "long");
});

await check("a duplicate in-flight id is an error event", async () => {
  dsh.send({ type: "run", id: "dup", program: "await tools.sleep({ ms: 500 }); return 1" });
  dsh.send({ type: "run", id: "dup", program: "return 2" });
  const err = await dsh.next((e) => e.type === "error");
  assert.equal(err.id, "dup");
  assert.match(err.message, /in flight/);
  assert.equal((await dsh.result("dup")).result.value, 1);
});

await check("cancel ends a run with kind abort", async () => {
  dsh.send({ type: "run", id: "c", program: "await tools.sleep({ ms: 20000 }); return 1" });
  await new Promise((r) => setTimeout(r, 300));
  dsh.send({ type: "cancel", id: "c", reason: "user pressed stop" });
  const ev = await dsh.result("c", 15000);
  assert.equal(ev.result.ok, false);
  assert.equal(ev.result.error.kind, "abort");
});

await check("timeoutMs in a request", async () => {
  dsh.send({ type: "run", id: "to", program: "await tools.sleep({ ms: 20000 })", timeoutMs: 300 });
  const ev = await dsh.result("to", 15000);
  assert.equal(ev.result.error.kind, "timeout");
});

await check("set-mode changes the standing mode of a session", async () => {
  dsh.send({ type: "set-mode", session: "s1", mode: "workspace-write", id: "m1" });
  assert.deepEqual(await dsh.next((e) => e.type === "mode-set"), { type: "mode-set", id: "m1", session: "s1", mode: "workspace-write" });
  dsh.send({ type: "run", id: "s1run", sessionId: "s1", program: "return 1" });
  dsh.send({ type: "run", id: "defrun", program: "return 2" });
  assert.equal((await dsh.result("s1run")).result.sandbox.mode, "workspace-write");
  assert.equal((await dsh.result("defrun")).result.sandbox.mode, "read-only");
  dsh.send({ type: "set-mode", mode: "workspace-write" });
  await dsh.next((e) => e.type === "mode-set");
  dsh.send({ type: "run", id: "defrun2", program: "return 3" });
  assert.equal((await dsh.result("defrun2")).result.sandbox.mode, "workspace-write");
  dsh.send({ type: "set-mode", mode: "read-only" });
  await dsh.next((e) => e.type === "mode-set");
});

await check("EOF waits for in-flight runs, rejects open client calls, then exits 0", async () => {
  dsh.send({ type: "run", id: "last", program: "await tools.sleep({ ms: 300 }); return 'done'" });
  dsh.send({
    // A deadline far beyond the suite's timeout: the close can only finish if EOF rejected the
    // open call (no clock bound needed).
    type: "run", id: "orphan", timeoutMs: null, bindings: [{ global: "h", functions: ["f"] }],
    program: "try { await h.f() } catch (e) { return e.message }",
  });
  await dsh.next((e) => e.type === "call" && e.run === "orphan");
  const { code } = await dsh.close();
  assert.equal(code, 0, dsh.stderr);
  const ev = dsh.events.find((e) => e.type === "result" && e.id === "last");
  assert.equal(ev?.result.value, "done", JSON.stringify(dsh.events));
  const orphan = dsh.events.find((e) => e.type === "result" && e.id === "orphan");
  assert.match(orphan?.result.value ?? "", /closed dsh's stdin/, JSON.stringify(dsh.events));
});

// Retained state and release, with the persistent patch.
const p = new Dsh(dshPath, ["--patch", join(srcRoot, "examples/profiles/persistent.yaml")], { cwd });
await check("stateOwner retains state until release", async () => {
  p.send({ type: "run", id: 1, stateOwner: "agent-1", program: "var x = 41" });
  assert.equal((await p.result(1)).result.ok, true);
  p.send({ type: "run", id: 2, stateOwner: "agent-1", program: "x + 1" });
  assert.equal((await p.result(2)).result.value, 42);
  p.send({ type: "release", id: "rel", stateOwner: "agent-1" });
  assert.deepEqual(await p.next((e) => e.type === "released" || e.type === "error"), { type: "released", id: "rel" });
  p.send({ type: "run", id: 3, stateOwner: "agent-1", program: "typeof x" });
  assert.equal((await p.result(3)).result.value, "undefined");
});
// A mode change ends the owner's environment; a run arriving while that cleanup is in progress
// waits for it, and may end (deadline, cancel) before it completes: the cleanup must then not
// call back into the finished run (under the sanitizer build this is a use-after-free check).
await check("runs waiting for an owner's cleanup can time out or be cancelled", async () => {
  p.send({ type: "run", id: "w1", stateOwner: "w", program: "var cp = await import('node:child_process'); for (let i = 0; i < 50; i++) cp.spawn('/bin/sleep', ['100'], { stdio: 'ignore' }); 1" });
  assert.equal((await p.result("w1")).result.ok, true);
  for (const [id, stop] of [["w-timeout", { timeoutMs: 1 }], ["w-cancel", null]]) {
    p.send({ type: "run", id: `${id}-busy`, stateOwner: "w", program: "await new Promise((r) => setTimeout(r, 5000))" });
    await new Promise((r) => setTimeout(r, 500));
    p.send({ type: "set-mode", mode: id === "w-timeout" ? "workspace-write" : "read-only" });
    assert.equal((await p.result(`${id}-busy`)).result.error?.kind, "abort");
    p.send({ type: "run", id, stateOwner: "w", program: "1", ...(stop ?? {}) });
    if (stop === null) p.send({ type: "cancel", id });
    const ev = await p.result(id);
    assert.equal(ev.result.error?.kind, stop ? "timeout" : "abort", JSON.stringify(ev));
    assert.match(ev.result.error.message, /before code started/);
    // The cleanup completes later; the owner is usable again afterwards.
    await new Promise((r) => setTimeout(r, 1500));
  }
  p.send({ type: "run", id: "w-after", stateOwner: "w", program: "typeof cp" });
  assert.equal((await p.result("w-after")).result.value, "undefined");
});
await check("persistent server exits 0 at EOF", async () => {
  const { code } = await p.close();
  assert.equal(code, 0, p.stderr);
});
done();
