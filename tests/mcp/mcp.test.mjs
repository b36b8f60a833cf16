// `dsh mcp` driven by the official MCP TypeScript SDK (Client over stdio), with a downstream MCP
// server written with the same SDK's server API (downstream-server.mjs) mounted as a binding
// namespace. Usage: node --test tests/mcp/mcp.test.mjs (DSH=build/examples/host/dsh).
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { after, before, test } from "node:test";
import { fileURLToPath } from "node:url";
import { jpegBytes, pngBytes } from "../conformance/image-fixtures.js";
import sdk from "./sdk.cjs";
import { writeBindingsPatch } from "./bindings-patch.mjs";

const { Client, StdioClientTransport } = sdk;
const here = dirname(fileURLToPath(import.meta.url));
const src = resolve(here, "../..");
const dsh = resolve(process.env.DSH ?? join(src, "build/examples/host/dsh"));
const cwd = mkdtempSync(join(tmpdir(), "dsh-mcp-"));
const markers = mkdtempSync(join(tmpdir(), "dsh-mcp-markers-"));

const bindingsPatch = writeBindingsPatch(join(cwd, "mcp-bindings.yaml"), ["MARKER_DIR=" + markers]);

async function connect(patches = [bindingsPatch], extraArgs = []) {
  const transport = new StdioClientTransport({
    command: dsh,
    args: [...patches.flatMap((p) => ["--patch", p]), "mcp", ...extraArgs],
    cwd,
    stderr: "pipe",
  });
  let stderr = "";
  transport.stderr?.on("data", (d) => (stderr += d));
  const client = new Client({ name: "dsh-mcp-test", version: "1.0.0" });
  await client.connect(transport);
  // Progress as it arrives on the wire, in order. The SDK runs notification handlers a microtask
  // later but drops a call's progress handler as soon as its response is read, so the progress
  // dsh writes just before a response can miss `onprogress` when both arrive in one read.
  const progress = [];
  const deliver = transport.onmessage;
  transport.onmessage = (message, extra) => {
    if (message.method === "notifications/progress") progress.push(message.params);
    else if (message.id !== undefined && message.result !== undefined) progress.push({ response: message.id });
    deliver(message, extra);
  };
  return { client, transport, stderr: () => stderr, progress };
}

// The progress messages of the first call that sent progress after index `from`, as written
// before its response (its token is its request id).
function progressOf(session, from) {
  const token = session.progress.slice(from).find((p) => p.progressToken !== undefined)?.progressToken;
  const end = session.progress.findIndex((p) => p.response === token);
  assert.ok(end >= 0, "the response was read");
  return session.progress.slice(0, end).filter((p) => p.progressToken === token).map((p) => p.message);
}

const run = (client, program, options = {}, extra = {}) =>
  client.callTool({ name: "run_code", arguments: { program, description: "a test program", ...extra } }, undefined, options);
const text = (result) => result.content.filter((c) => c.type === "text").map((c) => c.text).join("");

let session;
before(async () => {
  session = await connect();
});
after(async () => {
  await session.client.close();
});

