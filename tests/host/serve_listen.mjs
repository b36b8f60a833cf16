// `dsh headless --serve --listen unix:PATH`: several clients of one Unix socket, each its own
// session speaking the --serve protocol: a hello each, runs, separate stateOwners (the same name
// in two clients is two environments), no reach into another client's runs, owners or session,
// a client's disconnect cancels only its runs, at most 64 clients, the socket file is 0600, and
// SIGTERM cancels the runs, removes the socket file and exits 143. Usage errors, exactly.
import assert from "node:assert/strict";
import { spawn, spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, statSync } from "node:fs";
import { connect } from "node:net";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { createInterface } from "node:readline";
import { check, checkEvent, done } from "./harness.mjs";

const [dshPath, srcRoot] = process.argv.slice(2).map((p) => resolve(p));
const cwd = mkdtempSync(join(tmpdir(), "dsh-listen-"));
const sock = join(cwd, "dsh.sock");
const persistent = join(srcRoot, "examples/profiles/persistent.yaml");

// A --listen server: its stderr, read line by line, is how the test knows what happened to a
// client (dsh -v logs "client ID connected/closed"); waits are barriers on those lines.
class Server {
  constructor(args) {
    this.child = spawn(dshPath, ["-v", "headless", ...args], { cwd, stdio: ["ignore", "ignore", "pipe"] });
    this.lines = [];
    this.waiters = [];
    createInterface({ input: this.child.stderr }).on("line", (line) => {
      this.lines.push(line);
      for (const w of this.waiters.splice(0)) if (!w(line)) this.waiters.push(w);
    });
    this.exited = new Promise((r) => this.child.on("exit", (code, signal) => r({ code, signal })));
  }

  // Resolves with the first stderr line that re matches (now or later).
  match(re) {
    const found = this.lines.find((l) => re.test(l));
    if (found !== undefined) return Promise.resolve(found);
    return new Promise((resolve) => this.waiters.push((l) => (re.test(l) ? (resolve(l), true) : false)));
  }

  // Resolves once stderr has a line equal to text (now or later).
  line(text) {
    return this.match({ test: (l) => l === text });
  }

  stderr() {
    return this.lines.join("\n");
  }
}

// One connection speaking JSON lines, like harness.mjs's Dsh over stdin/stdout.
class Client {
  constructor() {
    this.socket = connect(sock);
    this.events = [];
    this.waiters = [];
    this.closed = new Promise((r) => this.socket.on("close", r));
    this.socket.on("error", () => {});
    createInterface({ input: this.socket }).on("line", (line) => {
      const ev = checkEvent(JSON.parse(line));
      if (!this.hello && ev.type === "hello" && !("id" in ev)) {
        this.hello = ev;
        this.helloWaiter?.();
        return;
      }
      this.events.push(ev);
      this.#wake();
    });
  }

  async ready() {
    if (!this.hello) await new Promise((r) => (this.helloWaiter = r));
    return this;
  }

  #wake() {
    for (const w of [...this.waiters]) {
      const i = this.events.findIndex(w.match);
      if (i >= 0) {
        this.waiters.splice(this.waiters.indexOf(w), 1);
        w.resolve(this.events.splice(i, 1)[0]);
      }
    }
  }

  send(request) {
    this.socket.write(JSON.stringify(request) + "\n");
  }

  next(match) {
    return new Promise((resolve) => {
      this.waiters.push({ match, resolve });
      this.#wake();
    });
  }

  // The run's result; a run refused with an error event fails the check at once.
  async result(id) {
    const ev = await this.next((e) => (e.type === "result" || e.type === "error") && e.id === id);
    assert.equal(ev.type, "result", JSON.stringify(ev));
    return ev;
  }

  error(id) {
    return this.next((e) => e.type === "error" && e.id === id);
  }
}

function usage(args) {
  const r = spawnSync(dshPath, args, { cwd, encoding: "utf8" });
  return { status: r.status, stderr: r.stderr, stdout: r.stdout };
}

await check("usage errors: one line each, exit 2", async () => {
  const cases = [
    [["headless", "--listen", `unix:${sock}`], "dsh headless: --listen needs --serve (see 'dsh headless --help')\n"],
    [["headless", "--serve", "--listen", "127.0.0.1:8080"],
     "dsh headless: --serve --listen accepts only unix:PATH, not \"127.0.0.1:8080\" (see 'dsh headless --help')\n"],
    [["headless", "--serve", "--listen", "[::1]:8080"],
     "dsh headless: --serve --listen accepts only unix:PATH, not \"[::1]:8080\" (see 'dsh headless --help')\n"],
    [["headless", "--serve", "--listen", "unix:dsh.sock"],
     "dsh headless: --listen: unix:dsh.sock: the socket path must be absolute (see 'dsh headless --help')\n"],
    [["headless", "--serve", "--listen", "nowhere"],
     "dsh headless: --listen: \"nowhere\" is no address: use 127.0.0.1:PORT, [::1]:PORT or unix:PATH (see 'dsh headless --help')\n"],
    [["headless", "--serve", "--listen"], "dsh headless: option --listen needs an argument (see 'dsh headless --help')\n"],
    [["doctor", "--listen", `unix:${sock}`], "dsh doctor: unknown option --listen (see 'dsh doctor --help')\n"],
  ];
  for (const [args, stderr] of cases) assert.deepEqual(usage(args), { status: 2, stderr, stdout: "" }, args.join(" "));
  assert.equal(existsSync(sock), false, "no socket was made");
});

