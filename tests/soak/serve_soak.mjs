// Soak: N runs through one `dsh headless --serve` host (workspace-write, so every run has a private
// temp dir), mixed ok, throw, output, binding (a client call answered with reply), timeout and
// cancel, a few in flight at once. The host's fd count, thread count and RSS at the end are
// within 10% of their values after run 10, and nothing is left: no process of the runs, no range
// cgroup, no temp directory.
//
//   node tests/soak/serve_soak.mjs DSH SRC_ROOT [RUNS]     (RUNS: default 200, or $DSH_SOAK_RUNS)
import assert from "node:assert/strict";
import { existsSync, mkdtempSync, readFileSync, readdirSync, readlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { Dsh, check, done } from "../host/harness.mjs";

const [dshPath, srcRoot] = process.argv.slice(2, 4).map((p) => resolve(p));
const runs = Number(process.argv[4] ?? process.env.DSH_SOAK_RUNS ?? 200);
const inFlight = 4;
const baselineAt = 10;
assert.ok(Number.isInteger(runs) && runs > baselineAt, `RUNS must be an integer above ${baselineAt}`);
const cwd = mkdtempSync(join(tmpdir(), "dsh-soak-"));
const patch = join(cwd, "workspace-write.yaml");
// The prewarmed pool is off: between runs the host then has no process and no temp dir of a
// run at all, an idle state the samples can wait for exactly (the pool's own drains and reaping
// are tested with the plugin; serve_signals.mjs stops a host with its pool).
writeFileSync(patch, "- id: sandbox-policy\n  config:\n    mode: workspace-write\n" +
  "- id: ptc-runtime\n  config:\n    prewarmProcesses: 0\n");

const kinds = {
  ok: { program: "const fs = await import('node:fs'); const os = await import('node:os'); fs.writeFileSync(os.tmpdir() + '/t', 'x'); return 40 + 2",
        check: (r) => r.ok && r.value === 42 },
  throw: { program: "throw new RangeError('soak')", check: (r) => !r.ok && r.error.kind === "exception" && /RangeError: soak/.test(r.error.message) },
  output: { program: "for (let i = 0; i < 50; i++) inspect('line', i, { i }); return 'done'",
            check: (r) => r.ok && r.output.length >= 1 && r.output.map((e) => e.text).join("").split("\n").length > 50 },
  binding: { program: "return (await host.lookup({ key: 'k' })).found + 1", bindings: [{ global: "host", functions: ["lookup"] }],
             check: (r) => r.ok && r.value === 2 },
  timeout: { program: "await new Promise(() => {})", timeoutMs: 300, check: (r) => !r.ok && r.error.kind === "timeout" },
  cancel: { program: "inspect('started'); await new Promise(() => {})", stream: true, check: (r) => !r.ok && r.error.kind === "abort" },
};
const order = Object.keys(kinds);

function sample(pid) {
  const status = readFileSync(`/proc/${pid}/status`, "utf8");
  const field = (name) => Number(new RegExp(`^${name}:\\s+(\\d+)`, "m").exec(status)[1]);
  const fds = readdirSync(`/proc/${pid}/fd`);
  const targets = fds.map((fd) => {
    try {
      return readlinkSync(`/proc/${pid}/fd/${fd}`);
    } catch {
      return "?";
    }
  });
  return { fds: fds.length, threads: field("Threads"), rssKb: field("VmRSS"), rssAnonKb: field("RssAnon"),
           rssFileKb: field("RssFile"), targets };
}

// Processes of the runs: their working directory is the workspace (the host's too: not counted).
function runProcesses() {
  const found = [];
  for (const pid of readdirSync("/proc").filter((n) => /^\d+$/.test(n) && Number(n) !== dsh.child.pid)) {
    try {
      const dir = readlinkSync(`/proc/${pid}/cwd`);
      if (dir === cwd || dir.startsWith(cwd + "/")) found.push(`${pid}: ${readFileSync(`/proc/${pid}/cmdline`, "utf8").replace(/\0/g, " ")}`);
    } catch {}
  }
  return found;
}

// Whether a range cgroup's processes include the type stripper (`node .../stripper.js`).
function holdsStripper(dir) {
  try {
    return readFileSync(join(dir, "cgroup.procs"), "utf8").split("\n").filter(Boolean)
      .some((p) => readFileSync(`/proc/${p}/cmdline`, "utf8").includes("/stripper.js"));
  } catch {
    return false;
  }
}

// The host's range cgroups (dsh-range-<host pid>-<n>, in its session groups dsh-session-<host pid>-<n>)
// in every hierarchy it belongs to.
function rangeCgroups(pid, lines, { sessions = false } = {}) {
  const found = [];
  for (const line of lines) {
    const [, controllers, path] = line.split(":");
    const mounts = controllers === "" ? ["/sys/fs/cgroup", "/sys/fs/cgroup/unified"]
      : controllers.split(",").map((c) => `/sys/fs/cgroup/${c.replace(/^name=/, "")}`);
    for (const m of mounts) {
      const dir = join(m, path);
      try {
        for (const name of readdirSync(dir)) {
          if (name.startsWith(`dsh-range-${pid}-`)) found.push(join(dir, name));
          if (name.startsWith(`dsh-session-${pid}-`)) {
            if (sessions) found.push(join(dir, name));
            for (const range of readdirSync(join(dir, name))) if (range.startsWith(`dsh-range-${pid}-`)) found.push(join(dir, name, range));
          }
        }
      } catch {}
    }
  }
  return found;
}

// The host's temp directory: the one it holds open (with its lock).
function hostTempDir(pid) {
  return readdirSync(`/proc/${pid}/fd`).map((fd) => {
    try {
      return readlinkSync(`/proc/${pid}/fd/${fd}`);
    } catch {
      return "";
    }
  }).filter((p) => /\/dsh-host-[^/]+$/.test(p));
}

// A result can come before its range's cleanup has finished (a timeout's outcome is chosen
// first). The barrier before a sample: no process of a run is left and the host's temp
// directory is empty, i.e. every range was reaped and every confinement released.
async function idle(pid) {
  for (let i = 0; i < 3000; i++) {
    const [dir] = hostTempDir(pid);
    if (dir && readdirSync(dir).length === 0 && runProcesses().length === 0) return;
    await new Promise((r) => setTimeout(r, 20));
  }
  throw new Error(`the host did not become idle: ${JSON.stringify(runProcesses())}`);
}

const dsh = new Dsh(dshPath, ["--patch", patch], { cwd });
const pid = dsh.child.pid;
const cgroupLines = readFileSync(`/proc/${pid}/cgroup`, "utf8").trim().split("\n");
let started = 0, finished = 0, baseline, hostDir, inFlightSeen;
const failures = [];

// One run of kind order[i % 6]; resolves when its result is in and checked.
async function one(i) {
  const kind = order[i % order.length];
  const k = kinds[kind];
  const id = `r${i}`;
  dsh.send({ type: "run", id, program: k.program, bindings: k.bindings, timeoutMs: k.timeoutMs, stream: k.stream });
  if (kind === "binding") {
    const call = await dsh.next((e) => e.type === "call" && e.run === id, 60000);
    dsh.send({ type: "reply", run: id, call: call.call, ok: true, value: { found: 1 } });
  } else if (kind === "cancel") {
    await dsh.next((e) => e.type === "output" && e.run === id, 60000);
    // Control: while a run is in flight the probes below see its process, cgroup and temp dir.
    if (!inFlightSeen) {
      const [dir] = hostTempDir(pid);
      inFlightSeen = { processes: runProcesses().length, cgroups: rangeCgroups(pid, cgroupLines).length,
                       tempDirs: dir ? readdirSync(dir).length : 0 };
    }
    dsh.send({ type: "cancel", id, reason: "soak" });
  }
  const ev = await dsh.result(id, 60000);
  if (!k.check(ev.result)) failures.push({ id, kind, result: ev.result });
  finished++;
}

async function worker() {
  while (started < runs) {
    const i = started++;
    await one(i);
  }
}

const t0 = Date.now();
await check(`${runs} mixed runs through one --serve host give the expected results`, async () => {
  // The first ten alone, so the baseline is taken with nothing in flight.
  while (started < baselineAt) await one(started++);
  await idle(pid);
  baseline = sample(pid);
  await Promise.all(Array.from({ length: inFlight }, worker));
  assert.deepEqual(failures, []);
  await idle(pid);
});
const end = sample(pid);
const seconds = ((Date.now() - t0) / 1000).toFixed(1);
const figures = ({ fds, threads, rssKb, rssAnonKb, rssFileKb }) => JSON.stringify({ fds, threads, rssKb, rssAnonKb, rssFileKb });
console.log(`# ${runs} runs in ${seconds} s; after run ${baselineAt}: ${figures(baseline)}; after run ${runs}: ${figures(end)}`);

await check("fd count, thread count and RSS end within 10% of their values after run 10", async () => {
  for (const key of ["fds", "threads", "rssKb"])
    assert.ok(end[key] <= baseline[key] * 1.1,
      `${key}: ${baseline[key]} after run ${baselineAt}, ${end[key]} after run ${runs} (fds: ${JSON.stringify(end.targets)})`);
});

await check("idle: no run process, no range cgroup, no run temp directory", async () => {
  for (const [what, n] of Object.entries(inFlightSeen)) assert.ok(n > 0, `control: a run in flight shows ${what}`);
  // Between runs the host keeps its own directory and nothing in it.
  const dirs = hostTempDir(pid);
  assert.equal(dirs.length, 1, "the host holds its temp directory open (its lock)");
  hostDir = dirs[0];
  assert.deepEqual(readdirSync(hostDir), []);
  assert.deepEqual(runProcesses(), []);
  // The session's type stripper (plugin/env/stripper.c) is a range of its own that lives until
  // unload; it holds no run.
  assert.deepEqual(rangeCgroups(pid, cgroupLines).filter((dir) => !holdsStripper(dir)), []);
});

await check("after EOF the host exits 0 and leaves nothing", async () => {
  const exit = await dsh.close();
  assert.deepEqual(exit, { code: 0, signal: null }, dsh.stderr);
  assert.equal(existsSync(hostDir), false, "the host's temp directory is removed");
  assert.deepEqual(runProcesses(), []);
  assert.deepEqual(rangeCgroups(pid, cgroupLines, { sessions: true }), [], "no range cgroup and no session group");
});

done();
