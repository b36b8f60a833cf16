// What `dsh mcp` tells the model: every sentence of run_code's description is a claim this file
// runs (a claim without a test fails "every sentence ... has its test"), for each standing policy
// and profile that changes the description; the result's completion value (shown by default, not
// with the runtime row's discardCompletion), the sandbox's refusal note, the tool's annotations
// and outputSchema, and the host's `tools` namespace (demonstration functions only on request).
// Usage: node --test tests/mcp/description.test.mjs (DSH=build/examples/host/dsh).
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { after, test } from "node:test";
import { fileURLToPath } from "node:url";
import sdk from "./sdk.cjs";

const { Client, StdioClientTransport } = sdk;
const here = dirname(fileURLToPath(import.meta.url));
const src = resolve(here, "../..");
const dsh = resolve(process.env.DSH ?? join(src, "build/examples/host/dsh"));
const scratch = mkdtempSync(join(tmpdir(), "dsh-mcp-desc-"));

// A workspace of its own per policy, and a patch naming it with the policy's mode.
function policy(mode, extra = "") {
  const ws = mkdtempSync(join(tmpdir(), `dsh-mcp-desc-${mode}-`));
  writeFileSync(join(ws, "given.txt"), "from the workspace");
  const patch = join(scratch, `${mode}-${ws.split("/").at(-1)}.yaml`);
  writeFileSync(patch, `- id: sandbox-policy\n  config: ${JSON.stringify({ mode, workspaceRoot: ws })}\n${extra}`);
  return { ws, patch };
}

const sessions = [];
async function connect(patches) {
  const transport = new StdioClientTransport({
    command: dsh,
    args: [...patches.flatMap((p) => ["--patch", p]), "mcp"],
    cwd: scratch,
    stderr: "pipe",
  });
  const client = new Client({ name: "dsh-mcp-description-test", version: "1.0.0" });
  await client.connect(transport);
  const [tool] = (await client.listTools()).tools;
  const session = { client, tool, description: tool.description };
  sessions.push(session);
  return session;
}
after(async () => {
  for (const s of sessions) await s.client.close();
});

const call = (s, program, extra = {}) =>
  s.client.callTool({ name: "run_code", arguments: { program, description: "a description test", ...extra } });
const text = (result) => result.content.filter((c) => c.type === "text").map((c) => c.text).join("");
const describe = (patches = []) =>
  JSON.parse(execFileSync(dsh, [...patches.flatMap((p) => ["--patch", p]), "headless"], { cwd: scratch, stdio: ["ignore", "pipe", "ignore"] }));

// Each claim: a sentence the description holds, and the test that runs what it says.
// claimed(session, sentence) asserts the sentence is there and records it as tested.
function claimed(s, sentence) {
  assert.ok(s.description.includes(sentence), `the description says: ${sentence}\n---\n${s.description}`);
  (s.claims ??= []).push(sentence);
}
// Everything of the description outside the tested sentences (and the list of functions,
// checked by its own tests) must be nothing but whitespace.
function everySentenceTested(s) {
  let rest = s.description;
  for (const sentence of s.claims ?? []) rest = rest.replace(sentence, "");
  assert.equal(rest.trim(), "", `sentences without a test:\n${rest}`);
}

const readOnly = policy("read-only");
const writable = policy("workspace-write");
const unconfined = policy("danger-full-access");
let ro, rw, full;