const server = new Server(["--patch", persistent, "--serve", "--listen", `unix:${sock}`]);
await server.line(`dsh: listening on unix:${sock}`);
let A, B;

await check("the socket file is a socket of mode 0600", async () => {
  const st = statSync(sock);
  assert.equal(st.isSocket(), true);
  assert.equal(st.mode & 0o777, 0o600);
});

await check("two clients at once: each gets hello first, with its own session", async () => {
  [A, B] = await Promise.all([new Client().ready(), new Client().ready()]);
  for (const c of [A, B]) {
    assert.match(c.hello.session, new RegExp(`^serve-${server.child.pid}-\\d+$`));
    assert.equal(c.hello.describe.executionMode, "persistent-in-memory");
  }
  assert.notEqual(A.hello.session, B.hello.session);
});

await check("a run in each client; the same stateOwner name is two environments", async () => {
  A.send({ type: "run", id: 1, stateOwner: "a", program: "var x = 1" });
  B.send({ type: "run", id: 1, stateOwner: "a", program: "typeof x" });
  const [ra, rb] = await Promise.all([A.result(1), B.result(1)]);
  assert.equal(ra.result.ok, true, JSON.stringify(ra));
  assert.equal(rb.result.value, "undefined", JSON.stringify(rb));
  assert.equal(ra.result.retained.owner, `${A.hello.session}/a`);
  assert.equal(rb.result.retained.owner, `${B.hello.session}/a`);
  A.send({ type: "run", id: 2, stateOwner: "a", program: "x + 1" });
  assert.equal((await A.result(2)).result.value, 2);
});

await check("a client cannot cancel, answer or release what another client owns", async () => {
  A.send({ type: "run", id: "ra", program: "await host.wait({})", bindings: [{ global: "host", functions: ["wait"] }] });
  const call = await A.next((e) => e.type === "call" && e.run === "ra");
  B.send({ type: "cancel", id: "ra" });
  assert.deepEqual(await B.error("ra"), { type: "error", id: "ra", message: "cancel: no run with this id is in flight" });
  B.send({ type: "reply", run: "ra", call: call.call, ok: true, value: "from B" });
  assert.deepEqual(await B.next((e) => e.type === "error"),
    { type: "error", message: `reply: run "ra" has no open call ${call.call}` });
  // B releases its own "a"; A's "a" keeps x.
  B.send({ type: "release", id: "rel", stateOwner: "a" });
  assert.deepEqual(await B.next((e) => e.id === "rel"), { type: "released", id: "rel" });
  A.send({ type: "reply", run: "ra", call: call.call, ok: true, value: "from A" });
  assert.equal((await A.result("ra")).result.value, "from A");
  A.send({ type: "run", id: 3, stateOwner: "a", program: "x" });
  assert.equal((await A.result(3)).result.value, 1);
  const C = await new Client().ready();
  C.send({ type: "release", id: "rel-c", stateOwner: "a" });
  assert.deepEqual(await C.error("rel-c"), {
    type: "error", id: "rel-c", message: "release: no run of this session used stateOwner \"a\" since its last release",
  });
  C.socket.end();
  await server.line(`dsh: [info] client ${C.hello.session} closed`);
});

await check("a client's sessionId and set-mode session are refused; set-mode changes its own session only", async () => {
  A.send({ type: "run", id: "s", sessionId: B.hello.session, program: "1" });
  assert.deepEqual(await A.error("s"), {
    type: "error", id: "s",
    message: `sessionId is not accepted on a listening server: this connection's runs belong to session "${A.hello.session}"`,
  });
  const C = await new Client().ready();
  C.send({ type: "set-mode", id: "m", session: A.hello.session, mode: "workspace-write" });
  assert.deepEqual(await C.error("m"), {
    type: "error", id: "m",
    message: `set-mode: "session" is not accepted on a listening server: this connection's session is "${C.hello.session}"`,
  });
  C.send({ type: "set-mode", id: "m2", mode: "workspace-write" });
  assert.deepEqual(await C.next((e) => e.id === "m2"),
    { type: "mode-set", id: "m2", session: C.hello.session, mode: "workspace-write" });
  C.send({ type: "run", id: "c", program: "1" });
  B.send({ type: "run", id: "b", program: "1" });
  assert.equal((await C.result("c")).result.sandbox.mode, "workspace-write");
  assert.equal((await B.result("b")).result.sandbox.mode, "read-only");
  // A's retained owner is in A's session, untouched by C's mode change.
  A.send({ type: "run", id: 4, stateOwner: "a", program: "x" });
  assert.equal((await A.result(4)).result.value, 1);
  C.socket.destroy();
  await server.line(`dsh: [info] client ${C.hello.session} closed`);
});

