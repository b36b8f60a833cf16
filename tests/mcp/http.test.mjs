// `dsh mcp --listen` (examples/host/README.md, "dsh mcp --listen") driven by clients nobody here
// wrote: the official SDK's StreamableHTTPClientTransport and the MCP Inspector CLI with
// --transport http; the listener's refusals with plain fetch; two sessions' isolation; the
// SIGTERM drain. Ordering is shown with file barriers (a program waits for a file the test
// creates once it saw what must come first), never with wall-clock bounds.
// Usage: node --test tests/mcp/http.test.mjs (DSH=the binary).
import assert from "node:assert/strict";
import { execFile, spawn } from "node:child_process";
import { existsSync, mkdtempSync, readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { request } from "node:http";
import { connect as tcpConnect } from "node:net";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { after, test } from "node:test";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { createRequire } from "node:module";
import { pngBytes } from "../conformance/image-fixtures.js";
import { writeBindingsPatch } from "./bindings-patch.mjs";

const here = dirname(fileURLToPath(import.meta.url));
const src = resolve(here, "../..");
const dsh = resolve(process.env.DSH ?? join(src, "build/examples/host/dsh"));
const from = createRequire(join(here, "../clients/package.json"));
const { Client } = from("@modelcontextprotocol/sdk/client/index.js");
const { StreamableHTTPClientTransport } = from("@modelcontextprotocol/sdk/client/streamableHttp.js");
const inspector = join(dirname(from.resolve("@modelcontextprotocol/inspector/package.json")), "clients/launcher/build/index.js");

const cwd = mkdtempSync(join(tmpdir(), "dsh-mcp-http-"));
const gates = mkdtempSync(join(cwd, "gates-"));
const TOKEN = "test-token-0123456789abcdef";
const tokenFile = join(cwd, "token");
writeFileSync(tokenFile, TOKEN + "\n");

const bindingsPatch = writeBindingsPatch(join(cwd, "bindings.yaml"), ["MARKER_DIR=" + mkdtempSync(join(tmpdir(), "dsh-mcp-http-markers-"))]);

const servers = [];
// Starts `dsh ... mcp --listen ADDR ...`; resolves once it printed where it listens.
function serve(args, { listen = "127.0.0.1:0", patches = [] } = {}) {
  const child = spawn(dsh, [...patches.flatMap((p) => ["--patch", p]), "mcp", "--listen", listen, ...args], {
    cwd,
    stdio: ["ignore", "pipe", "pipe"],
  });
  let stderr = "";
  const exited = new Promise((r) => child.on("exit", (code, signal) => r({ code, signal })));
  const s = { child, exited, stderr: () => stderr };
  servers.push(s);
  return new Promise((resolveUrl, reject) => {
    child.stderr.on("data", (d) => {
      stderr += d;
      const m = /listening on (http:\/\/\S+|unix:\S+)/.exec(stderr);
      if (m && !s.url) resolveUrl(Object.assign(s, { url: m[1] }));
    });
    exited.then(() => (s.url ? null : reject(new Error("dsh exited: " + stderr))));
  });
}
after(async () => {
  for (const s of servers) if (s.child.exitCode === null && s.child.signalCode === null) s.child.kill("SIGKILL");
});

const auth = { Authorization: `Bearer ${TOKEN}` };
async function connect(url, headers = auth) {
  const client = new Client({ name: "dsh-mcp-http-test", version: "1.0.0" });
  const transport = new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers } });
  await client.connect(transport);
  return { client, transport };
}
const text = (result) => result.content.filter((c) => c.type === "text").map((c) => c.text).join("");
const runCode = (client, program, extra = {}, options = {}) =>
  client.callTool({ name: "run_code", arguments: { program, description: "an HTTP test", ...extra } }, undefined, options);

