// on_output (ABI 1.1) through `--serve` with "stream": true: every entry the ledger accepts, in
// order, images as their descriptors; never output the ledger discards (after an overflow, after
// a stop request); the result still carries the complete output.
import assert from "node:assert/strict";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { pngBytes } from "../conformance/image-fixtures.js";
import { Dsh, check, done } from "./harness.mjs";

const [dshPath, srcRoot] = process.argv.slice(2).map((p) => resolve(p));
const cwd = mkdtempSync(join(tmpdir(), "dsh-stream-"));
const patch = (name, yaml) => {
  const file = join(cwd, name);
  writeFileSync(file, yaml);
  return file;
};
const h = [{ global: "h", functions: ["f"] }];

// Collects a run's output events until its result.
async function streamed(dsh, id, onCall) {
  const entries = [];
  for (;;) {
    const ev = await dsh.next((e) => e.run === id || e.id === id);
    if (ev.type === "output") entries.push(ev.entry);
    else if (ev.type === "call") await onCall(ev);
    else if (ev.type === "result") return { entries, result: ev.result };
  }
}
const merged = (entries) => entries.reduce((out, e) => {
  const last = out.at(-1);
  if (e.type === "text" && last?.type === "text") last.text += e.text;
  else out.push({ ...e });
  return out;
}, []);
const texts = (entries) => entries.filter((e) => e.type === "text").map((e) => e.text).join("");

await check("text and images stream in order; the result has the same entries (text merged)", async () => {
  writeFileSync(join(cwd, "a.png"), pngBytes(3, 2));
  const dsh = new Dsh(dshPath, [], { cwd });
  dsh.send({
    type: "run", id: "img", stream: true,
    program: "inspect('before'); inspect(Image.get(await tools.registerImage({ path: 'a.png', attachmentId: 'a1' }))); inspect('after')",
  });
  const { entries, result } = await streamed(dsh, "img");
  const image = entries.find((e) => e.type === "image");
  assert.deepEqual(image, result.output.find((e) => e.type === "image"));
  assert.equal(image.width, 3);
  assert.equal(image.height, 2);
  assert.ok(entries.indexOf(image) > 0 && entries.indexOf(image) < entries.length - 1);
  assert.equal(entries[0].text, "before\n");
  assert.equal(entries.at(-1).text, "after\n");
  assert.deepEqual(merged(entries), result.output);
  assert.equal((await dsh.close()).code, 0);
});

await check("after an overflow nothing more is reported: the events are exactly the kept prefix", async () => {
  const dsh = new Dsh(dshPath, ["--patch", patch("small.yaml", "- id: ptc-runtime\n  config: {maxOutputBytes: 64}\n")], { cwd });
  dsh.send({ type: "run", id: "big", stream: true, program: "for (let i = 0; i < 20; i++) inspect('line ' + i)" });
  const { entries, result } = await streamed(dsh, "big");
  assert.equal(result.ok, false);
  assert.equal(result.error.kind, "output-limit");
  assert.equal(texts(entries), texts(result.output));
  assert.ok(texts(entries).length <= 64);
  assert.ok(!texts(entries).includes("line 19"));
  assert.equal((await dsh.close()).code, 0);
});

await check("output after a stop request (catch/finally of a cancelled retained run) is not reported", async () => {
  const dsh = new Dsh(dshPath, ["--patch", join(srcRoot, "examples/profiles/persistent.yaml")], { cwd });
  dsh.send({
    type: "run", id: "stop", stream: true, stateOwner: "o1", bindings: h,
    program: "try { inspect('before'); await h.f() } finally { inspect('after the stop') }",
  });
  const { entries, result } = await streamed(dsh, "stop", async () => dsh.send({ type: "cancel", id: "stop" }));
  assert.equal(result.error.kind, "abort");
  assert.equal(texts(entries), "before\n");
  assert.equal(texts(result.output), "before\n");
  assert.equal((await dsh.close()).code, 0);
});

done();
