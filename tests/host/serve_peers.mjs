// `--serve` with a client that stops reading dsh's stdout (examples/host/README.md, "Peers that
// stop reading"): a run with live output is paused while the client's queue is high (ABI 1.5
// pause_output) and goes on once it read; the loop goes on serving other runs meanwhile; once
// 64 MiB wait and the client takes nothing more, it is dropped (its runs cancelled, dsh exits 1
// with a message); a paused run's deadline still ends it. Barriers only: a file a run writes, a
// line dsh logs, a process's end.
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { existsSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { createInterface } from "node:readline";
import { check, done } from "./harness.mjs";

const [dshPath, srcRoot] = process.argv.slice(2).map((p) => resolve(p));
const writable = join(srcRoot, "examples/profiles/workspace-write.yaml");

// dsh --serve whose stdout nobody reads until read() is called.
function start(cwd, patches = [], flags = []) {
  const args = [...flags, "headless", "--patch", writable, ...patches.flatMap((p) => ["--patch", p]), "--serve"];
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

// dsh's peak resident set (VmHWM) in bytes.
const peakRss = (pid) => Number(/VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, "utf8"))[1]) * 1024;
const MIB = 1 << 20;

// Live processes below `root` (host pids, from each process's parent in /proc/PID/stat).
function descendants(root) {
  const parent = new Map();
  for (const name of readdirSync("/proc").filter((n) => /^\d+$/.test(n))) {
    try {
      const stat = readFileSync(`/proc/${name}/stat`, "utf8");
      parent.set(Number(name), Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]));
    } catch {} // it ended meanwhile
  }
  const below = (pid) => pid > 1 && (parent.get(pid) === root || below(parent.get(pid)));
  return [...parent.keys()].filter(below);
}
// Bytes a process has written (0 once it is gone); not a zombie.
const written = (pid) => {
  try { return Number(/^wchar: (\d+)$/m.exec(readFileSync(`/proc/${pid}/io`, "utf8"))[1]); } catch { return 0; }
};
const alive = (pid) => {
  try { return !/^State:\s+Z/m.test(readFileSync(`/proc/${pid}/status`, "utf8")); } catch { return false; }
};

await check("a client not reading live output: that run is paused while a later run is started and served", async () => {
  const cwd = mkdtempSync(join(tmpdir(), "dsh-serve-peers-"));
  const dsh = start(cwd);
  // 4 MiB of output events, more than the stdout pipe (1 MiB) holds; 'loud-started' after 1 MiB.
  dsh.send({
    type: "run", id: "loud", stream: true,
    program: "const fs = await import('node:fs'); for (let i = 0; i < 64; i++) { inspect('x'.repeat(65535)); " +
      "if (i === 15) fs.writeFileSync('loud-started', ''); } fs.writeFileSync('loud-done', '')",
  });
  await appears(join(cwd, "loud-started"));
  // dsh has output the client did not read; it still reads requests and runs them.
  dsh.send({ type: "run", id: "quiet", program: "(await import('node:fs')).writeFileSync('quiet-done', ''); return 7" });
  await appears(join(cwd, "quiet-done"));
  const results = await dsh.read(["loud", "quiet"]);
  assert.equal(results.quiet.ok, true);
  assert.equal(results.quiet.value, 7);
  assert.equal(results.loud.ok, true, JSON.stringify(results.loud.error));
  assert.ok(existsSync(join(cwd, "loud-done")), "the paused run went on once the client read");
  const printed = results.loud.output.filter((e) => e.type === "text").map((e) => e.text).join("");
  assert.equal(printed.length, 64 * 65536, "every output entry arrived (control: nothing was dropped)");
  dsh.child.stdin.end();
  assert.deepEqual(await dsh.exited, { code: 0, signal: null });
});

