// `--serve` with a client that stops reading dsh's stdout (examples/host/README.md, "Peers that
// stop reading"): the loop goes on serving other runs while events wait; once 64 MiB wait and the
// client takes nothing more, it is dropped (its runs cancelled, dsh exits 1 with a message).
// Barriers only: a file a run writes, the process's exit.
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { existsSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { createInterface } from "node:readline";
import { check, done } from "./harness.mjs";

const [dshPath, srcRoot] = process.argv.slice(2).map((p) => resolve(p));
const writable = join(srcRoot, "examples/profiles/workspace-write.yaml");

// dsh --serve whose stdout nobody reads until read() is called.
function start(cwd, patches = []) {
  const args = ["headless", "--patch", writable, ...patches.flatMap((p) => ["--patch", p]), "--serve"];
  const child = spawn(dshPath, args, { cwd, stdio: ["pipe", "pipe", "pipe"] });
  child.stdout.pause();
  let stderr = "";
  child.stderr.setEncoding("utf8");
  child.stderr.on("data", (d) => (stderr += d));
  const exited = new Promise((r) => child.on("exit", (code, signal) => r({ code, signal })));
  const send = (req) => child.stdin.write(JSON.stringify(req) + "\n");
  // Reads the events from now on; resolves with the result events by id once ids all came.
  const read = (ids) =>
    new Promise((resolveAll) => {
      const results = {};
      createInterface({ input: child.stdout }).on("line", (line) => {
        const ev = JSON.parse(line);
        if (ev.type === "result") results[ev.id] = ev.result;
        if (ids.every((id) => id in results)) resolveAll(results);
      });
      child.stdout.resume();
    });
  return { child, send, read, exited, stderr: () => stderr };
}

const appears = async (file) => {
  while (!existsSync(file)) await new Promise((r) => setTimeout(r, 20));
};

await check("a client not reading 4 MiB of events: a later run is still started and served", async () => {
  const cwd = mkdtempSync(join(tmpdir(), "dsh-serve-peers-"));
  const dsh = start(cwd);
  // 4 MiB of output events, more than the stdout pipe (1 MiB) holds.
  dsh.send({
    type: "run", id: "loud", stream: true,
    program: "for (let i = 0; i < 64; i++) inspect('x'.repeat(65535)); (await import('node:fs')).writeFileSync('loud-done', '')",
  });
  await appears(join(cwd, "loud-done"));
  // dsh has 4 MiB of events the client did not read; it still reads requests and runs them.
  dsh.send({ type: "run", id: "quiet", program: "(await import('node:fs')).writeFileSync('quiet-done', ''); return 7" });
  await appears(join(cwd, "quiet-done"));
  const results = await dsh.read(["loud", "quiet"]);
  assert.equal(results.quiet.ok, true);
  assert.equal(results.quiet.value, 7);
  assert.equal(results.loud.ok, true, JSON.stringify(results.loud.error));
  const printed = results.loud.output.filter((e) => e.type === "text").map((e) => e.text).join("");
  assert.equal(printed.length, 64 * 65536, "every output entry arrived (control: nothing was dropped)");
  dsh.child.stdin.end();
  assert.deepEqual(await dsh.exited, { code: 0, signal: null });
});

await check("a client that leaves 64 MiB of events unread is dropped: runs cancelled, exit 1", async () => {
  const cwd = mkdtempSync(join(tmpdir(), "dsh-serve-peers-"));
  const big = join(cwd, "big-output.yaml");
  writeFileSync(big, "- id: ptc-runtime\n  config: {maxOutputBytes: 134217728}\n");
  const dsh = start(cwd, [big]);
  dsh.send({
    type: "run", id: "flood", stream: true,
    program: "for (let i = 0; i < 80; i++) inspect('x'.repeat(1 << 20)); await new Promise(() => {})",
  });
  // Barrier: dsh's exit (the run never ends on its own).
  assert.deepEqual(await dsh.exited, { code: 1, signal: null });
  assert.equal(dsh.stderr(), "dsh: the client left 64 MiB of events unread; dsh dropped it\n");
});

done();
