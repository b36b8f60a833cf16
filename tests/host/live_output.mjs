// `dsh headless -e` prints output as the program writes it. Barrier: the program prints its
// first line, then waits for a file the test creates only after it has read that line from dsh's
// stdout; so the first line provably arrived before the second was written.
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { existsSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { check, done } from "./harness.mjs";

const dshPath = resolve(process.argv[2]);
const cwd = mkdtempSync(join(tmpdir(), "dsh-live-"));
const program = `inspect("first line");
const fs = await import("node:fs");
while (!fs.existsSync("go")) await new Promise((r) => setTimeout(r, 20));
await new Promise((r) => setTimeout(r, 2000));
inspect("second line");
return 42`;

function runDsh(args) {
  const child = spawn(dshPath, ["headless", ...args], { cwd, stdio: ["ignore", "pipe", "pipe"] });
  let out = "";
  const waiters = [];
  child.stdout.setEncoding("utf8");
  child.stdout.on("data", (d) => {
    out += d;
    for (const w of waiters.splice(0)) w();
  });
  const exited = new Promise((r) => child.on("exit", (code) => r(code)));
  const until = async (pred) => {
    while (!pred(out)) await new Promise((r) => waiters.push(r));
  };
  return { child, exited, until, get out() { return out; } };
}

await check("-e: the first line reaches the terminal before the second is written", async () => {
  const d = runDsh(["-e", program]);
  await d.until((o) => o.includes("first line\n"));
  assert.ok(!existsSync(join(cwd, "go")), "the barrier is still closed");
  assert.equal(d.out, "first line\n", "nothing else yet");
  writeFileSync(join(cwd, "go"), "");
  assert.equal(await d.exited, 0);
  assert.equal(d.out, "first line\nsecond line\n42\n", "output once, then the value");
});

await check("--json prints only the result line (no live output)", async () => {
  const d = runDsh(["--json", "-e", "inspect('a'); return 1"]);
  assert.equal(await d.exited, 0);
  const lines = d.out.trim().split("\n");
  assert.equal(lines.length, 1);
  assert.deepEqual(JSON.parse(lines[0]).output, [{ type: "text", text: "a\n" }]);
});

done();