let gateCount = 0;
function gate() {
  const path = join(gates, `gate-${++gateCount}`);
  return { path, wait: `{ const fs = await import("node:fs"); while (!fs.existsSync(${JSON.stringify(path)})) await new Promise((r) => setTimeout(r, 20)); }`, open: () => writeFileSync(path, "") };
}
// Processes whose command line holds marker (a program sets process.title to it).
function processesWith(marker) {
  const found = [];
  for (const pid of readdirSync("/proc").filter((p) => /^\d+$/.test(p))) {
    try {
      if (/^\d+ \(.*\) Z /.test(readFileSync(`/proc/${pid}/stat`, "utf8"))) continue;
      if (readFileSync(`/proc/${pid}/cmdline`, "utf8").includes(marker)) found.push(pid);
    } catch {}
  }
  return found;
}
async function until(predicate) {
  while (!(await predicate())) await new Promise((r) => setTimeout(r, 20));
}
const post = (url, body, headers = {}) =>
  fetch(url, {
    method: "POST",
    headers: { "Content-Type": "application/json", Accept: "application/json, text/event-stream", ...auth, ...headers },
    body: typeof body === "string" ? body : JSON.stringify(body),
  });
const initialize = { jsonrpc: "2.0", id: 1, method: "initialize", params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "fetch", version: "1" } } };

const main = await serve(["--token-file", tokenFile], { patches: [bindingsPatch] });