test("read-only, per-call (the default runtime row): every sentence runs", async () => {
  ro = await connect([readOnly.patch]);
  const d = describe([readOnly.patch]);
  // The provider's executionInstructions, sentence by sentence.
  claimed(ro, "Write the program as the body of an async function in TypeScript (erasable type syntax only: no enum, namespace values or parameter properties).");
  assert.equal(text(await call(ro, "const n: number = 2; type T = { a: string }; const t: T = { a: 'x' }; inspect(n, t.a)")), "2 x\n");
  const enumCall = await call(ro, "enum E { A }");
  assert.equal(enumCall.isError, true);
  assert.match(text(enumCall), /^error \(exception\): SyntaxError: TypeScript enum is not supported in strip-only mode/);
  claimed(ro, "Top-level await and return work; the returned value must be plain JSON.");
  const awaited = await call(ro, "return await Promise.resolve({ plain: [1, 'two', null] })");
  assert.equal(text(awaited), '{"plain":[1,"two",null]}\n');
  const notJson = await call(ro, "return () => 1");
  assert.equal(notJson.isError, true);
  assert.equal(text(notJson), "error (invalid-output): result is a function");
  claimed(ro, "Call host tools with await, for example `const r = await tools.search({ query: \"x\" })`; a failed call throws an error whose member property names the function.");
  assert.equal(
    text(await call(ro, "try { await tools.describeTool('no.such') } catch (e) { inspect(e.member, e.message) }")),
    'describeTool tools.describeTool: there is no function "no.such"; tools.searchTools("") lists them all\n',
  );
  assert.equal(
    text(await call(ro, "try { await tools.searchTools('a '.repeat(129)) } catch (e) { inspect(e.message) }")),
    "tools.searchTools takes at most 256 bytes of text\n",
  );
  assert.equal(text(await call(ro, "return (await tools.searchTools('a '.repeat(128))).length > 0")), "true\n", "control: 256 bytes");
  claimed(ro, "Node APIs are available under the session's file sandbox.");
  assert.equal(text(await call(ro, "const fs = await import('node:fs'); inspect(fs.readFileSync('given.txt', 'utf8'))")), "from the workspace\n");
  claimed(ro, "Use inspect(...values) to display output. Do not use console.");
  assert.equal(text(await call(ro, "inspect('text', 1, { b: [2] })")), "text 1 { b: [ 2 ] }\n");
  claimed(ro, "Every call runs in a fresh process: no variables survive between calls.");
  await call(ro, "globalThis.kept = 1; var alsoKept = 2");
  assert.equal(text(await call(ro, "return [typeof globalThis.kept, typeof alsoKept]")), '["undefined","undefined"]\n');
  assert.ok(ro.description.startsWith(d.executionInstructions + "\n"), "the provider's instructions come first");
  claimed(ro, d.executionInstructions);

  // What the host adds.
  claimed(ro, "Static `import` declarations and `require` are not available: load modules with `await import(\"node:fs\")`.");
  const imported = await call(ro, "import fs from 'node:fs'");
  assert.match(text(imported), /^error \(exception\): SyntaxError: 'import', and 'export' cannot be used outside of module code/);
  assert.match(text(await call(ro, "require('node:fs')")), /^error \(exception\): ReferenceError: require is not defined/);
  assert.equal(text(await call(ro, "const fs = await import(\"node:fs\"); return typeof fs.readFileSync")), '"function"\n');

  claimed(ro, `Sandbox read-only: the working directory is the workspace ${readOnly.ws}; the program can read it and the system's files and write nothing.`);
  assert.equal(text(await call(ro, "return process.cwd()")), JSON.stringify(readOnly.ws) + "\n");
  assert.equal(
    text(await call(ro, `const fs = await import("node:fs");
      const tried = [];
      for (const path of ["made.txt", "/tmp/made-by-run", "/etc/made-by-run"])
        try { fs.writeFileSync(path, "x"); tried.push("written") } catch (e) { tried.push(e.code) }
      return [fs.readFileSync("/etc/os-release", "utf8").length > 0, ...tried]`)).split("\n")[0],
    '[true,"EROFS","EROFS","EROFS"]',
  );
  claimed(ro, "No network access.");
  await noNetwork(ro);

  claimed(ro, `Deadline: timeoutMs (default ${d.timeout.defaultMs} ms, at most ${d.timeout.maxMs}), tool waits included; then the run fails with \`error (timeout)\`.`);
  assert.equal(ro.tool.inputSchema.properties.timeoutMs.maximum, d.timeout.maxMs);
  const timedOut = await call(ro, "await tools.searchTools(''); await new Promise(() => {})", { timeoutMs: 500 });
  assert.equal(timedOut.isError, true);
  assert.match(text(timedOut), /^error \(timeout\): execution timed out (before code started|during execution) \(500 ms\)/);
  const over = await call(ro, "1", { timeoutMs: d.timeout.maxMs + 1 });
  assert.equal(text(over), `timeoutMs must be an integer from 1 to ${d.timeout.maxMs}`);

  claimed(ro, "The result shows the inspect() output (text, then images), then the returned value as one line of JSON (an object also as structuredContent).");
  const shown = await call(ro, "inspect('first'); return { a: 1, nested: { b: [true, null, 2.5] } }");
  assert.equal(shown.isError, false);
  assert.deepEqual(shown.content, [{ type: "text", text: 'first\n{"a":1,"nested":{"b":[true,null,2.5]}}\n' }]);
  assert.deepEqual(shown.structuredContent, { a: 1, nested: { b: [true, null, 2.5] } });
  const scalar = await call(ro, "return 3");
  assert.deepEqual(scalar.content, [{ type: "text", text: "3\n" }]);
  assert.deepEqual(scalar.structuredContent, {}, "a value that is no object: {} (the outputSchema's)");
  assert.deepEqual((await call(ro, "inspect('only output')")).content, [{ type: "text", text: "only output\n" }]);

  claimed(ro, "A failed run is isError, its text ending `error (KIND): MESSAGE` (KIND: exception, timeout, abort, protocol, sandbox-unavailable, worker-exit, invalid-output, output-limit).");
  const schema = JSON.parse(readFileSync(join(src, "host-abi/schemas/result.json"), "utf8"));
  assert.deepEqual(
    ro.description.match(/\(KIND: ([^)]*)\)/)[1].split(", "),
    schema.properties.error.properties.kind.enum,
    "the kinds named are the result schema's",
  );
  const thrown = await call(ro, "inspect('before'); throw new Error('boom')");
  assert.equal(thrown.isError, true);
  assert.equal(thrown.structuredContent, undefined);
  assert.match(text(thrown), /^before\nerror \(exception\): Error: boom\n/);

  claimed(ro, "When the sandbox refused an operation, the last line is `the sandbox refused: ...`.");
  const refused = await call(ro, "const fs = await import('node:fs'); try { fs.writeFileSync('/etc/x', '1') } catch (e) { inspect(e.code) }");
  assert.equal(refused.isError, false);
  assert.equal(text(refused), "EROFS\nthe sandbox refused: an operation of the program that read-only mode does not allow");
  const refusedAndFailed = await call(ro, "const fs = await import('node:fs'); fs.writeFileSync('/etc/x', '1')");
  assert.match(text(refusedAndFailed), /^error \(exception\): Error: EROFS[^]*\nthe sandbox refused: an operation of the program that read-only mode does not allow$/);
  assert.doesNotMatch(text(await call(ro, "inspect('all fine')")), /refused/, "control: no note without a refusal");
});

