// `dsh mcp` against hostile and stalling downstream servers (hostile-server.mjs), driven by the
// official MCP SDK client: JSON null where a string belongs, tool names with NUL, a synchronous
// server with large answers, a server that stops reading, and a large answer's host memory
// (examples/host/README.md, "Downstream MCP servers" and "Peers that stop reading").
// Usage: node --test tests/mcp/peers.test.mjs (DSH=build/examples/host/dsh).
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { test } from "node:test";
import { fileURLToPath } from "node:url";
import sdk from "./sdk.cjs";

const { Client, StdioClientTransport } = sdk;
const here = dirname(fileURLToPath(import.meta.url));
const dsh = resolve(process.env.DSH ?? join(here, "../../build/examples/host/dsh"));
// A failure on a build without the fix is a hang: this bounds it (not a timing assertion).
const HANG = { timeout: 240000 };

// A patch mounting hostile-server.mjs as the server "hostile" in this mode, and its marker dir.
function hostilePatch(mode, env = []) {
  const dir = mkdtempSync(join(tmpdir(), `dsh-mcp-${mode}-`));
  const patch = join(dir, "bindings.yaml");
  writeFileSync(
    patch,
    `- insert:
  - id: mcp-bindings
    name: dsh-mcp-bindings
    config:
      servers:
        - name: hostile
          command: ${JSON.stringify(process.execPath)}
          args: [${JSON.stringify(join(here, "hostile-server.mjs"))}]
          env: ${JSON.stringify(["MARKER_DIR=" + dir, "HOSTILE_MODE=" + mode, ...env])}
`,
  );
  return { dir, patch };
}

async function connect(mode, env) {
  const { dir, patch } = hostilePatch(mode, env);
  const transport = new StdioClientTransport({ command: dsh, args: ["--patch", patch, "mcp"], cwd: dir, stderr: "pipe" });
  let stderr = "";
  transport.stderr?.on("data", (d) => (stderr += d));
  const client = new Client({ name: "dsh-mcp-peers-test", version: "1.0.0" });
  await client.connect(transport);
  return { client, transport, dir, stderr: () => stderr };
}

const run = (client, program) =>
  client.callTool({ name: "run_code", arguments: { program, description: "a test program" } }, undefined, {
    timeout: 600000,
  });
const text = (result) => result.content.filter((c) => c.type === "text").map((c) => c.text).join("");
const description = async (client) => (await client.listTools()).tools[0].description;

// Closes dsh's stdin and resolves with its exit code and signal.
function finish(s) {
  const proc = s.transport._process;
  const exited = new Promise((r) => proc.once("exit", (code, signal) => r({ code, signal })));
  proc.stdin.end();
  return exited;
}

test("null where strings belong: the call rejects or is refused with a message, dsh stays up", HANG, async () => {
  const s = await connect("null-fields");
  // A tool whose description is null is declared without one.
  assert.match(await description(s.client), /\n {2}described\(input\?: Record<string, unknown>\): Promise<unknown>;\n/);
  const result = await run(
    s.client,
    `try { await hostile.types({}) } catch (e) { inspect(e.message) }
     try { await hostile.error({}) } catch (e) { inspect(e.message) }
     inspect(await hostile.method({}))
     inspect(JSON.stringify(await hostile.texts({})))`,
  );
  assert.equal(
    text(result),
    "the MCP server hostile answered with a content item that has no type (a string)\n" +
      "the MCP server answered without a result\n" +
      // dsh's answer to the server's request whose method is null
      "dsh does not offer this method\n" +
      // control: well-typed text items, joined by newlines
      '"a\\"é\\nb\\n\\n"\n',
  );
  assert.equal(text(await run(s.client, "inspect('still up')")), "still up\n");
  assert.deepEqual(await finish(s), { code: 0, signal: null });
});

test("a server's names, descriptions and schemas cannot break the declarations the model reads", HANG, async () => {
  const s = await connect("declarations");
  const declared = await description(s.client);
  // The description's comment ends only at its end, the text stays readable.
  assert.match(declared, /\/\*\* ends \*\\\/ here; x \*\\\/ y \*\/\n/);
  assert.equal(declared.split("*/").length, declared.split("/**").length, "every doc comment closes once");
  // "object" ten times at 9 levels is one object type per level, not 10^9 of them.
  const nested = declared.slice(declared.indexOf("nested("));
  assert.equal(nested.match(/a\?: /g)?.length, 9, nested.slice(0, 2000));
  // A name of many underscores becomes a name the runtime accepts.
  assert.match(declared, /\n {2}__many_\(input\?: Record<string, unknown>\): Promise<unknown>;\n/);
  assert.equal(text(await run(s.client, "inspect((await hostile.__many_({})))")), "many\n");
  assert.deepEqual(await finish(s), { code: 0, signal: null });
});

test("protocolVersion null in initialize: dsh mcp refuses the server with a message", HANG, () => {
  const { dir, patch } = hostilePatch("null-version");
  const r = spawnSync(dsh, ["--patch", patch, "mcp"], { cwd: dir, input: "", encoding: "utf8" });
  assert.deepEqual({ status: r.status, signal: r.signal }, { status: 2, signal: null });
  assert.equal(r.stderr, "dsh: MCP server hostile answered initialize without a protocol revision (a string)\n");
});