await check("live output the client has not read waits in the program (paused), not in dsh; nothing is lost", async () => {
  const cwd = mkdtempSync(join(tmpdir(), "dsh-serve-peers-"));
  const dsh = start(cwd, [], ["-v"]);
  const chunks = 48;
  dsh.send({
    type: "run", id: "flow", stream: true,
    program: `const fs = await import('node:fs'); for (let i = 0; i < ${chunks}; i++) ` +
      "{ process.stdout.write(String(i % 10).repeat(1 << 20)); fs.writeFileSync('progress', String(i + 1)); }",
  });
  // Barrier: dsh says it paused the run, or (without flow control) the program wrote everything.
  const progress = () => (existsSync(join(cwd, "progress")) ? Number(readFileSync(join(cwd, "progress"), "utf8")) : 0);
  while (!/run \d+ paused: the client has \d+ KiB of output unread/.test(dsh.stderr()) && progress() < chunks)
    await new Promise((r) => setTimeout(r, 20));
  assert.ok(progress() < chunks, `paused before the program wrote all ${chunks} MiB (it wrote ${progress()})`);
  const events = [];
  createInterface({ input: dsh.child.stdout }).on("line", (line) => events.push(JSON.parse(line)));
  dsh.child.stdout.resume();
  while (!events.some((e) => e.type === "result")) await new Promise((r) => setTimeout(r, 20));
  const result = events.find((e) => e.type === "result").result;
  assert.equal(result.ok, true, JSON.stringify(result.error));
  const expected = Array.from({ length: chunks }, (_, i) => String(i % 10).repeat(MIB)).join("");
  const streamed = events.filter((e) => e.type === "output").map((e) => e.entry.text).join("");
  assert.ok(streamed === expected, `the output events carry all ${chunks} MiB in order (got ${streamed.length} bytes)`);
  assert.ok(result.output.map((e) => e.text).join("") === expected, "the result carries all of it");
  assert.match(dsh.stderr(), /paused runs resumed: the client read their output/);
  if (process.env.ASAN_OPTIONS) {
    console.log("# skip: the peak-RSS bound is not measured under ASan (its quarantine holds freed memory)");
  } else {
    // dsh holds the result's output once (the ledger, handed to the queue without a copy) and at
    // most a few MiB of unread events; without the pause it also held every unread event.
    const peak = peakRss(dsh.child.pid);
    assert.ok(peak <= chunks * MIB + 24 * MIB, `dsh peaked at ${(peak / MIB).toFixed(1)} MiB for ${chunks} MiB of output`);
  }
  dsh.child.stdin.end();
  assert.deepEqual(await dsh.exited, { code: 0, signal: null });
});

await check("a paused run's deadline still ends it while the client reads nothing", async () => {
  const cwd = mkdtempSync(join(tmpdir(), "dsh-serve-peers-"));
  const dsh = start(cwd, [], ["-v"]);
  // Unpaused it would pass maxOutputBytes (64 MiB) long before its deadline and fail as output-limit.
  // The deadline leaves a slow start (ASan, a loaded machine) the time to fill the client's queue:
  // the run must be paused before it passes, or the wait below has nothing to see.
  dsh.send({ type: "run", id: "endless", stream: true, timeoutMs: 8000,
             program: "for (;;) process.stdout.write('x'.repeat(1 << 20))" });
  while (!/run \d+ paused: the client has \d+ KiB of output unread/.test(dsh.stderr()))
    await new Promise((r) => setTimeout(r, 20));
  // Barrier: the writing process (dsh's descendant that wrote more than a MiB) ends while paused.
  let writers;
  while ((writers = descendants(dsh.child.pid).filter((pid) => written(pid) > MIB)).length === 0)
    await new Promise((r) => setTimeout(r, 20));
  while (writers.some(alive)) await new Promise((r) => setTimeout(r, 20));
  assert.doesNotMatch(dsh.stderr(), /paused runs resumed/, "the client has read nothing yet");
  const results = await dsh.read(["endless"]);
  assert.equal(results.endless.ok, false);
  assert.equal(results.endless.error.kind, "timeout", JSON.stringify(results.endless.error));
  dsh.child.stdin.end();
  assert.deepEqual(await dsh.exited, { code: 0, signal: null });
});

await check("a client that leaves 64 MiB of events unread is dropped: runs cancelled, exit 1", async () => {
  const cwd = mkdtempSync(join(tmpdir(), "dsh-serve-peers-"));
  const big = join(cwd, "big-output.yaml");
  writeFileSync(big, "- id: ptc-runtime\n  config: {maxOutputBytes: 134217728}\n");
  const dsh = start(cwd, [big]);
  dsh.child.stdin.on("error", () => {}); // dsh stops reading requests once it dropped the client
  // A result of 70 MiB waits whole in the queue (results are never paused); the results of the
  // small runs sent after it then find more than 64 MiB unread and nothing taken since.
  dsh.send({ type: "run", id: "big", program: "return 'x'.repeat(70 << 20)" });
  dsh.send({ type: "run", id: "waiting", program: "await new Promise(() => {})" });
  let exited = false;
  dsh.exited.then(() => (exited = true));
  // Paced (each is a process): the barrier is dsh's exit, whenever the big result is queued.
  for (let i = 0; !exited; i++) {
    dsh.send({ type: "run", id: `small-${i}`, program: "return 1" });
    await Promise.race([dsh.exited, new Promise((r) => setTimeout(r, 250))]);
  }
  // Barrier: dsh's exit (the waiting run never ends on its own).
  assert.deepEqual(await dsh.exited, { code: 1, signal: null });
  assert.equal(dsh.stderr(), "dsh: the client left 64 MiB of events unread; dsh dropped it\n");
});

done();
