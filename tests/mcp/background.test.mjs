// Background runs of `dsh mcp` (examples/host/README.md, "Background runs") through the official
// MCP SDK client: run_code with yieldAfterMs, wait_run, terminate_run, list_runs, the per-session
// cap, a retaining profile's owner rule, the session's end, and the bound of one answer. Ordering
// is shown with file barriers (a program that prints, then waits for a file the test creates),
// never with wall-clock bounds. Usage: node --test tests/mcp/background.test.mjs (DSH=the binary).
import assert from "node:assert/strict";
import { mkdtempSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { after, test } from "node:test";
import { fileURLToPath } from "node:url";
import sdk from "./sdk.cjs";
import { bindingsRow } from "./bindings-patch.mjs";

const { Client, StdioClientTransport } = sdk;
const here = dirname(fileURLToPath(import.meta.url));
const src = resolve(here, "../..");
const dsh = resolve(process.env.DSH ?? join(src, "build/examples/host/dsh"));
const cwd = mkdtempSync(join(tmpdir(), "dsh-mcp-bg-"));
const gates = mkdtempSync(join(cwd, "gates-")); // in the workspace: a run has a /tmp of its own

const sessions = [];
async function connect(patches = []) {
  const transport = new StdioClientTransport({
    command: dsh,
    args: [...patches.flatMap((p) => ["--patch", p]), "mcp"],
    cwd,
    stderr: "pipe",
  });
  let stderr = "";
  transport.stderr?.on("data", (d) => (stderr += d));
  const client = new Client({ name: "dsh-mcp-background-test", version: "1.0.0" });
  await client.connect(transport);
  const s = { client, transport, stderr: () => stderr };
  sessions.push(s);
  return s;
}
after(async () => {
  for (const s of sessions) await s.client.close();
});

function patch(name, yaml) {
  const path = join(cwd, name);
  writeFileSync(path, yaml);
  return path;
}

const call = (s, name, args) => s.client.callTool({ name, arguments: args });
const runCode = (s, program, extra = {}) => call(s, "run_code", { program, description: "a background test", ...extra });
const text = (result) => result.content.filter((c) => c.type === "text").map((c) => c.text).join("");
// The output of an answer: a running one's first item (its second is the note), or the result's text.
const newOutput = (result) => {
  if (result.structuredContent?.runId === undefined) return text(result);
  assert.equal(result.content.length, 2);
  return result.content[0].text === "(no new output)" ? "" : result.content[0].text;
};
const note = (result) => result.content[1].text;

// Program text: wait until the gate file `name` exists (polled by the program).
let gateCount = 0;
function gate() {
  const path = join(gates, `gate-${++gateCount}`);
  return { path, wait: `while (!fs.existsSync(${JSON.stringify(path)})) await new Promise((r) => setTimeout(r, 20));`, open: () => writeFileSync(path, "") };
}
const FS = 'const fs = await import("node:fs");';

// Processes whose command line holds marker (a program sets process.title to it).
function processesWith(marker) {
  const found = [];
  for (const pid of readdirSync("/proc").filter((p) => /^\d+$/.test(p))) {
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
      if (/^\d+ \(.*\) Z /.test(stat)) continue; // a zombie has ended
      if (readFileSync(`/proc/${pid}/cmdline`, "utf8").includes(marker)) found.push(pid);
    } catch {}
  }
  return found;
}
async function until(predicate) {
  while (!predicate()) await new Promise((r) => setTimeout(r, 20));
}
// wait_run until its output includes what (or the run ends); returns the answers.
async function waitFor(s, runId, what) {
  const answers = [];
  let seen = "";
  for (;;) {
    const r = await call(s, "wait_run", { runId, yieldAfterMs: 100 });
    answers.push(r);
    seen += newOutput(r);
    if (seen.includes(what) || r.structuredContent?.runId === undefined) return answers;
  }
}