test("protocolVersion null in a restart's initialize: failed starts, then given up", HANG, async () => {
  const s = await connect("null-restart");
  const result = await run(
    s.client,
    `try { await hostile.crash({}) } catch (e) { inspect(e.message) }
     try { await hostile.types({}) } catch (e) { inspect(e.message) }`,
  );
  assert.equal(
    text(result),
    "the MCP server hostile exited\nthe MCP server hostile exited and dsh gave up restarting it\n",
  );
  assert.deepEqual(await finish(s), { code: 0, signal: null });
  const refusals = s.stderr().match(/^dsh: MCP server hostile answered initialize without a protocol revision \(a string\)$/gm);
  assert.equal(refusals?.length, 8, s.stderr());
});

test("tool names that differ only after a NUL are left out, not truncated into one name", HANG, async () => {
  const s = await connect("nul-names");
  const declared = await description(s.client);
  assert.match(declared, /\n {2}get\(input\?: Record<string, unknown>\): Promise<unknown>;\n/);
  assert.doesNotMatch(declared, /get_2|get_3/);
  assert.equal(text(await run(s.client, "inspect(await hostile.get({}))")), '"get"\n');
  assert.deepEqual(await finish(s), { code: 0, signal: null });
  const left = s.stderr().match(/^dsh: MCP server hostile listed a tool whose name contains a NUL byte; programs cannot call it$/gm);
  assert.equal(left?.length, 2, s.stderr());
});

test("a synchronous server answering 1 MiB per call, three calls at once: all complete", HANG, async () => {
  const s = await connect("echo");
  const result = await run(
    s.client,
    `const big = "x".repeat(1 << 20);
     const answers = await Promise.all([0, 1, 2].map((i) => hostile.echo({ text: i + big })));
     inspect(answers.map((a) => a.length + ":" + a[0]).join(" "))`,
  );
  assert.equal(text(result), "1048577:0 1048577:1 1048577:2\n");
  assert.deepEqual(await finish(s), { code: 0, signal: null });
});

test("a server that stops reading: calls beyond 8 MiB unread reject; other runs are served", HANG, async () => {
  const s = await connect("deaf");
  const result = await run(
    s.client,
    `const big = "x".repeat(1 << 20);
     const calls = Array.from({ length: 12 }, () => hostile.sink({ data: big }));
     inspect(await Promise.race(calls.map((c) => c.then(() => "answered", (e) => e.message))))`,
  );
  assert.equal(text(result), "the MCP server hostile is not reading its input: 8 MiB already wait for it\n");
  // Control and the other runs: the session goes on while the server still does not read.
  assert.equal(text(await run(s.client, "inspect('other run')")), "other run\n");
  const other = await connect("echo");
  assert.equal(text(await run(other.client, "inspect(await hostile.echo({ text: 'other session' }))")), "other session\n");
  assert.deepEqual(await finish(other), { code: 0, signal: null });
  assert.deepEqual(await finish(s), { code: 0, signal: null });
});

// VmHWM (peak resident set) of a process, in bytes.
const peak = (pid) => Number(/VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, "utf8"))[1]) * 1024;

test("a ~20 MB downstream answer: dsh's peak RSS grows by at most 2N + 16 MiB", HANG, async (t) => {
  // AddressSanitizer's allocator keeps freed memory in quarantine and adds shadow memory, so
  // peak RSS there says nothing about the host's budget: measured in the plain build only.
  if (process.env.ASAN_OPTIONS) return t.skip("AddressSanitizer build: its quarantine and shadow memory make peak RSS no measure of the budget");
  const N = 20 * 1000 * 1000;
  const s = await connect("huge", ["HUGE_BYTES=" + N]);
  const pid = s.transport._process.pid;
  // Control: a run with a small downstream answer first, so the baseline includes a run.
  assert.equal(text(await run(s.client, "inspect('warm')")), "warm\n");
  const before = peak(pid);
  // An error answer: dsh reads the whole 20 MB line and rejects the call with its text.
  const failed = await run(s.client, "try { await hostile.huge_error({}) } catch (e) { inspect(e.message) }");
  assert.equal(text(failed), "too many\n");
  const afterError = peak(pid);
  console.log(`dsh VmHWM before ${before}, after the error answer ${afterError} (growth ${afterError - before}, bound ${2 * N + 16 * 1048576})`);
  assert.ok(afterError - before <= 2 * N + 16 * 1048576, `peak RSS grew by ${afterError - before} bytes`);
  // A 20 MB text as the call's value (figure only: the provider's reply path is measured too).
  const result = await run(s.client, "inspect((await hostile.huge_text({})).length)");
  assert.equal(text(result), `${N}\n`);
  console.log(`dsh VmHWM after the text answer ${peak(pid)} (growth ${peak(pid) - before})`);
  assert.deepEqual(await finish(s), { code: 0, signal: null });
});
