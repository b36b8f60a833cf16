// `dsh headless --serve` protocol rules, one regression check per rule, through the real dsh:
// hello/describe, the strict lossless request parser, a rejected reply that leaves its call
// open, abandoned calls, duplicate run ids, release of an unknown owner, streamed output.
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { Dsh, check, done, isValidEvent, isValidRequest } from "./harness.mjs";

const [dshPath, srcRoot] = process.argv.slice(2).map((p) => resolve(p));
const cwd = mkdtempSync(join(tmpdir(), "dsh-serve-protocol-"));
const dsh = new Dsh(dshPath, [], { cwd });
const h = [{ global: "h", functions: ["f", "g"] }];
const call = (run) => dsh.next((e) => e.type === "call" && e.run === run);

await check("the first line is a hello event with versions and describe()", async () => {
  // The barrier: the hello line has arrived (the suite's timeout bounds the wait, not a clock).
  while (!dsh.hello) await new Promise((r) => setTimeout(r, 10));
  const describe = JSON.parse(execFileSync(dshPath, ["headless"], { cwd, encoding: "utf8", stdio: ["ignore", "pipe", "ignore"] }));
  assert.ok(dsh.hello, "no hello event");
  assert.equal(dsh.hello.version, "0.1.0");
  assert.deepEqual(dsh.hello.abi, { major: 1, minor: 8 });
  assert.equal(dsh.hello.provider.name, "@deepseek-ai/dsh-ptc-runtime-node");
  assert.deepEqual(dsh.hello.provider.abi, { major: 1, minor: 8 });
  assert.deepEqual(dsh.hello.describe, describe);
  assert.equal(typeof dsh.hello.describe.executionInstructions, "string");
});

await check("a describe request answers the same hello, with its id", async () => {
  dsh.send({ type: "describe", id: "d1" });
  const ev = await dsh.next();
  assert.deepEqual(ev, { ...dsh.hello, id: "d1" });
});

await check("reply values are parsed losslessly: a 30-digit integer keeps its value", async () => {
  dsh.send({ type: "run", id: "big", program: "return String(await h.f())", bindings: h });
  const c = await call("big");
  dsh.send(`{"type":"reply","run":"big","call":${c.call},"ok":true,"value":123456789012345678901234567890}`);
  const ev = await dsh.result("big");
  // json-c's own parser clamped it to UINT64_MAX, which the program saw as 18446744073709552000.
  assert.equal(ev.result.value, String(123456789012345678901234567890), JSON.stringify(ev));
  assert.notEqual(ev.result.value, "18446744073709552000");
});

const nested = (depth) => "[".repeat(depth) + "]".repeat(depth);
await check("reply values may nest 10000 levels (DSH_JSON_VALUE_MAX_DEPTH), not 32 or 512", async () => {
  dsh.send({
    type: "run", id: "deep", bindings: h,
    program: "let v = await h.f(), d = 0; while (Array.isArray(v)) { d++; v = v[0] } return d",
  });
  const c = await call("deep");
  dsh.send(`{"type":"reply","run":"deep","call":${c.call},"ok":true,"value":${nested(10000)}}`);
  assert.equal((await dsh.result("deep")).result.value, 10000);
});

await check("nesting beyond 10000 is refused as invalid JSON, and the call stays open", async () => {
  dsh.send({ type: "run", id: "deeper", bindings: h, program: "return await h.f()" });
  const c = await call("deeper");
  dsh.send(`{"type":"reply","run":"deeper","call":${c.call},"ok":true,"value":${nested(10001)}}`);
  const err = await dsh.next();
  assert.equal(err.type, "error");
  assert.match(err.message, /^invalid JSON: /);
  dsh.send({ type: "reply", run: "deeper", call: c.call, ok: true, value: 1 });
  assert.equal((await dsh.result("deeper")).result.value, 1);
});

for (const [name, bytes] of [
  ["NaN", (c) => `{"type":"reply","run":"rej","call":${c},"ok":true,"value":NaN}\n`],
  ["1e400", (c) => `{"type":"reply","run":"rej","call":${c},"ok":true,"value":1e400}\n`],
  ["invalid UTF-8", (c) => Buffer.concat([Buffer.from(`{"type":"reply","run":"rej","call":${c},"ok":true,"value":"a`), Buffer.from([0xff, 0xfe]), Buffer.from('"}\n')])],
]) {
  await check(`a rejected reply (${name}) leaves the call open; the error says so; a retry is delivered`, async () => {
    // timeoutMs null: before the fix the program waited forever for a call dsh had closed.
    dsh.send({ type: "run", id: "rej", timeoutMs: null, bindings: h, program: "return await h.f()" });
    const c = await call("rej");
    dsh.sendRaw(bytes(c.call));
    const err = await dsh.next();
    assert.deepEqual(err, {
      type: "error",
      message: "invalid JSON: the line is not exactly one strict JSON value (RFC 8259 in UTF-8, finite numbers, " +
        `a reply's value nesting up to 10000 levels); the reply was not delivered: run "rej" call ${c.call} is still open`,
    });
    dsh.send({ type: "reply", run: "rej", call: c.call, ok: true, value: "second try" });
    const ev = await dsh.result("rej");
    assert.equal(ev.result.value, "second try", JSON.stringify(ev));
  });
}

