// Background runs of `dsh headless --serve` (examples/host/README.md, "Background runs in
// --serve"): a run request with yieldAfterMs, wait_run, terminate_run, list_runs, the per-session
// cap, the owner rule of a retaining profile, the session's end, the bound of one answer and the
// deadline dsh keeps. Ordering is shown with file barriers (a program that prints, then waits for
// a file the test creates), never with wall-clock bounds. Every event is checked against
// host-abi/schemas/serve.json by the harness.
import assert from "node:assert/strict";
import { mkdtempSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { Dsh, check, done, isValidRequest } from "./harness.mjs";
import { bindingsRow } from "../mcp/bindings-patch.mjs";

const [dshPath, srcRoot] = process.argv.slice(2).map((p) => resolve(p));
const cwd = mkdtempSync(join(tmpdir(), "dsh-serve-bg-"));
const gates = mkdtempSync(join(cwd, "gates-")); // in the workspace: a run has a /tmp of its own
const persistent = join(srcRoot, "examples/profiles/persistent.yaml");
const clients = [];
function serve(patches = []) {
  const d = new Dsh(dshPath, patches.flatMap((p) => ["--patch", p]), { cwd });
  clients.push(d);
  return d;
}
function patch(name, yaml) {
  const path = join(cwd, name);
  writeFileSync(path, yaml);
  return path;
}

let gateCount = 0;
function gate() {
  const path = join(gates, `gate-${++gateCount}`);
  return { wait: `while (!fs.existsSync(${JSON.stringify(path)})) await new Promise((r) => setTimeout(r, 20));`, open: () => writeFileSync(path, "") };
}
const FS = 'const fs = await import("node:fs");';
const texts = (entries) => entries.map((e) => e.text).join("");
// The answer (running or result event) to request id.
const answer = (d, id) => d.next((e) => (e.type === "running" || e.type === "result") && e.id === id);

// Processes whose command line holds marker (a program sets process.title to it).
function processesWith(marker) {
  const found = [];
  for (const pid of readdirSync("/proc").filter((p) => /^\d+$/.test(p))) {
    try {
      if (/^\d+ \(.*\) Z /.test(readFileSync(`/proc/${pid}/stat`, "utf8"))) continue; // ended
      if (readFileSync(`/proc/${pid}/cmdline`, "utf8").includes(marker)) found.push(pid);
    } catch {}
  }
  return found;
}
async function until(predicate) {
  while (!predicate()) await new Promise((r) => setTimeout(r, 20));
}
// wait_run until the new output includes what (or the run ended); returns the answers.
let waits = 0;
async function waitFor(d, runId, what) {
  const answers = [];
  let seen = "";
  for (;;) {
    const id = `w${++waits}`;
    d.send({ type: "wait_run", id, runId, yieldAfterMs: 100 });
    const a = await answer(d, id);
    answers.push(a);
    seen += texts(a.output ?? []);
    if (seen.includes(what) || a.type === "result") return answers;
  }
}

// Starts background run id: a program named marker (its process title) that prints "up" and waits
// for a gate that never opens; returns once the run yielded and its "up" came back.
async function startParked(d, id, marker) {
  const g = gate();
  d.send({ type: "run", id, yieldAfterMs: 0, program: `${FS} process.title = ${JSON.stringify(marker)}; inspect("up"); ${g.wait}` });
  assert.equal((await answer(d, id)).type, "running");
  await waitFor(d, id, "up\n");
}

await check("the requests are in host-abi/schemas/serve.json", async () => {
  assert.ok(isValidRequest({ type: "run", id: 1, program: "1", yieldAfterMs: 0 }));
  assert.ok(isValidRequest({ type: "wait_run", id: "w", runId: 1, yieldAfterMs: 600000 }));
  assert.ok(isValidRequest({ type: "terminate_run", id: "t", runId: "r" }));
  assert.ok(isValidRequest({ type: "list_runs", id: "l" }));
  assert.ok(!isValidRequest({ type: "wait_run", id: "w" }));
  assert.ok(!isValidRequest({ type: "run", id: 1, program: "1", yieldAfterMs: 600001 }));
});

await check("yield, three wait_runs with only new lines, then the result", async () => {
  const d = serve();
  const g = [gate(), gate(), gate()];
  d.send({
    type: "run", id: "bg", yieldAfterMs: 200,
    program: `${FS} inspect("line 1"); ${g[0].wait} inspect("line 2"); ${g[1].wait} inspect("line 3"); ${g[2].wait} inspect("line 4"); return "done"`,
  });
  const first = await answer(d, "bg");
  assert.equal(first.type, "running", JSON.stringify(first));
  assert.equal(first.runId, "bg");
  assert.equal(first.running, true);
  assert.equal(first.pendingBytes, 0);
  const got = [texts(first.output)];
  // Each line is asked for only after the previous one arrived: every answer holds new lines only.
  for (let i = 0; i < 3; i++) {
    const want = `line ${i + 1}\n`;
    if (!got.join("").endsWith(want))
      for (const a of await waitFor(d, "bg", want)) {
        assert.equal(a.type, "running", JSON.stringify(a));
        assert.equal(a.running, true);
        got.push(texts(a.output));
      }
    // Nothing twice: the output so far is exactly the lines up to this one.
    assert.equal(got.join(""), ["line 1\n", "line 2\n", "line 3\n"].slice(0, i + 1).join(""));
    g[i].open();
  }
  // A run id is taken until its result is collected.
  d.send({ type: "run", id: "bg", program: "return 0" });
  assert.equal((await d.next((e) => e.type === "error" && e.id === "bg")).message, "a run with this id is in flight");
  const answers = await waitFor(d, "bg", "never printed");
  const last = answers.at(-1);
  assert.equal(last.type, "result", JSON.stringify(last));
  assert.equal(last.runId, "bg");
  assert.equal(last.result.ok, true);
  assert.equal(last.result.value, "done");
  for (const a of answers) got.push(texts(a.output));
  // The answers together returned every line once, in order; the result holds the whole output.
  assert.equal(got.join(""), "line 1\nline 2\nline 3\nline 4\n");
  assert.equal(texts(last.result.output), "line 1\nline 2\nline 3\nline 4\n");
  // Collected: the run id is unknown now, and free for a new run.
  d.send({ type: "wait_run", id: "gone", runId: "bg" });
  assert.equal((await d.next((e) => e.id === "gone")).message,
    'wait_run: no background run "bg" in this session (its result was collected, expired, or it never started)');
  d.send({ type: "run", id: "bg", program: "return 1" });
  assert.equal((await d.result("bg")).result.value, 1);
});

await check("a run that ends before its yield answers with its result (control: no running event)", async () => {
  const d = serve();
  d.send({ type: "run", id: 5, yieldAfterMs: 600000, program: "inspect('quick'); return 5" });
  const a = await answer(d, 5);
  assert.equal(a.type, "result");
  assert.equal(a.runId, 5);
  assert.equal(a.output, undefined); // nothing went out before: the result alone carries it
  assert.equal(texts(a.result.output), "quick\n");
  d.send({ type: "list_runs", id: "l" });
  assert.deepEqual((await d.next((e) => e.type === "runs")).runs, []);
});

await check("terminate_run ends the run as abort and nothing of its range keeps running", async () => {
  const d = serve();
  const marker = `dsh-bg-terminate-${process.pid}`;
  await startParked(d, "t1", marker);
  assert.ok(processesWith(marker).length > 0, "the program runs");
  d.send({ type: "list_runs", id: "l1" });
  const listed = (await d.next((e) => e.type === "runs" && e.id === "l1")).runs;
  assert.equal(listed.length, 1);
  assert.equal(listed[0].runId, "t1");
  assert.equal(listed[0].running, true);
  d.send({ type: "terminate_run", id: "stop", runId: "t1" });
  const end = await answer(d, "stop");
  assert.equal(end.type, "result", JSON.stringify(end));
  assert.equal(end.result.ok, false);
  assert.equal(end.result.error.kind, "abort");
  assert.equal(end.result.error.message, "execution aborted during execution: terminate_run stopped the run");
  await until(() => processesWith(marker).length === 0);
  // Control: the parked run's gate never opens, so only terminate_run ended it.
  d.send({ type: "list_runs", id: "l2" });
  assert.deepEqual((await d.next((e) => e.type === "runs" && e.id === "l2")).runs, []);
});

await check("a wait_run during the run request's own wait answers it at once; a second wait_run is refused", async () => {
  const d = serve();
  const g = gate();
  d.send({ type: "run", id: "own", yieldAfterMs: 600000, program: `${FS} ${g.wait} return 1` });
  d.send({ type: "wait_run", id: "wa", runId: "own", yieldAfterMs: 600000 });
  const ownAnswer = await answer(d, "own");
  assert.equal(ownAnswer.type, "running");
  d.send({ type: "wait_run", id: "wb", runId: "own" });
  assert.equal((await d.next((e) => e.id === "wb")).message, 'wait_run: another wait_run or terminate_run is waiting for run "own"');
  g.open();
  const end = await answer(d, "wa");
  assert.equal(end.type, "result");
  assert.equal(end.result.value, 1);
  // An ended run nobody collected keeps its id until wait_run collects it.
  const h = gate();
  d.send({ type: "run", id: "held", yieldAfterMs: 0, program: `${FS} ${h.wait} return 2` });
  assert.equal((await answer(d, "held")).type, "running");
  h.open();
  for (let running = true; running; ) {
    d.send({ type: "list_runs", id: `l${++waits}` });
    running = (await d.next((e) => e.type === "runs")).runs[0].running;
  }
  d.send({ type: "run", id: "held", program: "return 0" });
  assert.equal((await d.next((e) => e.type === "error" && e.id === "held")).message,
    "the background run with this id has a result nobody collected: wait_run collects it");
  d.send({ type: "wait_run", id: "wh", runId: "held", yieldAfterMs: 0 });
  assert.equal((await answer(d, "wh")).result.value, 2);
});

await check("bad requests are error events, each naming what is wrong", async () => {
  const d = serve();
  const cases = [
    [{ type: "run", id: "e1", program: "1", yieldAfterMs: -1 }, 'field "yieldAfterMs" must be an integer from 0 to 600000'],
    [{ type: "run", id: "e2", program: "1", yieldAfterMs: "5" }, 'field "yieldAfterMs" must be an integer'],
    [{ type: "run", id: "e3", program: "1", yieldAfterMs: 5, stream: true },
      '"stream" and "yieldAfterMs" do not combine: a background run\'s output comes in the answers to its run and wait_run requests'],
    [{ type: "run", id: "e4", program: "1", yieldAfterMs: 5, timeoutMs: null },
      'with "yieldAfterMs", field "timeoutMs" must be an integer from 1 to 600000 (maxBackgroundMs)'],
    [{ type: "wait_run", id: "e5" }, 'wait_run needs "runId" (the run request\'s id)'],
    [{ type: "wait_run", id: "e6", runId: 9 }, "wait_run: no background run 9 in this session (its result was collected, expired, or it never started)"],
    [{ type: "terminate_run", id: "e7", runId: "x", extra: 1 }, 'unknown field "extra" in a terminate_run request'],
    [{ type: "list_runs" }, "a list_runs request needs an \"id\" (a string or an integer)"],
  ];
  for (const [req, message] of cases) {
    d.send(req);
    const ev = await d.next((e) => e.type === "error");
    assert.equal(ev.message, message, JSON.stringify(req));
  }
});

await check("maxBackgroundRuns bounds the running background runs of a session", async () => {
  const d = serve([patch("cap.yaml", bindingsRow({ maxBackgroundRuns: 2 }))]);
  const g = gate();
  for (const id of ["c1", "c2"]) {
    d.send({ type: "run", id, yieldAfterMs: 0, program: `${FS} ${g.wait} return "${id}"` });
    assert.equal((await answer(d, id)).type, "running");
  }
  d.send({ type: "run", id: "c3", yieldAfterMs: 0, program: "return 3" });
  assert.equal((await d.next((e) => e.type === "error" && e.id === "c3")).message,
    "at most 2 background runs may run at once in this session: collect one with wait_run or stop one with terminate_run first");
  // Control: a run without yieldAfterMs still runs; one stopped, another background run starts.
  d.send({ type: "run", id: "fg", program: "return 'fg'" });
  assert.equal((await d.result("fg")).result.value, "fg");
  d.send({ type: "terminate_run", id: "s1", runId: "c1" });
  assert.equal((await answer(d, "s1")).result.error.kind, "abort");
  d.send({ type: "run", id: "c3", yieldAfterMs: 600000, program: "return 3" });
  assert.equal((await answer(d, "c3")).result.value, 3);
  g.open();
  d.send({ type: "wait_run", id: "w2", runId: "c2", yieldAfterMs: 600000 });
  assert.equal((await answer(d, "w2")).result.value, "c2");
});

await check("a retaining profile: another run of the owner is rejected while its background run goes on", async () => {
  const d = serve([persistent]);
  const g = gate();
  d.send({ type: "run", id: "o1", stateOwner: "a", yieldAfterMs: 0, program: `${FS} var x = 41; ${g.wait} 1` });
  assert.equal((await answer(d, "o1")).type, "running");
  d.send({ type: "run", id: "o2", stateOwner: "a", program: "x + 1" });
  const rejected = await d.next((e) => e.type === "error" && e.id === "o2");
  assert.match(rejected.message, /^run rejected \(owner-busy\): state owner "a" has a run or cleanup in progress/);
  // Control: another owner runs; once the background run ended, the owner runs again with its state.
  d.send({ type: "run", id: "p1", stateOwner: "b", program: "2" });
  assert.equal((await d.result("p1")).result.value, 2);
  g.open();
  d.send({ type: "wait_run", id: "ow", runId: "o1", yieldAfterMs: 600000 });
  assert.equal((await answer(d, "ow")).result.ok, true);
  d.send({ type: "run", id: "o3", stateOwner: "a", program: "x + 1" });
  assert.equal((await d.result("o3")).result.value, 42);
});

await check("the session's end stops its background runs; their results are written to the run requests", async () => {
  const d = serve();
  const marker = `dsh-bg-session-${process.pid}`;
  await startParked(d, "s", marker);
  d.child.stdin.end();
  const end = await d.result("s");
  assert.equal(end.runId, "s");
  assert.equal(end.result.error.kind, "abort");
  assert.equal(end.result.error.message, "execution aborted during execution: the client's session ended: its background runs stop with it");
  assert.deepEqual(await d.exited, { code: 0, signal: null });
  assert.equal(processesWith(marker).length, 0);
});

await check("one answer carries at most 65536 bytes of entries and says how many more are pending", async () => {
  const d = serve();
  const g = gate();
  const line = "x".repeat(1023);
  d.send({ type: "run", id: "big", yieldAfterMs: 0, program: `${FS} for (let i = 0; i < 200; i++) inspect(${JSON.stringify(line)}); inspect("end"); ${g.wait} return 1` });
  assert.equal((await answer(d, "big")).type, "running");
  // Wait until the whole output was produced: list_runs shows the pending bytes settle past 64 KiB.
  let pending = 0;
  while (pending <= 65536) {
    d.send({ type: "list_runs", id: `l${++waits}` });
    pending = (await d.next((e) => e.type === "runs")).runs[0].pendingBytes;
  }
  const answers = await waitFor(d, "big", "end\n");
  let total = "";
  for (const a of answers) {
    const bytes = a.output.reduce((n, e) => n + JSON.stringify(e).length, 0);
    assert.ok(bytes <= 65536, `${bytes} bytes in one answer`);
    total += texts(a.output);
  }
  assert.ok(answers.length >= 3, "200 KiB take several answers");
  assert.ok(answers[0].pendingBytes > 0);
  assert.equal(total, `${line}\n`.repeat(200) + "end\n");
  g.open();
  d.send({ type: "wait_run", id: "bw", runId: "big", yieldAfterMs: 600000 });
  const end = await answer(d, "bw");
  assert.equal(end.type, "result");
  assert.deepEqual(end.output, []);
});

await check("a deadline beyond the runtime's maxTimeoutMs is kept by dsh (control: the provider's own)", async () => {
  const d = serve([patch("deadline.yaml", "- id: ptc-runtime\n  config: {timeoutMs: 500, maxTimeoutMs: 500}\n")]);
  d.send({ type: "run", id: "long", yieldAfterMs: 0, timeoutMs: 800, program: "await new Promise(() => {})" });
  assert.equal((await answer(d, "long")).type, "running");
  d.send({ type: "wait_run", id: "lw", runId: "long", yieldAfterMs: 600000 });
  const end = await answer(d, "lw");
  assert.equal(end.result.error.kind, "abort", JSON.stringify(end));
  // The phase is the one the deadline fell in: a slow start (ASan, a loaded machine) takes longer.
  assert.match(end.result.error.message,
    /^execution aborted (during execution|before code started): the background run's deadline of 800 ms passed$/);
  d.send({ type: "run", id: "short", yieldAfterMs: 0, timeoutMs: 300, program: "await new Promise(() => {})" });
  assert.equal((await answer(d, "short")).type, "running");
  d.send({ type: "wait_run", id: "sw", runId: "short", yieldAfterMs: 600000 });
  assert.equal((await answer(d, "sw")).result.error.kind, "timeout");
  d.send({ type: "run", id: "over", yieldAfterMs: 0, timeoutMs: 600001, program: "1" });
  assert.equal((await d.next((e) => e.type === "error" && e.id === "over")).message,
    'with "yieldAfterMs", field "timeoutMs" must be an integer from 1 to 600000 (maxBackgroundMs)');
});

for (const d of clients) if (d.child.exitCode === null) await d.close();
done();