await check("a client that shuts down its sending side still gets its results", async () => {
  const D = await new Client().ready();
  D.send({ type: "run", id: "d", program: "await tools.add({ a: 2, b: 3 })" });
  D.socket.end();
  assert.equal((await D.result("d")).result.value, 5);
  await D.closed;
});

await check("a client that disconnects mid-run: its run is cancelled, the other client's completes", async () => {
  A.send({ type: "run", id: "forever", stream: true, timeoutMs: null, program: "inspect('started'); await new Promise(() => {})" });
  await A.next((e) => e.type === "output" && e.run === "forever");
  B.send({ type: "run", id: "rb", program: "await host.wait({})", bindings: [{ global: "host", functions: ["wait"] }] });
  const call = await B.next((e) => e.type === "call" && e.run === "rb");
  const session = A.hello.session;
  A.socket.destroy();
  // "closed" comes only after the client's runs ended (and its owners were released): the run
  // that never ends by itself was cancelled.
  await server.line(`dsh: [info] client ${session} is gone: its runs are cancelled`);
  await server.line(`dsh: [info] client ${session} closed`);
  B.send({ type: "reply", run: "rb", call: call.call, ok: true, value: 7 });
  assert.equal((await B.result("rb")).result.value, 7);
  // B's owner "a" (released above) starts fresh; the server goes on with new clients.
  const E = await new Client().ready();
  E.send({ type: "run", id: "e", stateOwner: "a", program: "typeof x" });
  assert.equal((await E.result("e")).result.value, "undefined");
  E.socket.destroy();
  await server.line(`dsh: [info] client ${E.hello.session} closed`);
});

await check("a client that leaves 64 MiB of events unread is dropped, and only that client", async () => {
  const F = new Client();
  F.socket.pause(); // reads nothing, not even its hello
  // Three call events in this order: the first, 70 MiB of arguments, fills F's queue past its
  // bound; the second finds it full, the third finds nothing taken since: F is dropped.
  F.send({
    type: "run", id: "big", timeoutMs: null, bindings: [{ global: "host", functions: ["a", "b", "c"] }],
    program: "const s = 'x'.repeat(70 << 20); await Promise.all([host.a({ s }), host.b({}), host.c({})])",
  });
  const dropped = /^dsh: the client (serve-\d+-\d+) left 64 MiB of events unread; dsh dropped it$/;
  const line = await server.match(dropped);
  const session = dropped.exec(line)[1];
  // Its run, waiting for answers that cannot come, was cancelled: the client is closed; B goes on.
  await server.line(`dsh: [info] client ${session} closed`);
  B.send({ type: "run", id: "after-drop", program: "2" });
  assert.equal((await B.result("after-drop")).result.value, 2);
  F.socket.destroy();
});

await check("at most 64 clients: one more gets one error line and is closed", async () => {
  const more = await Promise.all(Array.from({ length: 63 }, () => new Client().ready())); // and B
  const refused = connect(sock);
  let text = "";
  refused.setEncoding("utf8");
  refused.on("data", (d) => (text += d));
  await new Promise((r) => refused.on("close", r));
  assert.equal(text, '{"type":"error","message":"dsh already serves 64 clients, its limit; connect again later"}\n');
  const last = more.pop();
  last.socket.destroy();
  await server.line(`dsh: [info] client ${last.hello.session} closed`);
  const again = await new Client().ready();
  assert.match(again.hello.session, /^serve-/);
  for (const c of [...more, again]) c.socket.destroy();
});

await check("SIGTERM: the run's client gets an abort result, dsh exits 143, the socket file is gone", async () => {
  B.send({ type: "run", id: "t", stream: true, timeoutMs: null, program: "inspect('started'); await new Promise(() => {})" });
  await B.next((e) => e.type === "output" && e.run === "t");
  server.child.kill("SIGTERM");
  const r = await B.result("t");
  assert.deepEqual(r.result.error, { kind: "abort", message: "execution aborted during execution: dsh received SIGTERM" });
  await B.closed;
  assert.deepEqual(await server.exited, { code: 143, signal: null }, server.stderr());
  assert.equal(existsSync(sock), false);
});

if (server.child.exitCode === null) server.child.kill("SIGKILL");
done();