test("tools/list: run_code takes yieldAfterMs; wait_run, terminate_run and list_runs with schemas and annotations", async () => {
  const s = await connect();
  const tools = (await s.client.listTools()).tools;
  assert.deepEqual(tools.map((t) => t.name), ["run_code", "wait_run", "terminate_run", "list_runs"]);
  const [runCodeTool, wait, terminate, list] = tools;
  assert.deepEqual(runCodeTool.inputSchema.properties.yieldAfterMs, {
    type: "integer", minimum: 0, maximum: 600000,
    description: "Run in the background: when the run has not ended after this many milliseconds, return its output so far and {running: true, runId} (at most 4 background runs at once in this session; its end stops them)",
  });
  assert.equal(wait.description, "Wait for a background run of run_code: returns the output since the last return (at most 65536 bytes; a note says how many more are pending) when the run ends or after yieldAfterMs, and once it ended its result, as run_code shows one (kept 10 minutes after the end)");
  assert.deepEqual(wait.inputSchema.required, ["runId"]);
  assert.deepEqual(Object.keys(wait.inputSchema.properties).sort(), ["runId", "yieldAfterMs"]);
  assert.deepEqual(terminate.inputSchema.required, ["runId"]);
  assert.deepEqual(Object.keys(list.inputSchema.properties), []);
  assert.deepEqual(wait.annotations, { title: "Wait for a background run", readOnlyHint: true, idempotentHint: false, openWorldHint: false });
  assert.deepEqual(terminate.annotations, { title: "Stop a background run", readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: false });
  assert.deepEqual(list.annotations, { title: "List the background runs", readOnlyHint: true, idempotentHint: false, openWorldHint: false });
  // Untrusted arguments: each refused with what is wrong.
  assert.match(text(await call(s, "wait_run", {})), /^wait_run needs the string argument "runId"$/);
  assert.match(text(await call(s, "wait_run", { runId: "run-99" })), /^no background run "run-99" in this session/);
  assert.match(text(await call(s, "wait_run", { runId: "run-1", yieldAfterMs: -1 })), /^yieldAfterMs must be an integer from 0 to 600000$/);
  assert.match(text(await call(s, "terminate_run", { runId: 7 })), /^terminate_run needs the string argument "runId"$/);
  assert.match(text(await call(s, "list_runs", { x: 1 })), /^list_runs has no argument "x"$/);
  assert.match(text(await runCode(s, "return 1", { yieldAfterMs: "1" })), /^yieldAfterMs must be an integer/);
  assert.equal(text(await call(s, "list_runs", {})), "(no background runs)");
  // Control: a run that ends before its yield returns its result, as without yieldAfterMs.
  const quick = await runCode(s, "inspect('quick'); return {a: 1}", { yieldAfterMs: 600000 });
  assert.equal(text(quick), 'quick\n{"a":1}\n');
  assert.deepEqual(quick.structuredContent, { a: 1 });
  assert.equal(text(await call(s, "list_runs", {})), "(no background runs)");
});

test("yieldAfterMs returns running with the first line; each wait_run returns only new lines; the last carries the result", async () => {
  const s = await connect();
  const [g1, g2, g3] = [gate(), gate(), gate()];
  const program = `${FS} inspect("line 1"); ${g1.wait} inspect("line 2"); ${g2.wait} inspect("line 3"); ${g3.wait} return { done: 3 }`;
  const first = await runCode(s, program, { yieldAfterMs: 100 });
  assert.equal(first.isError, false);
  assert.equal(first.structuredContent.running, true);
  const runId = first.structuredContent.runId;
  assert.match(runId, /^run-\d+$/);
  assert.match(note(first), new RegExp(`^\\[${runId} is still running: call wait_run with runId "${runId}"`));
  const answers = [first];
  // The first line arrives (in the first answer, or a later one when the process started late).
  if (!newOutput(first).includes("line 1")) answers.push(...(await waitFor(s, runId, "line 1")));
  const listed = await call(s, "list_runs", {});
  assert.match(text(listed), new RegExp(`^${runId} running \\d+ s: a background test\\n$`));
  assert.deepEqual(listed.structuredContent.runs.map((r) => [r.runId, r.description, r.running]), [[runId, "a background test", true]]);
  g1.open();
  answers.push(...(await waitFor(s, runId, "line 2")));
  g2.open();
  answers.push(...(await waitFor(s, runId, "line 3")));
  g3.open();
  let last;
  do {
    last = await call(s, "wait_run", { runId, yieldAfterMs: 100 });
    answers.push(last);
  } while (last.structuredContent?.runId !== undefined);
  // Only new lines, each once, in order; the last answer is the result.
  assert.equal(answers.map(newOutput).join(""), 'line 1\nline 2\nline 3\n{"done":3}\n');
  assert.deepEqual(last.structuredContent, { done: 3 });
  assert.equal(last.isError, false);
  // Collected: it is gone.
  assert.match(text(await call(s, "wait_run", { runId })), /^no background run/);
});

