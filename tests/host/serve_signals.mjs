// No leaks when the host dies: `dsh headless --serve` with an active per-call run (holding a
// file in its private temp dir and a detached grandchild) and retained runs (one busy, one
// idle). SIGTERM and SIGINT cancel the runs, wait for quiescence and remove the temp dirs before
// dsh exits 143 / 130; after kill -9 no process is left (the ranges die with their supervisor)
// and the next start removes the killed host's temp directory. `dsh mcp` stops the same way.
import assert from "node:assert/strict";
import { execFileSync, spawn } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, readdirSync, readlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { createInterface } from "node:readline";
import { Dsh, check, done } from "./harness.mjs";

const [dshPath, srcRoot] = process.argv.slice(2).map((p) => resolve(p));
const cwd = mkdtempSync(join(tmpdir(), "dsh-signals-"));
const writable = join(cwd, "workspace-write.yaml");
writeFileSync(writable, "- id: sandbox-policy\n  config:\n    mode: workspace-write\n");
const args = ["--patch", writable, "--patch", join(srcRoot, "examples/profiles/persistent.yaml")];

// Processes of this test's runs: a cwd in the workspace, or the marker in the command line.
function leftovers(marker) {
  const found = [];
  for (const pid of readdirSync("/proc").filter((n) => /^\d+$/.test(n))) {
    try {
      const cmd = readFileSync(`/proc/${pid}/cmdline`, "utf8").replace(/\0/g, " ");
      let dir = "";
      try {
        dir = readlinkSync(`/proc/${pid}/cwd`);
      } catch {}
      if (cmd.includes(marker) || dir === cwd || dir.startsWith(cwd + "/")) found.push(`${pid}: ${cmd}`);
    } catch {}
  }
  return found;
}

// A serve host with a per-call run sleeping in a detached grandchild, a busy retained run and an
// idle retained owner; resolves with the per-call run's private temp dir once all are running.
const hosts = []; // every host started, so a failed check cannot leave one to the next
async function killHosts() {
  for (const h of hosts.splice(0)) {
    if (h.child.exitCode === null && h.child.signalCode === null) h.child.kill("SIGKILL");
    await h.exited;
  }
}

async function busyHost(marker) {
  await killHosts();
  const dsh = new Dsh(dshPath, args, { cwd });
  hosts.push(dsh);
  dsh.send({ type: "run", id: "idle", stateOwner: "o-idle", program: "globalThis.kept = 1" });
  assert.equal((await dsh.result("idle")).result.ok, true);
  dsh.send({
    type: "run", id: "percall", stream: true,
    program: `const fs = await import('node:fs'); const os = await import('node:os');
      const cp = await import('node:child_process');
      fs.writeFileSync(os.tmpdir() + '/payload', 'x'.repeat(1 << 20));
      cp.spawn('sleep', ['${marker}'], { detached: true, stdio: 'ignore' }).unref();
      inspect(os.tmpdir()); await new Promise(() => {})`,
  });
  dsh.send({ type: "run", id: "busy", stateOwner: "o-busy", stream: true, program: "inspect('busy'); await new Promise(() => {})" });
  const out = await dsh.next((e) => e.type === "output" && e.run === "percall");
  await dsh.next((e) => e.type === "output" && e.run === "busy");
  const temp = out.entry.text.trim();
  assert.match(temp, /\/dsh-host-[^/]+\/dsh-run-[^/]+$/);
  // The payload is in the run's tmpfs (its own mount namespace); the host sees the mount point.
  assert.equal(existsSync(temp), true);
  assert.ok(leftovers(marker).length >= 3, "the grandchild and both runs' processes are alive");
  return { dsh, temp };
}