// A TCP server on the host's loopback: a confined program's connection never reaches it.
async function noNetwork(s, reaches = false) {
  let reached = 0;
  const server = createServer((socket) => {
    reached++;
    socket.end("hello\n");
  });
  await new Promise((r) => server.listen(0, "127.0.0.1", r));
  const { port } = server.address();
  const program = `const net = await import("node:net");
    return await new Promise((done) => {
      const socket = net.connect(${port}, "127.0.0.1");
      socket.on("data", (d) => done("read " + d.toString().trim()));
      socket.on("error", (e) => done(e.code));
    })`;
  try {
    const result = await call(s, program);
    // Unconfined, the same program connects (the control).
    assert.equal(text(result) === '"read hello"\n', reaches, text(result));
    assert.equal(reached, reaches ? 1 : 0);
  } finally {
    server.close();
  }
}

test("workspace-write: the sandbox sentence runs", async () => {
  rw = await connect([writable.patch]);
  claimed(rw, `Sandbox workspace-write: the working directory is the workspace ${writable.ws}; the program can read and write it and its temp directory (os.tmpdir()), read the system's files, and write nothing else.`);
  const result = await call(rw, `const fs = await import("node:fs"), os = await import("node:os");
    const tried = [];
    for (const path of ["made.txt", os.tmpdir() + "/t", "/etc/made-by-run", "${scratch}/made-by-run"])
      try { fs.writeFileSync(path, "x"); tried.push("written") } catch (e) { tried.push(e.code) }
    return [process.cwd(), fs.readFileSync("given.txt", "utf8"), ...tried]`);
  assert.equal(
    text(result).split("\n")[0],
    JSON.stringify([writable.ws, "from the workspace", "written", "written", "EROFS", "EACCES"]),
  );
  assert.equal(readFileSync(join(writable.ws, "made.txt"), "utf8"), "x");
  claimed(rw, "No network access.");
  await noNetwork(rw);
  assert.equal(rw.tool.annotations.readOnlyHint, false);
  assert.equal(rw.tool.annotations.destructiveHint, true);
  assert.equal(rw.tool.annotations.openWorldHint, false);
});