await check("a call still open when its run ends gets an abandoned event before the result", async () => {
  dsh.send({ type: "run", id: "ab", bindings: h, program: "h.f().catch(() => {}); await h.g(); return 'done'" });
  const first = await call("ab");
  const second = await call("ab");
  const [f, g] = first.name === "f" ? [first, second] : [second, first];
  dsh.send({ type: "reply", run: "ab", call: g.call, ok: true, value: 0 });
  const ab = await dsh.next((e) => e.run === "ab" || e.id === "ab");
  assert.deepEqual(ab, { type: "abandoned", run: "ab", call: f.call });
  assert.equal((await dsh.result("ab")).result.value, "done");
  dsh.send({ type: "reply", run: "ab", call: f.call, ok: true, value: 1 });
  assert.match((await dsh.next()).message, /has no open call/);
});

await check("a duplicate run id while the first is in flight is an error; the first run continues", async () => {
  dsh.send({ type: "run", id: "dup", bindings: h, program: "return await h.f()" });
  const c = await call("dup");
  dsh.send({ type: "run", id: "dup", program: "return 'second'" });
  assert.deepEqual(await dsh.next(), { type: "error", id: "dup", message: "a run with this id is in flight" });
  dsh.send({ type: "reply", run: "dup", call: c.call, ok: true, value: "first" });
  assert.equal((await dsh.result("dup")).result.value, "first");
  await dsh.next(() => false, 500).catch(() => {});
  assert.deepEqual(dsh.events, [], "exactly one result for the id");
});

await check("release of an owner no run of this session used is an error, not released", async () => {
  dsh.send({ type: "release", id: "rel-x", stateOwner: "nobody" });
  assert.deepEqual(await dsh.next(), {
    type: "error", id: "rel-x", message: 'release: no run of this session used stateOwner "nobody" since its last release',
  });
});

await check("stream: true gives output events in order before the result; without it none", async () => {
  dsh.send({ type: "run", id: "s1", stream: true, program: "inspect('one'); await h.f(); inspect('two'); return 2", bindings: h });
  const c = await call("s1");
  // The barrier: the program is blocked in h.f() and has not written "two" yet.
  const first = await dsh.next((e) => e.type === "output" && e.run === "s1");
  assert.deepEqual(first, { type: "output", run: "s1", entry: { type: "text", text: "one\n" } });
  dsh.send({ type: "reply", run: "s1", call: c.call, ok: true });
  const second = await dsh.next((e) => e.run === "s1" || e.id === "s1");
  assert.deepEqual(second, { type: "output", run: "s1", entry: { type: "text", text: "two\n" } });
  const ev = await dsh.result("s1");
  assert.deepEqual(ev.result.output, [{ type: "text", text: "one\ntwo\n" }], "the result still has everything");
  dsh.send({ type: "run", id: "s0", program: "inspect('quiet'); return 0" });
  await dsh.result("s0");
  assert.equal(dsh.events.filter((e) => e.type === "output").length, 0);
});

await check("the schema accepts the requests these tests send and rejects malformed events (control)", async () => {
  assert.ok(isValidRequest({ type: "run", id: 1, program: "1", stream: true }));
  assert.ok(!isValidRequest({ type: "run", id: 1, program: "1", streaming: true }));
  assert.ok(isValidEvent({ type: "abandoned", run: "a", call: 1 }));
  assert.ok(!isValidEvent({ type: "abandoned", run: "a" }));
  assert.ok(!isValidEvent({ type: "output", run: "a", entry: { type: "text" } }));
  assert.ok(!isValidEvent({ type: "hello", version: "1" }));
});

await check("EOF after all this exits 0", async () => {
  const { code } = await dsh.close();
  assert.equal(code, 0, dsh.stderr);
});

// Retaining profile: releases of known and unknown owners.
const kept = new Dsh(dshPath, ["--patch", join(srcRoot, "examples/profiles/persistent.yaml")], { cwd });
await check("release after a run with that owner is released; a second release is an error", async () => {
  kept.send({ type: "run", id: 1, stateOwner: "agent-1", program: "var x = 41" });
  assert.equal((await kept.result(1)).result.ok, true);
  kept.send({ type: "release", id: "r1", stateOwner: "agent-1" });
  assert.deepEqual(await kept.next(), { type: "released", id: "r1" });
  kept.send({ type: "release", id: "r2", stateOwner: "agent-1" });
  assert.deepEqual(await kept.next(), {
    type: "error", id: "r2", message: 'release: no run of this session used stateOwner "agent-1" since its last release',
  });
  assert.equal((await kept.close()).code, 0);
});

await check("a rejected reply then EOF: the run ends (the open call is rejected) and dsh exits 0", async () => {
  const d = new Dsh(dshPath, [], { cwd });
  d.send({ type: "run", id: "eof", timeoutMs: null, bindings: h, program: "try { await h.f() } catch (e) { return e.message }" });
  const c = await d.next((e) => e.type === "call");
  d.send(`{"type":"reply","run":"eof","call":${c.call},"ok":true,"value":NaN}`);
  assert.equal((await d.next()).type, "error");
  d.child.stdin.end();
  const ev = await d.result("eof");
  assert.equal(ev.result.value, "the client closed dsh's stdin: no reply can come");
  assert.equal((await d.exited).code, 0);
});

done();