test("terminate_run ends a run as abort and nothing of its range keeps running", async () => {
  const s = await connect();
  const marker = `dsh-bg-terminate-${process.pid}`;
  const program = `process.title = ${JSON.stringify(marker)}; inspect("started"); setInterval(() => {}, 1000); await new Promise(() => {})`;
  const started = await runCode(s, program, { yieldAfterMs: 0 });
  const runId = started.structuredContent.runId;
  assert.equal(started.structuredContent.running, true);
  await until(() => processesWith(marker).length > 0); // control: the process list shows the run
  const ended = await call(s, "terminate_run", { runId });
  assert.equal(ended.isError, true);
  assert.match(text(ended), /error \(abort\): .*terminate_run stopped the run/);
  // The abort result may come while the killed range is still being reaped: the barrier is its
  // end (a process that kept running would hold the test until the suite's timeout).
  await until(() => processesWith(marker).length === 0);
  assert.equal(text(await call(s, "list_runs", {})), "(no background runs)");
});

test("at most maxBackgroundRuns run at once per session (control: one more after terminate_run)", async () => {
  const s = await connect([patch("cap.yaml", bindingsRow({ maxBackgroundRuns: 2 }))]);
  assert.match((await s.client.listTools()).tools[0].inputSchema.properties.yieldAfterMs.description, /at most 2 background runs at once in this session/);
  const forever = "setInterval(() => {}, 1000); await new Promise(() => {})";
  const a = await runCode(s, forever, { yieldAfterMs: 0 });
  const b = await runCode(s, forever, { yieldAfterMs: 0 });
  const refused = await runCode(s, forever, { yieldAfterMs: 0 });
  assert.equal(refused.isError, true);
  assert.equal(text(refused), "at most 2 background runs may run at once in this session: collect one with wait_run or stop one with terminate_run first");
  // A run without yieldAfterMs is no background run: it still runs.
  assert.equal(text(await runCode(s, "inspect('foreground')")), "foreground\n");
  await call(s, "terminate_run", { runId: a.structuredContent.runId });
  const c = await runCode(s, forever, { yieldAfterMs: 0 });
  assert.equal(c.structuredContent.running, true);
  assert.deepEqual((await call(s, "list_runs", {})).structuredContent.runs.map((r) => r.runId), [b.structuredContent.runId, c.structuredContent.runId]);
});

test("a retaining profile: while its background run is going another run_code is rejected (control: after it ended)", async () => {
  const s = await connect([join(src, "examples/profiles/persistent.yaml")]);
  const g = gate();
  const first = await runCode(s, `${FS} var x = 41; ${g.wait} inspect("done")`, { yieldAfterMs: 0 });
  const runId = first.structuredContent.runId;
  assert.equal(first.structuredContent.running, true);
  const rejected = await runCode(s, "inspect(x + 1)");
  assert.equal(rejected.isError, true);
  assert.match(text(rejected), /^the run was rejected \(owner-busy\): state owner "mcp-session-\d+" has a run or cleanup in progress$/);
  g.open();
  const answers = await waitFor(s, runId, "done");
  while (answers.at(-1).structuredContent?.runId !== undefined) answers.push(await call(s, "wait_run", { runId }));
  assert.equal(answers.map(newOutput).join(""), "done\n");
  assert.equal(text(await runCode(s, "inspect(x + 1)")), "42\n");
});