test("danger-full-access: the sandbox sentence runs (files and network of dsh's user)", async () => {
  full = await connect([unconfined.patch]);
  claimed(full, `Sandbox danger-full-access: the program runs unconfined, with the files and network of the user dsh runs as; the working directory is the workspace ${unconfined.ws}.`);
  const outside = join(scratch, "written-unconfined");
  const result = await call(full, `const fs = await import("node:fs"); fs.writeFileSync(${JSON.stringify(outside)}, "y"); return process.cwd()`);
  assert.equal(text(result), JSON.stringify(unconfined.ws) + "\n");
  assert.equal(readFileSync(outside, "utf8"), "y");
  await noNetwork(full, true);
  assert.doesNotMatch(full.description, /No network access/);
  assert.equal(full.tool.annotations.readOnlyHint, false);
  assert.equal(full.tool.annotations.openWorldHint, true);
});

test("annotations, title and outputSchema follow the policy and the runtime row", () => {
  for (const s of [ro, rw, full]) {
    assert.equal(s.tool.title, "Run a TypeScript program");
    assert.equal(s.tool.annotations.title, "Run a TypeScript program");
    assert.equal(s.tool.annotations.idempotentHint, false);
    assert.deepEqual(s.tool.outputSchema, {
      type: "object",
      description: "The program's completion value when it is a JSON object, else {} (the text content shows any value)",
    });
  }
  assert.equal(ro.tool.annotations.readOnlyHint, true);
  assert.equal(ro.tool.annotations.destructiveHint, undefined);
  assert.equal(ro.tool.annotations.openWorldHint, false);
});

test("the runtime row's discardCompletion: true: no value, no structuredContent, no outputSchema, and the description says so", async () => {
  const { patch } = policy("read-only", "- id: ptc-runtime\n  config: {discardCompletion: true}\n");
  const s = await connect([patch]);
  claimed(s, "The result shows the inspect() output (text, then images) and no return or completion value: this session discards them (the runtime row's discardCompletion), so inspect() what you need.");
  assert.doesNotMatch(s.description, /structuredContent/);
  assert.equal(s.tool.outputSchema, undefined);
  const result = await call(s, "inspect('shown'); return { a: 1 }");
  assert.deepEqual(result, { content: [{ type: "text", text: "shown\n" }], isError: false });
  assert.deepEqual((await call(s, "return { a: 1 }")).content, [{ type: "text", text: "(no output)" }]);
  // The row reaches the runtime itself: dsh headless, with no --discard-completion, shows no value either.
  const headless = JSON.parse(
    execFileSync(dsh, ["--patch", patch, "headless", "--json", "-e", "return { a: 1 }"], { cwd: scratch, stdio: ["ignore", "pipe", "ignore"] }),
  );
  assert.equal(headless.ok, true);
  assert.equal("value" in headless, false);
  // It is a default: a run request that sets discardCompletion: false gets its value.
  const served = execFileSync(dsh, ["--patch", patch, "headless", "--serve"], {
    cwd: scratch,
    input:
      JSON.stringify({ type: "run", id: "kept", program: "return 7", discardCompletion: false }) + "\n" +
      JSON.stringify({ type: "run", id: "default", program: "return 8" }) + "\n",
    stdio: ["pipe", "pipe", "ignore"],
  }).toString().trim().split("\n").map((line) => JSON.parse(line)).filter((e) => e.type === "result");
  assert.deepEqual(
    Object.fromEntries(served.map((e) => [e.id, e.result.value])),
    { kept: 7, default: undefined },
  );
});