for (const [signal, status] of [["SIGTERM", 143], ["SIGINT", 130]]) {
  await check(`${signal}: runs are cancelled, nothing is left, dsh exits ${status}`, async () => {
    const marker = `${signal === "SIGTERM" ? 901 : 902}.${process.pid}`;
    const { dsh, temp } = await busyHost(marker);
    dsh.child.kill(signal);
    const exit = await dsh.exited;
    assert.deepEqual(exit, { code: status, signal: null }, dsh.stderr);
    for (const id of ["percall", "busy"]) {
      const ev = dsh.events.find((e) => e.type === "result" && e.id === id);
      assert.equal(ev?.result.error.kind, "abort", JSON.stringify(dsh.events));
      assert.match(ev.result.error.message, new RegExp(`dsh received ${signal}$`));
    }
    assert.deepEqual(leftovers(marker), []);
    assert.equal(existsSync(temp), false, "the run's temp dir is gone");
    assert.equal(existsSync(dirname(temp)), false, "and the host's directory");
  });
}

await check("kill -9: no process is left, and the next start removes the temp directory", async () => {
  const marker = `903.${process.pid}`;
  const { dsh, temp } = await busyHost(marker);
  dsh.child.kill("SIGKILL");
  await dsh.exited;
  assert.equal(existsSync(temp), true, "a killed host cannot clean up itself");
  // The supervisors die with the host (PDEATHSIG), each range with its supervisor.
  for (let i = 0; i < 100 && leftovers(marker).length; i++) await new Promise((r) => setTimeout(r, 50));
  assert.deepEqual(leftovers(marker), []);
  execFileSync(dshPath, ["headless", "-e", "return 1"], { cwd, encoding: "utf8" });
  assert.equal(existsSync(dirname(temp)), false, "the next start swept the killed host's directory");
});

await check("control: without a signal the host keeps its runs and its temp directory", async () => {
  const marker = `904.${process.pid}`;
  const { dsh, temp } = await busyHost(marker);
  await new Promise((r) => setTimeout(r, 300));
  execFileSync(dshPath, ["headless", "-e", "return 1"], { cwd, encoding: "utf8" });
  assert.equal(existsSync(temp), true, "a live host's directory is not swept");
  assert.ok(leftovers(marker).length >= 3);
  dsh.child.kill("SIGTERM");
  await dsh.exited;
});

await killHosts();
await check("dsh mcp: SIGTERM cancels the call, removes its temp directory and exits 143", async () => {
  const marker = `905.${process.pid}`;
  const child = spawn(dshPath, ["--patch", writable, "mcp"], { cwd, stdio: ["pipe", "pipe", "pipe"] });
  let stderr = "";
  child.stderr.on("data", (d) => (stderr += d));
  const exited = new Promise((r) => child.on("exit", (code, signal) => r({ code, signal })));
  const messages = [];
  let wake = () => {};
  createInterface({ input: child.stdout }).on("line", (l) => {
    messages.push(JSON.parse(l));
    wake();
  });
  const next = async (match) => {
    for (;;) {
      const i = messages.findIndex(match);
      if (i >= 0) return messages.splice(i, 1)[0];
      await new Promise((r) => (wake = r));
    }
  };
  const send = (m) => child.stdin.write(JSON.stringify({ jsonrpc: "2.0", ...m }) + "\n");
  send({ id: 1, method: "initialize", params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "t", version: "1" } } });
  await next((m) => m.id === 1);
  send({ method: "notifications/initialized" });
  send({
    id: 2, method: "tools/call",
    params: {
      name: "run_code", _meta: { progressToken: "p" },
      arguments: { description: "a stopped program", program: `const os = await import('node:os'); const cp = await import('node:child_process');
        cp.spawn('sleep', ['${marker}'], { detached: true, stdio: 'ignore' }).unref();
        inspect(os.tmpdir()); await new Promise(() => {})` },
    },
  });
  const progress = await next((m) => m.method === "notifications/progress" || m.id === 2);
  assert.equal(progress.method, "notifications/progress", JSON.stringify(progress));
  const temp = /(\/\S+\/dsh-run-[^/\s]+)/.exec(progress.params.message)[1];
  assert.equal(existsSync(temp), true);
  child.kill("SIGTERM");
  assert.deepEqual(await exited, { code: 143, signal: null }, stderr);
  assert.deepEqual(leftovers(marker), []);
  assert.equal(existsSync(dirname(temp)), false, "the host's temp directory is gone");
});

done();