test("the session's end stops its background runs", async () => {
  const s = await connect();
  const marker = `dsh-bg-session-${process.pid}`;
  const started = await runCode(s, `process.title = ${JSON.stringify(marker)}; setInterval(() => {}, 1000); await new Promise(() => {})`, { yieldAfterMs: 0 });
  assert.equal(started.structuredContent.running, true);
  await until(() => processesWith(marker).length > 0); // control
  const proc = s.transport._process;
  const exited = new Promise((r) => proc.once("exit", (code) => r(code)));
  proc.stdin.end();
  assert.equal(await exited, 0, s.stderr());
  assert.deepEqual(processesWith(marker), []);
});

test("one answer returns at most 65536 bytes of output and says how many more are pending", async () => {
  const s = await connect();
  const g = gate();
  const line = "x".repeat(99);
  const program = `${FS} for (let i = 0; i < 2000; i++) inspect(String(i).padStart(4, "0") + ${JSON.stringify(line)}); inspect("all"); ${g.wait} return 7`;
  const first = await runCode(s, program, { yieldAfterMs: 0 });
  const runId = first.structuredContent.runId;
  const answers = [first, ...(await waitFor(s, runId, "all\n"))];
  const bounded = answers.find((a) => a.structuredContent?.pendingBytes > 0);
  assert.ok(bounded, "an answer left output pending");
  assert.ok(Buffer.byteLength(newOutput(bounded)) <= 65536);
  assert.match(note(bounded), new RegExp(`^\\[${bounded.structuredContent.pendingBytes} more bytes of output are pending: call wait_run with runId "${runId}" for them\\]$`));
  g.open();
  while (answers.at(-1).structuredContent?.runId !== undefined) answers.push(await call(s, "wait_run", { runId }));
  const expected = Array.from({ length: 2000 }, (_, i) => String(i).padStart(4, "0") + line + "\n").join("") + "all\n7\n";
  assert.equal(answers.map(newOutput).join(""), expected);
});

test("a background deadline beyond maxTimeoutMs (up to maxBackgroundMs) is kept by dsh", async () => {
  const s = await connect([patch("short.yaml", "- id: ptc-runtime\n  config: {timeoutMs: 1000, maxTimeoutMs: 1000}\n")]);
  const forever = "setInterval(() => {}, 1000); await new Promise(() => {})";
  // Control: without yieldAfterMs the runtime's maximum holds.
  assert.match(text(await runCode(s, forever, { timeoutMs: 1500 })), /^timeoutMs must be an integer from 1 to 1000$/);
  const started = await runCode(s, forever, { timeoutMs: 1500, yieldAfterMs: 0 });
  const runId = started.structuredContent.runId;
  let last;
  do last = await call(s, "wait_run", { runId, yieldAfterMs: 600000 });
  while (last.structuredContent?.runId !== undefined);
  assert.match(text(last), /error \(abort\): .*the background run's deadline of 1500 ms passed/);
});

test("a background run's output counts against maxOutputBytes (control: the same output within it)", async () => {
  const s = await connect([patch("small-output.yaml", "- id: ptc-runtime\n  config: {maxOutputBytes: 4096}\n")]);
  const g = gate();
  const collect = async (program) => {
    const first = await runCode(s, program, { yieldAfterMs: 0 });
    const runId = first.structuredContent?.runId;
    const answers = [first];
    while (runId && answers.at(-1).structuredContent?.runId !== undefined) answers.push(await call(s, "wait_run", { runId }));
    return answers;
  };
  g.open(); // the programs below wait for it only after their output: both end by themselves
  const within = await collect(`${FS} inspect("x".repeat(1000)); ${g.wait} return 1`);
  assert.equal(within.map(newOutput).join(""), "x".repeat(1000) + "\n1\n");
  const beyond = await collect(`${FS} for (let i = 0; i < 10; i++) inspect("x".repeat(1000)); ${g.wait} return 1`);
  assert.equal(beyond.at(-1).isError, true);
  assert.match(text(beyond.at(-1)), /error \(output-limit\): /);
});