test("a retaining profile: one environment per session, and the last expression's value is shown", async () => {
  const persistent = join(src, "examples/profiles/persistent.yaml");
  const s = await connect([readOnly.patch, persistent]);
  claimed(s, "All run_code calls of this MCP session share one environment: the top-level names of one call are there in the next, until the session ends.");
  claimed(s, "then the value of the last expression statement as one line of JSON (an object also as structuredContent).");
  assert.equal(text(await call(s, "var x = 41")), "(no output)");
  const shown = await call(s, "x + 1");
  assert.deepEqual(shown.content, [{ type: "text", text: "42\n" }]);
  const object = await call(s, "({ x })");
  assert.deepEqual(object.structuredContent, { x: 41 });
  const other = await connect([readOnly.patch, persistent]);
  assert.equal(text(await call(other, "typeof x")), '"undefined"\n', "another session has its own environment");
  assert.doesNotMatch(s.description, /Static `import`/, "the scoped REPL's own instructions say it");

  // The scoped REPL's executionInstructions, sentence by sentence.
  claimed(s, "Each call is a strict TypeScript script (erasable types) in a retained context.");
  assert.equal(text(await call(s, "const typed: number = x; typed")), "41\n");
  assert.match(text(await call(s, "undeclaredName = 1")), /^error \(exception\): ReferenceError: undeclaredName is not defined/);
  claimed(s, "It starts with copies of the top-level names left by earlier calls and may declare any of them again; `var count = count + 1` adds to the earlier value.");
  await call(s, "var count = 1");
  assert.equal(text(await call(s, "var count = count + 1; count")), "2\n");
  assert.equal(text(await call(s, "let count = 'again'; count")), '"again"\n');
  claimed(s, "The last top-level expression is the result; a Promise result is not awaited, so await it.");
  assert.equal(text(await call(s, "1; 2; x + 2")), "43\n");
  assert.equal(text(await call(s, "Promise.resolve(5)")), "error (invalid-output): result is a Promise instance (only plain objects and arrays are JSON)");
  assert.equal(text(await call(s, "await Promise.resolve(5)")), "5\n");
  claimed(s, "Top-level return, eval, new Function, require and static imports are not available; load modules with `await import(...)`.");
  assert.match(text(await call(s, "return 1")), /^error \(exception\): SyntaxError/);
  assert.match(text(await call(s, "eval('1')")), /^error \(exception\): EvalError/);
  assert.match(text(await call(s, "new Function('return 1')")), /^error \(exception\): EvalError/);
  assert.match(text(await call(s, "require('node:fs')")), /^error \(exception\): ReferenceError: require is not defined/);
  assert.match(text(await call(s, "import fs from 'node:fs'")), /^error \(exception\): SyntaxError/);
  assert.equal(text(await call(s, "const fs = await import('node:fs'); fs.readFileSync('given.txt', 'utf8')")), '"from the workspace"\n');
  claimed(s, "Call host tools with await, for example `const r = await tools.search({ query: \"x\" })`; a failed call throws an error whose member property names the function.");
  assert.equal(text(await call(s, "let member; try { await tools.describeTool('no.such') } catch (e) { member = e.member } member")), '"describeTool"\n');
  claimed(s, "Node APIs are available under the session's file sandbox.");
  assert.equal(text(await call(s, "(await import('node:fs')).readFileSync('given.txt', 'utf8')")), '"from the workspace"\n');
  claimed(s, "Always await tool calls: callbacks of a finished call cannot use tools later.");
  // A callback of a finished call calls a tool: the call never settles (it is not sent), while
  // two awaited round trips of a later call are answered.
  await call(s, `setTimeout(() => {
      globalThis.late = "called";
      tools.searchTools("").then(() => (globalThis.late = "answered"), (e) => (globalThis.late = e.message));
    }, 0); 1`);
  const late = await call(s, `while (globalThis.late === undefined) await new Promise((r) => setTimeout(r, 10));
    await tools.searchTools(""); await tools.searchTools(""); globalThis.late`);
  assert.equal(text(late), '"called"\n');
  assert.equal(text(await call(s, "(await tools.searchTools('registerImage')).length")), "1\n", "control: an awaited call works");
  claimed(s, "Use inspect(...values) to display output. Do not use console.");
  assert.equal(text(await call(s, "inspect('shown', { n: 1 })")), "shown { n: 1 }\n");
  claimed(s, "Variables are memory only: they are lost when the environment is released, the sandbox mode changes or the process fails.");
  await call(s, "var survivor = 1");
  assert.match(text(await call(s, "process.exit(3)")), /^error \(worker-exit\): /);
  assert.equal(text(await call(s, "typeof survivor")), '"undefined"\n', "the process failed: its variables are gone");
  // Released: a session's environment goes with the session (another session starts empty, above).
  persistentSession = s;
});
let persistentSession;