test("the SDK's Streamable HTTP client: tools, a run whose progress arrives before its result, images, a downstream tool", async () => {
  const { client } = await connect(main.url);
  const tools = (await client.listTools()).tools;
  assert.deepEqual(tools.map((t) => t.name), ["run_code", "wait_run", "terminate_run", "list_runs"]);
  assert.match(tools[0].description, /declare const issue_tracker: \{/);
  // The run prints, then waits for a gate the test opens only when that progress has arrived:
  // without progress before the result, the call never ends.
  const g = gate();
  const progress = [];
  const result = await runCode(client, `inspect("first line"); ${g.wait} inspect("second line"); return 6 * 7`, {}, {
    onprogress: (p) => {
      progress.push(p.message);
      if (p.message === "first line\n") g.open();
    },
  });
  assert.equal(result.isError, false, text(result));
  assert.deepEqual(progress, ["first line\n", "second line\n"]);
  assert.equal(text(result), "first line\nsecond line\n42\n");

  const png = pngBytes(4, 3);
  writeFileSync(join(cwd, "chart.png"), png);
  const image = await runCode(client, "inspect(Image.get(await tools.registerImage({ path: 'chart.png', attachmentId: 'c1' })))");
  assert.deepEqual(image.content.filter((c) => c.type === "image"), [{ type: "image", data: png.toString("base64"), mimeType: "image/png" }]);

  const downstream = await runCode(client, `const r = await issue_tracker.search_issues({ query: "ptc", limit: 5 }); return r.hits.map((h) => h.id)`);
  assert.equal(text(downstream), "[1,2]\n");
  await client.close();
});

test("cancelling a call over HTTP aborts its run (its process ends)", async () => {
  const { client } = await connect(main.url);
  const marker = `dsh-http-cancel-${process.pid}`;
  const controller = new AbortController();
  const call = runCode(client, `process.title = ${JSON.stringify(marker)}; inspect("up"); await new Promise(() => {})`, {}, {
    signal: controller.signal,
    onprogress: (p) => p.message === "up\n" && controller.abort("the test cancels"),
  });
  await assert.rejects(call, /the test cancels/);
  await until(() => processesWith(marker).length === 0);
  // The session goes on.
  assert.equal(text(await runCode(client, "return 1")), "1\n");
  await client.close();
});

test("the MCP Inspector CLI with --transport http lists the tools and calls run_code", async () => {
  const cli = (args) =>
    promisify(execFile)(process.execPath, [inspector, "--cli", main.url, "--transport", "http", "--header", `Authorization: Bearer ${TOKEN}`, ...args], { cwd, maxBuffer: 16 << 20 });
  const list = JSON.parse((await cli(["--method", "tools/list"])).stdout);
  assert.deepEqual(list.tools.map((t) => t.name), ["run_code", "wait_run", "terminate_run", "list_runs"]);
  const called = JSON.parse((await cli(["--method", "tools/call", "--tool-name", "run_code", "--tool-arg", "program=return 40 + 2", "description=inspector"])).stdout);
  assert.equal(called.isError, false);
  assert.equal(called.content[0].text, "42\n");
});

test("refusals: no token, a wrong token, a bad Origin, no or an unknown or a deleted session, a bad protocol version, other paths", async () => {
  const base = main.url;
  let r = await fetch(base, { method: "POST", headers: { "Content-Type": "application/json", Accept: "application/json, text/event-stream" }, body: JSON.stringify(initialize) });
  assert.equal(r.status, 401);
  assert.equal(r.headers.get("www-authenticate"), 'Bearer realm="dsh"');
  assert.equal((await r.json()).error.message, "Unauthorized: send Authorization: Bearer TOKEN");
  r = await post(base, initialize, { Authorization: "Bearer " + TOKEN.slice(0, -1) + "x" });
  assert.equal(r.status, 401);
  assert.equal((await r.json()).error.message, "Unauthorized: the token is wrong");
  r = await post(base, initialize, { Authorization: "Bearer " + TOKEN + "x" });
  assert.equal(r.status, 401);
  r = await post(base, initialize, { Origin: "http://evil.example" });
  assert.equal(r.status, 403);
  assert.equal((await r.json()).error.message, 'Forbidden: Origin "http://evil.example" is not allowed (dsh mcp --allow-origin)');
  // Control: the same request with the token and no Origin starts a session.
  r = await post(base, initialize);
  assert.equal(r.status, 200);
  const sid = r.headers.get("mcp-session-id");
  assert.match(sid, /^[0-9a-f]{32}$/);
  assert.equal((await r.json()).result.serverInfo.name, "dsh");
  const list = { jsonrpc: "2.0", id: 2, method: "tools/list" };
  r = await post(base, list);
  assert.equal(r.status, 400);
  assert.equal((await r.json()).error.message, "Bad Request: Mcp-Session-Id header is required");
  r = await post(base, list, { "Mcp-Session-Id": "0".repeat(32) });
  assert.equal(r.status, 404);
  assert.equal((await r.json()).error.message, "Session not found");
  r = await post(base, list, { "Mcp-Session-Id": sid, "MCP-Protocol-Version": "1999-01-01" });
  assert.equal(r.status, 400);
  assert.equal((await r.json()).error.message, 'Bad Request: unsupported MCP-Protocol-Version "1999-01-01"');
  r = await post(base, list, { "Mcp-Session-Id": sid, "MCP-Protocol-Version": "2025-03-26" }); // an older revision: accepted
  assert.equal(r.status, 200);
  assert.equal((await r.json()).result.tools[0].name, "run_code");
  r = await fetch(base, { method: "DELETE", headers: { ...auth, "Mcp-Session-Id": sid } });
  assert.equal(r.status, 200);
  r = await post(base, list, { "Mcp-Session-Id": sid });
  assert.equal(r.status, 404);
  r = await fetch(base, { method: "PUT", headers: auth });
  assert.equal(r.status, 405);
  r = await fetch(new URL("/other", base), { headers: auth });
  assert.equal(r.status, 404);
  assert.equal((await r.json()).error.message, "Not Found: the MCP endpoint is /mcp");
  r = await post(base, "{not json", {});
  assert.equal(r.status, 400);
  r = await post(base, initialize, { Accept: "application/json" });
  assert.equal(r.status, 406);
});

test("an oversize body gets 413 (also chunked), headers over 64 KiB 431; an allowed Origin is admitted; a batch gets an array", async () => {
  const s = await serve(["--token-file", tokenFile, "--max-body-bytes", "1000", "--allow-origin", "http://ui.example"]);
  let r = await post(s.url, { ...initialize, params: { ...initialize.params, pad: "x".repeat(2000) } });
  assert.equal(r.status, 413);
  assert.equal((await r.json()).error.message, "Content Too Large: a body may have at most 1000 bytes");
  r = await post(s.url, initialize, { Origin: "http://ui.example" });
  assert.equal(r.status, 200);
  const sid = r.headers.get("mcp-session-id");
  // A chunked body (no Content-Length) over the limit: 413 too.
  const chunked = await new Promise((resolveAnswer, reject) => {
    const u = new URL(s.url);
    const req = request({ host: u.hostname, port: u.port, path: u.pathname, method: "POST", headers: { ...auth, "Content-Type": "application/json", Accept: "application/json, text/event-stream", "Mcp-Session-Id": sid, "Transfer-Encoding": "chunked" } }, (res) => {
      let data = "";
      res.on("data", (d) => (data += d));
      res.on("end", () => resolveAnswer({ status: res.statusCode, data }));
    });
    req.on("error", reject);
    for (let i = 0; i < 4; i++) req.write("x".repeat(400));
    req.end();
  });
  assert.equal(chunked.status, 413);
  assert.equal(JSON.parse(chunked.data).error.message, "Content Too Large: a body may have at most 1000 bytes");
  // Headers over 64 KiB: 431 (libmicrohttpd's own answer).
  r = await fetch(new URL("/healthz", s.url), { headers: { "X-Big": "a".repeat(70000) } });
  assert.equal(r.status, 431);
  // A batch (revision 2025-03-26): one JSON array with both answers.
  r = await post(s.url, [{ jsonrpc: "2.0", id: 7, method: "ping" }, { jsonrpc: "2.0", id: 8, method: "tools/list" }], { "Mcp-Session-Id": sid });
  assert.equal(r.status, 200);
  const batch = await r.json();
  assert.deepEqual(batch.map((m) => m.id), [7, 8]);
  assert.deepEqual(batch[0].result, {});
  s.child.kill("SIGTERM");
  assert.deepEqual(await s.exited, { code: 0, signal: null });
});

test("limits: sessions and connections at once get 503 with what the limit is", async () => {
  const s = await serve(["--token-file", tokenFile, "--max-sessions", "1"]);
  let r = await post(s.url, initialize);
  assert.equal(r.status, 200);
  const sid = r.headers.get("mcp-session-id");
  r = await post(s.url, initialize);
  assert.equal(r.status, 503);
  assert.equal((await r.json()).error.message, "Service Unavailable: dsh serves at most 1 sessions at once");
  // One GET stream per session.
  const get = await fetch(s.url, { headers: { ...auth, Accept: "text/event-stream", "Mcp-Session-Id": sid } });
  assert.equal(get.status, 200);
  r = await fetch(s.url, { headers: { ...auth, Accept: "text/event-stream", "Mcp-Session-Id": sid } });
  assert.equal(r.status, 409);
  assert.equal((await r.json()).error.message, "Conflict: this session's GET stream is open already");
  await get.body.cancel();
  s.child.kill("SIGTERM");
  assert.deepEqual(await s.exited, { code: 0, signal: null });

  // Connections: two idle ones that dsh accepted fill --max-connections 2; a request on a third
  // gets 503 (barrier: asked until dsh has accepted both); control: once they close, 200 again.
  const c = await serve(["--token-file", tokenFile, "--max-connections", "2"]);
  const u = new URL(c.url);
  const idle = await Promise.all([0, 1].map(() => new Promise((res, rej) => {
    const sock = tcpConnect(Number(u.port), u.hostname, () => res(sock));
    sock.on("error", rej);
  })));
  const health = () => new Promise((res, rej) => {
    const req = request({ host: u.hostname, port: u.port, path: "/healthz", agent: false }, (resp) => {
      let data = "";
      resp.on("data", (d) => (data += d));
      resp.on("end", () => res({ status: resp.statusCode, data }));
    });
    req.on("error", rej);
    req.end();
  });
  let refused;
  await until(async () => (refused = await health()).status === 503);
  assert.equal(JSON.parse(refused.data).error.message, "Service Unavailable: dsh serves at most 2 connections at once");
  for (const sock of idle) sock.destroy();
  await until(async () => (await health()).status === 200);
  c.child.kill("SIGTERM");
  assert.deepEqual(await c.exited, { code: 0, signal: null });
});

test("startup refusals: a remote address without --allow-remote, TCP without a token, a short token", async () => {
  const run = (args) => promisify(execFile)(dsh, ["mcp", ...args], { cwd }).then(() => assert.fail("dsh started"), (e) => e);
  let e = await run(["--listen", "0.0.0.0:0", "--token-file", tokenFile]);
  assert.equal(e.code, 2);
  assert.equal(e.stderr, "dsh mcp: --listen 0.0.0.0:0 is not a loopback address: add --allow-remote to serve other machines\n");
  e = await run(["--listen", "127.0.0.1:0"]);
  assert.equal(e.code, 2);
  assert.equal(e.stderr, "dsh mcp: --listen 127.0.0.1:0 needs --token-file FILE (a bearer token): only a Unix socket (mode 0600) may go without one\n");
  const short = join(cwd, "short-token");
  writeFileSync(short, "abc\n");
  e = await run(["--listen", "127.0.0.1:0", "--token-file", short]);
  assert.equal(e.stderr, `dsh mcp: the token in ${short} has 3 characters; at least 16 are needed\n`);
  e = await run(["--token-file", tokenFile]);
  assert.equal(e.stderr, "dsh mcp: --token-file needs --listen ADDR (see 'dsh mcp --help')\n");
  e = await run(["--listen", "nowhere"]);
  assert.equal(e.stderr, 'dsh mcp: --listen: "nowhere" is no address: use 127.0.0.1:PORT, [::1]:PORT or unix:PATH\n');
});

test("/healthz and /readyz answer without a token", async () => {
  let r = await fetch(new URL("/healthz", main.url));
  assert.equal(r.status, 200);
  assert.deepEqual(await r.json(), { status: "alive" });
  await until(async () => (await fetch(new URL("/readyz", main.url))).status === 200);
  r = await fetch(new URL("/readyz", main.url));
  assert.deepEqual(await r.json(), { status: "ready" });
});

test("two sessions at once are isolated: variables, temp files, runs and progress", async () => {
  const s = await serve(["--token-file", tokenFile, "--sandbox", "workspace-write"], { patches: [join(src, "examples/profiles/persistent.yaml")] });
  const a = await connect(s.url);
  const b = await connect(s.url);
  assert.equal(text(await runCode(a.client, 'var secret = "A"; secret')), '"A"\n');
  assert.equal(text(await runCode(b.client, "typeof secret")), '"undefined"\n');
  assert.equal(text(await runCode(a.client, "secret")), '"A"\n'); // control: A's environment keeps it
  // A temp file of A's environment is not in B's.
  const tmpA = JSON.parse(text(await runCode(a.client, 'const os = await import("node:os"); const fs = await import("node:fs"); fs.writeFileSync(os.tmpdir() + "/a.txt", "a"); os.tmpdir()')));
  assert.equal(text(await runCode(b.client, `const fs2 = await import("node:fs"); [fs2.existsSync(${JSON.stringify(tmpA + "/a.txt")}), fs2.existsSync((await import("node:os")).tmpdir() + "/a.txt")]`)), "[false,false]\n");
  // A's background run: B cannot see, wait for or stop it; A's progress never reaches B.
  const g = gate();
  const progressB = [];
  const bg = await runCode(a.client, `inspect("a-progress"); ${g.wait} return "a-done"`, { yieldAfterMs: 0 });
  const runId = bg.structuredContent.runId;
  assert.equal(text(await b.client.callTool({ name: "list_runs", arguments: {} })), "(no background runs)");
  assert.match(text(await b.client.callTool({ name: "wait_run", arguments: { runId } })), /^no background run "run-1" in this session/);
  assert.match(text(await b.client.callTool({ name: "terminate_run", arguments: { runId } })), /^no background run "run-1" in this session/);
  await runCode(b.client, "inspect('b-progress')", {}, { onprogress: (p) => progressB.push(p.message) });
  assert.deepEqual(progressB, ["b-progress\n"]);
  g.open();
  let done;
  do done = await a.client.callTool({ name: "wait_run", arguments: { runId, yieldAfterMs: 1000 } });
  while (done.structuredContent?.running);
  assert.match(text(done), /"a-done"/);
  await a.client.close();
  await b.client.close();
  s.child.kill("SIGTERM");
  assert.deepEqual(await s.exited, { code: 0, signal: null });
});

test("an idle session expires (404 after), a session with a run going does not", async () => {
  const s = await serve(["--token-file", tokenFile, "--session-idle-ms", "300"]);
  const busy = await connect(s.url);
  const g = gate();
  // Barriers, not time: the run is going (its output arrived) before the idle window starts to
  // matter, and the busy session is judged while its run still waits (once the run ends, its
  // own idle window starts, which a loaded machine can outlast before a next request).
  let started;
  const going = new Promise((resolve) => (started = resolve));
  const call = runCode(busy.client, `inspect("going"); ${g.wait} return "still here"`, {}, { onprogress: () => started() });
  await going;
  const r = await post(s.url, initialize);
  const idle = r.headers.get("mcp-session-id");
  // Any request would keep it alive: the barrier is dsh's log line.
  await until(() => s.stderr().includes(`dsh: session ${idle.slice(0, 8)} expired: no request or run for 300 ms\n`));
  const r2 = await post(s.url, { jsonrpc: "2.0", id: 2, method: "ping" }, { "Mcp-Session-Id": idle });
  assert.equal(r2.status, 404);
  assert.doesNotMatch(s.stderr(), new RegExp(`dsh: session ${busy.transport.sessionId.slice(0, 8)} expired`));
  g.open();
  assert.equal(text(await call), 'going\n"still here"\n');
  s.child.kill("SIGTERM");
  assert.deepEqual(await s.exited, { code: 0, signal: null });
});

test("SIGTERM drains: a call in flight finishes, its result reaches the client, dsh exits 0, nothing is left running", async () => {
  const s = await serve(["--token-file", tokenFile]);
  const { client } = await connect(s.url);
  const marker = `dsh-http-drain-${process.pid}`;
  const g = gate();
  let signalled = false;
  const call = runCode(client, `process.title = ${JSON.stringify(marker)}; inspect("running"); ${g.wait} return "finished"`, {}, {
    onprogress: () => {
      if (signalled) return;
      signalled = true;
      s.child.kill("SIGTERM");
      // New connections are refused once the drain began; then the gate opens.
      until(async () => (await fetch(new URL("/healthz", s.url)).then(() => false, () => true))).then(g.open);
    },
  });
  const result = await call;
  assert.equal(result.isError, false, text(result));
  assert.equal(text(result), 'running\n"finished"\n');
  assert.deepEqual(await s.exited, { code: 0, signal: null });
  assert.deepEqual(processesWith(marker), []);
  assert.match(s.stderr(), /dsh: SIGTERM: draining \(1 session\(s\), grace 30000 ms\)\n/);
});

test("SIGTERM drain: a background run that ends within the grace: its session ends after it, dsh exits 0, the run is logged", async () => {
  const s = await serve(["--token-file", tokenFile]);
  const { client } = await connect(s.url);
  const g = gate();
  const running = await runCode(client, `${g.wait} return "bg"`, { yieldAfterMs: 0 });
  assert.equal(running.structuredContent.running, true);
  s.child.kill("SIGTERM");
  await until(() => s.stderr().includes("dsh: SIGTERM: draining (1 session(s), grace 30000 ms)\n"));
  g.open();
  assert.deepEqual(await s.exited, { code: 0, signal: null });
  assert.doesNotMatch(s.stderr(), /were not taken/);
  assert.match(s.stderr(), /dsh: run session=[0-9a-f]{8} duration_ms=\d+ outcome=ok denied=false background=true\n/);
});

test("SIGTERM drain: a call still running when the grace ends is aborted, its result still reaches the client", async () => {
  const s = await serve(["--token-file", tokenFile, "--drain-ms", "200", "--log-format", "json"]);
  const { client } = await connect(s.url);
  const call = runCode(client, `inspect("forever"); await new Promise(() => {})`, {}, { onprogress: () => s.child.kill("SIGTERM") });
  const result = await call;
  assert.equal(result.isError, true);
  assert.equal(text(result), "forever\nerror (abort): execution aborted during execution: dsh is shutting down: the drain grace of 200 ms passed");
  assert.deepEqual(await s.exited, { code: 0, signal: null });
  const log = s.stderr().split("\n").filter((l) => l.startsWith("{")).map((l) => JSON.parse(l));
  assert.equal(log.length, 1);
  assert.deepEqual(Object.keys(log[0]), ["event", "session", "durationMs", "outcome", "denied", "background"]);
  assert.equal(log[0].outcome, "abort");
  assert.match(log[0].session, /^[0-9a-f]{8}$/);
});

test("a Unix socket: mode 0600, no token needed, removed at the end", async () => {
  const path = join(cwd, "mcp.sock");
  const s = await serve([], { listen: `unix:${path}` });
  assert.equal(statSync(path).mode & 0o777, 0o600);
  const body = JSON.stringify(initialize);
  const answer = await new Promise((resolveAnswer, reject) => {
    const req = request({ socketPath: path, path: "/mcp", method: "POST", headers: { "Content-Type": "application/json", Accept: "application/json, text/event-stream", "Content-Length": Buffer.byteLength(body) } }, (res) => {
      let data = "";
      res.on("data", (d) => (data += d));
      res.on("end", () => resolveAnswer({ status: res.statusCode, data }));
    });
    req.on("error", reject);
    req.end(body);
  });
  assert.equal(answer.status, 200);
  assert.equal(JSON.parse(answer.data).result.serverInfo.name, "dsh");
  s.child.kill("SIGTERM");
  assert.deepEqual(await s.exited, { code: 0, signal: null });
  assert.equal(existsSync(path), false);
});

test("retained environments: --listen's defaults are said at startup; an idle one is released (idleReleaseMs from the profile) and the next run says so", async () => {
  const s1 = await serve(["--token-file", tokenFile], { patches: [join(src, "examples/profiles/persistent.yaml")] });
  await until(() => s1.stderr().includes("dsh mcp: retained environments:"));
  assert.match(s1.stderr(), /dsh mcp: retained environments: idleReleaseMs 600000 \(dsh mcp --listen's default\), maxRetainedOwners 64 \(dsh mcp --listen's default\)\n/);
  s1.child.kill("SIGTERM");
  assert.deepEqual(await s1.exited, { code: 0, signal: null });

  const idle = join(cwd, "idle.yaml");
  writeFileSync(idle, "- id: ptc-runtime\n  config: {executionMode: persistent-in-memory, replScoped: true, idleReleaseMs: 300}\n");
  const s = await serve(["--token-file", tokenFile], { patches: [idle] });
  await until(() => s.stderr().includes("dsh mcp: retained environments:"));
  assert.match(s.stderr(), /idleReleaseMs 300 \(the profile's\), maxRetainedOwners 64 \(dsh mcp --listen's default\)\n/);
  const { client } = await connect(s.url);
  const marker = `dsh-http-idle-${process.pid}`;
  assert.equal(text(await runCode(client, `process.title = ${JSON.stringify(marker)}; var kept = 1; kept`)), "1\n");
  await until(() => processesWith(marker).length === 0); // released: its process is gone
  const after = text(await runCode(client, "typeof kept"));
  assert.match(after, /^note: earlier state is gone: .*\n"undefined"\n$/);
  await client.close();
  s.child.kill("SIGTERM");
  assert.deepEqual(await s.exited, { code: 0, signal: null });
});