test("the SDK negotiates the current protocol revision and lists run_code (then the background tools)", async () => {
  const { client } = session;
  assert.equal(client.getServerVersion().name, "dsh");
  const { tools } = await client.listTools();
  assert.deepEqual(tools.map((t) => t.name), ["run_code", "wait_run", "terminate_run", "list_runs"]);
  const [tool] = tools;
  assert.deepEqual(tool.inputSchema.required, ["program", "description"]);
  const describe = JSON.parse(execFileSync(dsh, ["headless"], { cwd, stdio: ["ignore", "pipe", "ignore"] }));
  assert.equal(tool.inputSchema.properties.timeoutMs.maximum, describe.timeout.maxMs);
  assert.ok(tool.description.startsWith(describe.executionInstructions + "\n"), tool.description);
  // TypeScript declarations of every namespace: the host's tools and the downstream server.
  assert.match(tool.description, /declare const tools: \{\n(.*\n)*  registerImage\(input: \{ path: string; attachmentId\?: string \}\): Promise<string>;\n/);
  assert.match(tool.description, /  describeTool\(name: string\): Promise<string>;\n/);
  assert.doesNotMatch(tool.description, /add\(input/, "no demonstration function without the demo-tools row's mcp");
  assert.match(tool.description, /declare const issue_tracker: \{/);
  assert.match(tool.description, /search_issues\(input: \{\n\s+\/\*\* text to find \*\/\n\s+query: string;\n\s+limit\?: number;\n\s+\}\): Promise<\{\n\s+hits: Array<\{/);
  assert.match(tool.description, /fail_always\(input\?: Record<string, unknown>\): Promise<unknown>/);
  assert.match(tool.description, /\(MCP tool "fail-always"\)/);
  assert.match(tool.description, /delete_\(input: \{\n\s+id: number;\n\s+\}\)/);
});

test("run_code returns the program's output as text, then its returned value as JSON", async () => {
  const result = await run(session.client, "inspect('hello', 1 + 2); return 'shown'");
  assert.equal(result.isError, false);
  assert.deepEqual(result.content, [{ type: "text", text: 'hello 3\n"shown"\n' }]);
  const object = await run(session.client, "return { a: 1 }");
  assert.deepEqual(object.content, [{ type: "text", text: '{"a":1}\n' }]);
  assert.deepEqual(object.structuredContent, { a: 1 });
});

test("a failed run is isError with the failure kind and message", async () => {
  const result = await run(session.client, "inspect('before'); throw new Error('boom')");
  assert.equal(result.isError, true);
  assert.match(text(result), /^before\nerror \(exception\): Error: boom/);
});

test("timeoutMs: a short deadline times out; one above the descriptor's maximum is refused", async () => {
  const timedOut = await run(session.client, "await new Promise(() => {})", {}, { timeoutMs: 300 });
  assert.equal(timedOut.isError, true);
  assert.match(text(timedOut), /^error \(timeout\): execution timed out/);
  const describe = JSON.parse(execFileSync(dsh, ["headless"], { cwd, stdio: ["ignore", "pipe", "ignore"] }));
  for (const timeoutMs of [describe.timeout.maxMs + 1, 0, 1.5]) {
    const refused = await run(session.client, "1", {}, { timeoutMs });
    assert.equal(refused.isError, true);
    assert.equal(text(refused), `timeoutMs must be an integer from 1 to ${describe.timeout.maxMs}`);
  }
});

test("progress: the first line arrives before the second is written (file barrier)", async () => {
  const gate = join(cwd, "gate-progress");
  const seen = [];
  const from = session.progress.length;
  let firstArrived;
  const first = new Promise((r) => (firstArrived = r));
  const call = run(
    session.client,
    `inspect("first line");
     const fs = await import("node:fs");
     while (!fs.existsSync(${JSON.stringify(gate)})) await new Promise((r) => setTimeout(r, 20));
     await new Promise((r) => setTimeout(r, 2000));
     inspect("second line")`,
    {
      onprogress: (p) => {
        seen.push({ message: p.message, gateOpen: existsSync(gate) });
        firstArrived();
      },
    },
  );
  await first;
  assert.deepEqual(seen, [{ message: "first line\n", gateOpen: false }], "only the first line so far");
  writeFileSync(gate, "");
  const result = await call;
  assert.deepEqual(progressOf(session, from), ["first line\n", "second line\n"]);
  assert.equal(text(result), "first line\nsecond line\n");
});

test("images: image content with the file's bytes (base64) and a progress message", async () => {
  const png = pngBytes(4, 3);
  writeFileSync(join(cwd, "chart.png"), png);
  const from = session.progress.length;
  const result = await run(
    session.client,
    "inspect('chart:'); inspect(Image.get(await tools.registerImage({ path: 'chart.png', attachmentId: 'c1' })))",
    { onprogress: () => {} },
  );
  const messages = progressOf(session, from);
  assert.equal(result.isError, false, text(result));
  const images = result.content.filter((c) => c.type === "image");
  assert.deepEqual(images, [{ type: "image", data: png.toString("base64"), mimeType: "image/png" }]);
  assert.ok(messages.includes("[image c1 4x3]"), JSON.stringify(messages));
});

// Hostile: the image's file is found again when the result is built, after the program could
// change its path. A host file must never be sent, and the bytes sent must be the registered
// image's (format and pixel size checked again). Each note's text is exact.
const secretText = "root:$y$j9T$host-secret-" + process.pid + ":19000:0:99999:7:::\n";
function hostSecretDir() {
  const dir = mkdtempSync(join(tmpdir(), "dsh-mcp-secret-"));
  writeFileSync(join(dir, "x"), secretText);
  writeFileSync(join(dir, "x.png"), Buffer.concat([pngBytes(4, 3), Buffer.from(secretText)]));
  return dir;
}
// Whether any content item carries bytes of a host secret file.
function leaks(result) {
  return result.content.some((c) =>
    (c.type === "text" && c.text.includes("host-secret")) ||
    (c.type === "image" && Buffer.from(c.data, "base64").includes("host-secret")));
}
// A session whose programs may write their workspace (the files they register).
let writer;
async function writingSession() {
  if (!writer) {
    const ws = mkdtempSync(join(tmpdir(), "dsh-mcp-ws-"));
    const patch = join(ws, "..", ws.split("/").at(-1) + ".yaml");
    writeFileSync(patch, `- id: sandbox-policy\n  config: ${JSON.stringify({ mode: "workspace-write", workspaceRoot: ws })}\n`);
    writer = await connect([bindingsPatch, patch]);
  }
  return writer;
}
after(async () => {
  await writer?.client.close();
});
const writePng = (path, w, h) =>
  `fs.writeFileSync(${JSON.stringify(path)}, Buffer.from(${JSON.stringify(pngBytes(w, h).toString("base64"))}, "base64"));`;

test("images: a directory swapped for a symlink to a host directory after registration sends no host file", async () => {
  const secret = hostSecretDir();
  const result = await run(
    (await writingSession()).client,
    `const fs = await import("node:fs");
     fs.mkdirSync("swap-d");
     ${writePng("swap-d/x", 4, 3)}
     inspect(Image.get(await tools.registerImage({ path: "swap-d/x", attachmentId: "s1" })));
     fs.renameSync("swap-d", "swap-d.old");
     fs.symlinkSync(${JSON.stringify(secret)}, "swap-d");`,
  );
  assert.equal(result.isError, false, text(result));
  assert.equal(leaks(result), false, JSON.stringify(result));
  assert.deepEqual(result.content, [
    { type: "text", text: "[Image s1 4x3]\n" },
    { type: "text", text: "[image s1 not included: its path no longer leads to the file that was registered]" },
  ]);
});

test("images: a final-component symlink to a host PNG, and a same-size non-image written in place, are refused", async () => {
  const secret = hostSecretDir();
  const png = pngBytes(4, 3);
  const result = await run(
    (await writingSession()).client,
    `const fs = await import("node:fs");
     ${writePng("last.png", 4, 3)}
     ${writePng("inplace.png", 4, 3)}
     ${writePng("resized.png", 4, 3)}
     const shown = [];
     for (const [path, id] of [["last.png", "l1"], ["inplace.png", "p1"], ["resized.png", "r1"]])
       shown.push(Image.get(await tools.registerImage({ path, attachmentId: id })));
     inspect(...shown);
     fs.renameSync("last.png", "last.old");
     fs.symlinkSync(${JSON.stringify(join(secret, "x.png"))}, "last.png");
     fs.writeFileSync("inplace.png", "N".repeat(${png.length}));
     const resized = fs.readFileSync("resized.png");
     resized.writeUInt32BE(5, 16); // IHDR width: same bytes count, another pixel size
     fs.writeFileSync("resized.png", resized);`,
  );
  assert.equal(result.isError, false, text(result));
  assert.equal(leaks(result), false, JSON.stringify(result));
  assert.deepEqual(result.content, [
    { type: "text", text: "[Image l1 4x3] [Image p1 4x3] [Image r1 4x3]\n" },
    { type: "text", text: "[image l1 not included: its path no longer leads to the file that was registered]" },
    { type: "text", text: "[image p1 not included: the file changed after it was registered: not a PNG or JPEG file]" },
    { type: "text", text: "[image r1 not included: the file changed after it was registered: it is 5x3, not 4x3]" },
  ]);
});

test("images: untouched PNG and JPEG files are sent with their bytes and MIME types (control)", async () => {
  const jpeg = jpegBytes(6, 5);
  const result = await run(
    (await writingSession()).client,
    `const fs = await import("node:fs");
     fs.mkdirSync("ctl-d", { recursive: true });
     ${writePng("ctl-d/a.png", 4, 3)}
     fs.writeFileSync("ctl-d/b.jpg", Buffer.from(${JSON.stringify(jpeg.toString("base64"))}, "base64"));
     inspect(Image.get(await tools.registerImage({ path: "ctl-d/a.png", attachmentId: "k1" })),
             Image.get(await tools.registerImage({ path: "ctl-d/b.jpg", attachmentId: "k2" })));`,
  );
  assert.equal(result.isError, false, text(result));
  assert.deepEqual(result.content, [
    { type: "text", text: "[Image k1 4x3] [Image k2 6x5]\n" },
    { type: "image", data: pngBytes(4, 3).toString("base64"), mimeType: "image/png" },
    { type: "image", data: jpeg.toString("base64"), mimeType: "image/jpeg" },
  ]);
});

test("a downstream tool's structured result, a mapped reserved name, and a tool error", async () => {
  const result = await run(
    session.client,
    `const r = await issue_tracker.search_issues({ query: "ptc", limit: 5 });
     inspect(r.hits.map((h) => h.id));
     inspect(await issue_tracker.delete_({ id: 3 }));
     try { await issue_tracker.fail_always({}) } catch (e) {
       inspect(e instanceof McpToolError, e.constructor.name, e.member, e.message)
     }`,
  );
  assert.equal(result.isError, false, text(result));
  assert.equal(text(result), "[ 1, 2 ]\ndeleted 3\ntrue McpToolError fail_always downstream says no\n");
});

test("three concurrent calls run at once (each waits for a barrier the others' progress opens)", async () => {
  const gate = join(cwd, "gate-three");
  const started = new Set();
  const calls = [0, 1, 2].map((i) =>
    run(
      session.client,
      `inspect("started ${i}");
       const fs = await import("node:fs");
       while (!fs.existsSync(${JSON.stringify(gate)})) await new Promise((r) => setTimeout(r, 20));
       inspect("done ${i}")`,
      {
        onprogress: (p) => {
          if (p.message.startsWith("started")) started.add(i);
          if (started.size === 3) writeFileSync(gate, "");
        },
      },
    ),
  );
  const results = await Promise.all(calls);
  assert.deepEqual(results.map(text), [0, 1, 2].map((i) => `started ${i}\ndone ${i}\n`));
});

const appears = async (file) => {
  while (!existsSync(file)) await new Promise((r) => setTimeout(r, 20));
};

test("cancellation aborts the run: the downstream call it was waiting on is cancelled too", async () => {
  const controller = new AbortController();
  const call = run(session.client, "await issue_tracker.block()", { signal: controller.signal });
  // Barrier: the program's call reached the downstream server and is open there.
  await appears(join(markers, "blocked"));
  controller.abort("the user pressed stop");
  await assert.rejects(call, /the user pressed stop/);
  // dsh cancelled the run; its end cancelled the open tools/call at the downstream server.
  await appears(join(markers, "cancelled"));
  // The session still works.
  assert.equal(text(await run(session.client, "inspect('after')")), "after\n");
});

test("a retaining profile: one stateOwner per session, released when the session ends", async () => {
  const persistent = join(src, "examples/profiles/persistent.yaml");
  const first = await connect([persistent]);
  assert.equal(text(await run(first.client, "var x = 41")), "(no output)");
  assert.equal(text(await run(first.client, "inspect(x + 1)")), "42\n");
  // Two calls at once are queued for the owner, not rejected as owner-busy.
  const both = await Promise.all([run(first.client, "var y = x + 2"), run(first.client, "inspect(y)")]);
  assert.deepEqual(both.map((r) => r.isError), [false, false]);
  assert.equal(text(both[1]), "43\n");
  const exited = new Promise((r) => first.transport._process.once("exit", (code) => r(code)));
  await first.client.close();
  assert.equal(await exited, 0, first.stderr());
  assert.doesNotMatch(first.stderr(), /releasing .* failed/);
  // A call the provider rejects at start does not hold up the owner's next queued call.
  const limited = join(cwd, "persistent-small.yaml");
  writeFileSync(limited, "- id: ptc-runtime\n  config: {executionMode: persistent-in-memory, maxMessageBytes: 4096}\n");
  const small = await connect([limited]);
  const [tooBig, next] = await Promise.all([
    run(small.client, `inspect(${JSON.stringify("x".repeat(5000))})`),
    run(small.client, "inspect('next')"),
  ]);
  assert.equal(tooBig.isError, true);
  assert.match(text(tooBig), /^the run was rejected \(limit\): /);
  assert.equal(text(next), "next\n");
  await small.client.close();
  // A new session starts with empty memory.
  const second = await connect([persistent]);
  const fresh = await run(second.client, "inspect(typeof x)");
  assert.equal(text(fresh), "undefined\n");
  await second.client.close();
});

test("a retaining profile with idleReleaseMs: the model is told that earlier state is gone", async () => {
  const patch = join(cwd, "persistent-idle.yaml");
  writeFileSync(patch, "- id: ptc-runtime\n  config: {executionMode: persistent-in-memory, idleReleaseMs: 100}\n");
  const s = await connect([patch], ["-v"]);
  assert.equal(text(await run(s.client, "var x = 41")), "(no output)");
  // The provider logs the release (dsh -v); no bound on when it comes.
  while (!/ran nothing for 100 ms \(idleReleaseMs\); it is released/.test(s.stderr())) await new Promise((r) => setTimeout(r, 10));
  const fresh = await run(s.client, "inspect(typeof x)");
  assert.equal(fresh.isError, false);
  assert.match(text(fresh), /^note: earlier state is gone: the earlier environment of state owner "[^"]+" was released after 100 ms without a run \(idleReleaseMs\); this run started in a fresh one, so earlier variables are gone\nundefined\n$/);
  await s.client.close();
  // The control: without idleReleaseMs no note, the variable stays.
  const kept = await connect([join(src, "examples/profiles/persistent.yaml")]);
  await run(kept.client, "var x = 41");
  await new Promise((r) => setTimeout(r, 300));
  assert.equal(text(await run(kept.client, "inspect(x)")), "41\n");
  await kept.client.close();
});

// ---- restarts: a downstream server that exits is started again (README "Restarts") ----

// A session whose downstream server behaves as RESTART_MODE says once restarted (see
// downstream-server.mjs); its starts' pids are listed in <markers>/pids.
async function restartSession(mode) {
  const dir = mkdtempSync(join(tmpdir(), `dsh-mcp-restart-${mode}-`));
  const patch = writeBindingsPatch(join(dir, "bindings.yaml"), ["MARKER_DIR=" + dir, "RESTART_MODE=" + mode]);
  const s = await connect([patch]);
  s.pids = () => readFileSync(join(dir, "pids"), "utf8").split("\n").filter(Boolean).map(Number);
  return s;
}

// Ends dsh by closing its stdin (as a harness does); resolves with its exit code once it exited.
// s.drained resolves once its stderr was read to the end (a process it left behind would hold
// stderr open, so tests of orphans check right at the exit).
function finish(s) {
  const proc = s.transport._process;
  const exited = new Promise((r) => proc.once("exit", (code) => r(code)));
  s.drained = new Promise((r) => s.transport.stderr.once("end", r));
  proc.stdin.end();
  return exited;
}

// A process that still runs (a zombie has ended: only its parent has not reaped it yet).
function running(pid) {
  try {
    return !/^\d+ \(.*\) Z /.test(readFileSync(`/proc/${pid}/stat`, "utf8"));
  } catch {
    return false;
  }
}

test("a server that crashes mid-call: that call rejects, later calls reach a new process", async () => {
  const s = await restartSession("fewer-tools");
  const result = await run(
    s.client,
    `const first = await issue_tracker.pid();
     inspect(first === (await issue_tracker.pid())); // control: one process answers both
     inspect(await issue_tracker.first_life());
     try { await issue_tracker.crash() } catch (e) { inspect(e instanceof McpToolError, e.member, e.message) }
     // Sent while the server restarts (or after): queued until it is ready, then answered.
     const second = await issue_tracker.pid();
     inspect(first, second);
     try { await issue_tracker.first_life() } catch (e) { inspect(e.message) }
     inspect((await issue_tracker.search_issues({ query: "MCP" })).hits.length)`,
  );
  const pids = s.pids();
  assert.equal(pids.length, 2);
  assert.notEqual(pids[0], pids[1]);
  assert.equal(
    text(result),
    "true\nfirst life\ntrue crash the MCP server issue-tracker exited\n" +
      `${pids[0]} ${pids[1]}\n` +
      "the MCP server issue-tracker no longer offers the tool first_life\n1\n",
  );
  assert.equal(running(pids[0]), false, "the crashed process was reaped");
  assert.equal(running(pids[1]), true);
  assert.equal(await finish(s), 0);
  assert.equal(running(pids[1]), false, "dsh's exit stopped the restarted server");
  await s.drained;
  assert.match(s.stderr(), /^dsh: MCP server issue-tracker closed its stdout\ndsh: MCP server issue-tracker: restart 1 of 8 in 0 ms\n/m);
  assert.ok(s.stderr().includes(`dsh: MCP server issue-tracker restarted (pid ${pids[1]})\n`), s.stderr());
  assert.ok(s.stderr().includes("dsh: MCP server issue-tracker no longer offers the tool first_life; calls to it reject\n"));
});

test("a server that exits at every restart is given up after 8 restarts; its calls then reject", async () => {
  const s = await restartSession("exit");
  const result = await run(
    s.client,
    `inspect(typeof (await issue_tracker.pid())); // control: the first process serves calls
     try { await issue_tracker.crash() } catch (e) { inspect(e.message) }
     // Queued through the restarts, rejected when dsh gives up.
     try { await issue_tracker.pid() } catch (e) { inspect(e.message) }
     try { await issue_tracker.search_issues({ query: "x" }) } catch (e) { inspect(e instanceof McpToolError, e.message) }`,
  );
  assert.equal(
    text(result),
    "string\nthe MCP server issue-tracker exited\n" +
      "the MCP server issue-tracker exited and dsh gave up restarting it\n" +
      "true the MCP server issue-tracker exited and dsh gave up restarting it\n",
  );
  const pids = s.pids();
  assert.equal(pids.length, 9, "the first start and 8 restarts");
  assert.deepEqual(pids.filter(running), []);
  assert.equal(await finish(s), 0);
  await s.drained;
  const restarts = s.stderr().match(/^dsh: MCP server issue-tracker: restart .*$/gm);
  assert.deepEqual(restarts, [0, 100, 200, 400, 800, 1600, 3200, 5000].map(
      (ms, i) => `dsh: MCP server issue-tracker: restart ${i + 1} of 8 in ${ms} ms`,
    ));
  assert.ok(s.stderr().includes("dsh: MCP server issue-tracker: gave up restarting it\n"), s.stderr());
});

test("a restart that answers initialize with a revision dsh does not speak is a failed start", async () => {
  const s = await restartSession("bad-version");
  const result = await run(
    s.client,
    `inspect(typeof (await issue_tracker.pid())); // control: the first process (the SDK's) is accepted
     try { await issue_tracker.crash() } catch (e) { inspect(e.message) }
     try { await issue_tracker.pid() } catch (e) { inspect(e.message) }`,
  );
  assert.equal(
    text(result),
    "string\nthe MCP server issue-tracker exited\nthe MCP server issue-tracker exited and dsh gave up restarting it\n",
  );
  assert.equal(s.pids().length, 9);
  assert.deepEqual(s.pids().filter(running), [], "each refused process was ended");
  assert.equal(await finish(s), 0);
  await s.drained;
  const refusals = s.stderr().match(/^dsh: MCP server issue-tracker speaks protocol revision "1999-01-01", which dsh does not$/gm);
  assert.equal(refusals?.length, 8, s.stderr());
});

test("calls queue (at most 64) while a restarted server is in its handshake (30 s at most); dsh's exit stops it", async () => {
  const s = await restartSession("hang");
  const result = await run(
    s.client,
    `try { await issue_tracker.crash() } catch (e) { inspect(e.message) }
     // The restarted process never answers initialize: 64 calls wait, the 65th is refused.
     const calls = Array.from({ length: 65 }, () => issue_tracker.pid());
     inspect(await Promise.race(calls.map((c) => c.then(() => "answered", (e) => e.message))))`,
  );
  assert.equal(
    text(result),
    "the MCP server issue-tracker exited\nthe MCP server issue-tracker is restarting and already has 64 calls waiting\n",
  );
  while (s.pids().length < 2) await new Promise((r) => setTimeout(r, 20));
  const [crashed, hanging] = s.pids();
  assert.equal(running(crashed), false);
  assert.equal(running(hanging), true, "control: a running server is seen as running");
  // The session still runs programs while the server is mid-restart.
  assert.equal(text(await run(s.client, "inspect('still here')")), "still here\n");
  // The handshake's 30 s run out (barrier: the next start's pid): the silent process was killed.
  while (s.pids().length < 3) await new Promise((r) => setTimeout(r, 50));
  const third = s.pids()[2];
  assert.equal(running(hanging), false, "the process that missed its handshake was ended");
  assert.ok(s.stderr().includes("dsh: MCP server issue-tracker: no answer to initialize within 30000 ms\n"), s.stderr());
  assert.ok(s.stderr().includes("dsh: MCP server issue-tracker: restart 2 of 8 in 100 ms\n"), s.stderr());
  assert.equal(running(third), true, "control: a running server is seen as running");
  assert.equal(await finish(s), 0);
  assert.equal(running(third), false, "stopping dsh killed the server mid-handshake");
  assert.deepEqual(s.pids(), [crashed, hanging, third]);
});