test("only real tools by default: tools offers registerImage and discovery; the demonstration functions on request", async () => {
  const listed = (s) => call(s, "return Object.keys(tools).sort()");
  assert.equal(text(await listed(ro)), '["describeTool","registerImage","searchTools"]\n');
  assert.match(text(await call(ro, "await tools.add({ a: 1, b: 2 })")), /^error \(exception\): TypeError: tools\.add is not a function/);
  const demoPatch = join(src, "examples/profiles/mcp-demo-tools.yaml");
  const demo = await connect([readOnly.patch, demoPatch]);
  assert.equal(text(await listed(demo)), '["add","describeTool","echo","fail","registerImage","searchTools","sleep"]\n');
  assert.equal(text(await call(demo, "return await tools.add({ a: 1, b: 2 })")), "3\n");
  // The deadline sentence's "tool waits included": a tool that would answer after 10 minutes;
  // the deadline (20 s, far beyond any start) ends the run during that wait.
  const waited = await call(demo, "inspect('waiting'); await tools.sleep({ ms: 600000 })", { timeoutMs: 20000 });
  assert.match(text(waited), /^waiting\nerror \(timeout\): execution timed out during execution \(20000 ms\)/);
  assert.match(demo.description, /add\(input: \{ a: number; b: number \}\): Promise<number>;/);
  assert.doesNotMatch(ro.description, /add\(input/);
});

test("native rows are offered: declared (or described on request) and called", async () => {
  const s = await connect([readOnly.patch, join(src, "examples/profiles/native-libm.yaml")]);
  const declaration =
    "/** Native functions (dsh-native-bindings row 'mathlib'). A rejected call throws ToolCallError (its member property names the function). */\n" +
    "declare const math: {\n" +
    "  /** C function lround. */\n" +
    "  lround(input: { x: number; }): Promise<number | string>;\n" +
    "};\n";
  assert.match(s.description, /  hypot\(input: \{ x: number; y: number; \}\): Promise<number>;\n/);
  const result = await call(s, `inspect(await tools.describeTool("math.lround"));
    return [await math.hypot({ x: 3, y: 4 }), await math.lround({ x: -2.5 }), (await tools.searchTools("math")).map((f) => f.name)]`);
  assert.equal(text(result), declaration + "\n" + '[5,-3,["math.hypot","math.pow","math.lround"]]\n');
});

test("background runs: the sentence runs (yieldAfterMs, wait_run, terminate_run); a retaining profile rejects while one goes on", async () => {
  const gatePath = join(readOnly.ws, "gate-background");
  const program = `const fs = await import("node:fs"); inspect("first");
    while (!fs.existsSync(${JSON.stringify(gatePath)})) await new Promise((r) => setTimeout(r, 20));
    inspect("second"); return { n: 2 }`;
  for (const s of [ro, rw, full])
    claimed(s, "Long runs: with yieldAfterMs, a run not ended by then returns its output so far and `{running: true, runId}` and goes on; wait_run returns its new output and, once ended, its result; terminate_run stops it (`error (abort)`).");
  const first = await call(ro, program, { yieldAfterMs: 0 });
  const runId = first.structuredContent.runId;
  assert.equal(first.structuredContent.running, true);
  const wait = (args) => ro.client.callTool({ name: "wait_run", arguments: { runId, ...args } });
  let seen = first.content[0].text === "(no new output)" ? "" : first.content[0].text;
  while (!seen.includes("first")) {
    const r = await wait({ yieldAfterMs: 50 });
    if (r.content[0].text !== "(no new output)") seen += r.content[0].text;
  }
  writeFileSync(gatePath, "");
  let last;
  do last = await wait({});
  while (last.structuredContent?.runId !== undefined);
  assert.equal(seen + text(last), 'first\nsecond\n{"n":2}\n');
  assert.deepEqual(last.structuredContent, { n: 2 });
  // terminate_run: error (abort).
  const forever = await call(ro, "setInterval(() => {}, 1000); await new Promise(() => {})", { yieldAfterMs: 0 });
  const stopped = await ro.client.callTool({ name: "terminate_run", arguments: { runId: forever.structuredContent.runId } });
  assert.match(text(stopped), /error \(abort\): /);
  // A retaining profile: another run_code is rejected while the background run goes on.
  const s = persistentSession;
  claimed(s, "While a background run is going, another run_code call is rejected (owner-busy: the environment runs one program at a time): wait for it or terminate it first.");
  const held = await call(s, "setInterval(() => {}, 1000); await new Promise(() => {})", { yieldAfterMs: 0 });
  assert.match(text(await call(s, "inspect(1)")), /^the run was rejected \(owner-busy\): /);
  await s.client.callTool({ name: "terminate_run", arguments: { runId: held.structuredContent.runId } });
  assert.equal(text(await call(s, "inspect(1)")), "1\n"); // control
});

test("every sentence of each description above has its test", () => {
  {
    const s = persistentSession;
    const cut = s.description.indexOf("\nThe program can call these functions");
    // Shared with the read-only per-call session: the policy, the deadline and the failures.
    const shared = ro.claims.filter((c) => !/^(Write the program|Top-level await|Every call runs|Static `import`|The result shows)/.test(c) && c !== ro.description.split("\n")[0]);
    everySentenceTested({ description: s.description.slice(0, cut).replace("The result shows the inspect() output (text, then images), ", ""), claims: [...s.claims, ...shared] });
  }
  for (const s of [ro, rw, full]) {
    // The list of functions is the tools' part (below the policy): its own tests cover it.
    const cut = s.description.indexOf("\nThe program can call these functions");
    assert.ok(cut > 0, s.description);
    const policyPart = { description: s.description.slice(0, cut), claims: s.claims };
    // Sentences of the default description that rw and full share with ro.
    if (s !== ro) policyPart.claims = [...s.claims, ...ro.claims.filter((c) => !c.startsWith("Sandbox read-only"))];
    everySentenceTested(policyPart);
  }
});
