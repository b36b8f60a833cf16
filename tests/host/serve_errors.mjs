// `dsh headless --serve` request parsing: every bad line gets {"type":"error",...} and the server
// keeps going; EOF with nothing in flight exits 0.
import assert from "node:assert/strict";
import { resolve } from "node:path";
import { Dsh, check, done } from "./harness.mjs";

const dshPath = resolve(process.argv[2]);
const dsh = new Dsh(dshPath);

async function expectError(line, { id, message }) {
  dsh.send(line);
  const ev = await dsh.next();
  assert.equal(ev.type, "error", `event for ${line}: ${JSON.stringify(ev)}`);
  assert.equal(typeof ev.message, "string");
  if (id === undefined) assert.ok(!("id" in ev), `no id expected: ${JSON.stringify(ev)}`);
  else assert.deepEqual(ev.id, id);
  if (message) assert.match(ev.message, message);
  return ev;
}

await check("invalid JSON", () => expectError("{not json", { message: /invalid JSON/ }));
await check("trailing text", () => expectError('{"type":"run"} x', { message: /invalid JSON/ }));
await check("not an object", () => expectError("[1,2]", { message: /JSON object/ }));
await check("a bare string", () => expectError('"run"', { message: /JSON object/ }));
await check("missing type", () => expectError('{"id":1}', { id: 1, message: /type/ }));
await check("type not a string", () => expectError('{"type":5,"id":"a"}', { id: "a", message: /type/ }));
await check("unknown type", () =>
  expectError({ type: "launch", id: "x" }, { id: "x", message: /unknown request type "launch"/ }));
await check("run without id", () =>
  expectError({ type: "run", program: "return 1" }, { message: /needs an "id"/ }));
await check("id of a bad type", () =>
  expectError({ type: "run", id: { a: 1 }, program: "return 1" }, { message: /"id" must be/ }));
await check("run without program", () =>
  expectError({ type: "run", id: "r1" }, { id: "r1", message: /missing field "program"/ }));
await check("program not a string", () =>
  expectError({ type: "run", id: "r2", program: 42 }, { id: "r2", message: /"program"/ }));
await check("unknown run field", () =>
  expectError({ type: "run", id: "r3", program: "1", timeout: 5 }, { id: "r3", message: /unknown field "timeout"/ }));
await check("timeoutMs of a bad type", () =>
  expectError({ type: "run", id: "r4", program: "1", timeoutMs: "5" }, { id: "r4", message: /timeoutMs/ }));
await check("bindings not a list", () =>
  expectError({ type: "run", id: "r5", program: "1", bindings: {} }, { id: "r5", message: /bindings/ }));
await check("binding without functions", () =>
  expectError({ type: "run", id: "r6", program: "1", bindings: [{ global: "g" }] }, { id: "r6", message: /bindings\[0\]/ }));
await check("binding function not a string", () =>
  expectError({ type: "run", id: "r7", program: "1", bindings: [{ global: "g", functions: [1] }] }, { id: "r7", message: /functions\[0\]/ }));
await check("discardCompletion not a boolean", () =>
  expectError({ type: "run", id: "r8", program: "1", discardCompletion: "yes" }, { id: "r8", message: /discardCompletion/ }));
await check("relative cwd is rejected by resolve", () =>
  expectError({ type: "run", id: "r9", program: "1", cwd: "rel" }, { id: "r9", message: /rejected/ }));
await check("cancel of an unknown run", () =>
  expectError({ type: "cancel", id: "nope", reason: "x" }, { id: "nope", message: /no run/ }));
await check("cancel without id", () => expectError({ type: "cancel" }, { message: /needs an "id"/ }));
await check("reply to an unknown run", () =>
  expectError({ type: "reply", run: "nope", call: 1, ok: true, value: 1 }, { message: /no open call/ }));
await check("reply without ok", () =>
  expectError({ type: "reply", run: "nope", call: 1 }, { message: /"ok"/ }));
await check("reply without run", () =>
  expectError({ type: "reply", call: 1, ok: true }, { message: /"run"/ }));
await check("release without stateOwner", () =>
  expectError({ type: "release", id: "rel" }, { id: "rel", message: /stateOwner/ }));
await check("set-mode without mode", () =>
  expectError({ type: "set-mode" }, { message: /missing field "mode"/ }));
await check("set-mode with an unknown mode", () =>
  expectError({ type: "set-mode", mode: "everything" }, { message: /set-mode/ }));
await check("blank lines are ignored", async () => {
  dsh.send("");
  dsh.send("   ");
  await expectError("{", { message: /invalid JSON/ });
});
await check("the server still works: set-mode is acknowledged", async () => {
  dsh.send({ type: "set-mode", mode: "workspace-write" });
  const ev = await dsh.next();
  assert.deepEqual(ev, { type: "mode-set", session: null, mode: "workspace-write" });
});
await check("EOF with nothing in flight exits 0", async () => {
  const { code } = await dsh.close();
  assert.equal(code, 0, dsh.stderr);
  assert.deepEqual(dsh.events, []);
});
done();
