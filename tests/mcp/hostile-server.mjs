// A hostile downstream MCP server for the dsh mcp tests, written by hand (no SDK) so it can send
// what the SDK never would. Synchronous on purpose: it reads its stdin and writes its stdout with
// blocking fs.readSync/fs.writeSync on the only thread, as a simple server in any language does.
// HOSTILE_MODE says what it does (every start appends its pid to $MARKER_DIR/pids):
//   null-fields    tools/call `types` answers a content item whose type is null, `error` an error
//                  whose message is null, `method` first sends dsh a request whose method is null
//                  and answers with the error message dsh sent back; a tool whose description is
//                  null is listed too; `texts` (a control) answers three text items
//   null-version   answers initialize with "protocolVersion": null
//   null-restart   like null-fields, but a restarted process answers initialize with a null
//                  protocolVersion; `crash` exits
//   nul-names      lists tools named "get", "get\0a" and "get\0b"; `get` answers the name it got
//   echo           `echo` answers its argument's text as text (1 MiB calls: both ways block)
//   deaf           stops reading its stdin after the handshake (writes $MARKER_DIR/deaf)
//   declarations   lists a tool whose description closes its comment through a CR (`*\r/`), one
//                  named `__many____` and one whose input schema repeats "object" in its type at
//                  every one of 9 levels; `__many____` answers "many"
//   huge           `huge_error` answers isError: true (text "too many") with structuredContent of
//                  HUGE_BYTES bytes, an array of empty arrays; `huge_text` a text of HUGE_BYTES bytes
import { appendFileSync, readFileSync, readSync, writeFileSync, writeSync } from "node:fs";
import { join } from "node:path";

const mode = process.env.HOSTILE_MODE;
const pids = join(process.env.MARKER_DIR, "pids");
let restarted = false;
try {
  restarted = readFileSync(pids, "utf8").length > 0;
} catch {}
appendFileSync(pids, `${process.pid}\n`);

const send = (msg) => {
  const text = JSON.stringify({ jsonrpc: "2.0", ...msg }) + "\n";
  const bytes = Buffer.from(text);
  for (let off = 0; off < bytes.length; ) off += writeSync(1, bytes, off);
};

let pending = Buffer.alloc(0);
function nextLine() {
  for (;;) {
    const nl = pending.indexOf(10);
    if (nl >= 0) {
      const line = pending.subarray(0, nl).toString();
      pending = pending.subarray(nl + 1);
      return line;
    }
    const chunk = Buffer.alloc(1 << 16);
    let n;
    try {
      n = readSync(0, chunk);
    } catch (e) {
      if (e.code === "EAGAIN") continue;
      throw e;
    }
    if (n === 0) process.exit(0);
    pending = Buffer.concat([pending, chunk.subarray(0, n)]);
  }
}

const text = (t) => ({ content: [{ type: "text", text: t }] });
const tool = (name, extra = {}) => ({ name, inputSchema: { type: "object" }, ...extra });
const tools = {
  "null-fields": [tool("types"), tool("error"), tool("method"), tool("described", { description: null }), tool("texts")],
  "null-restart": [tool("types"), tool("crash")],
  "nul-names": [tool("get"), tool("get\u0000a"), tool("get\u0000b")],
  echo: [tool("echo")],
  deaf: [tool("sink")],
  huge: [tool("huge_text"), tool("huge_error")],
  declarations: [
    tool("closer", { description: "ends *\r/ here; x */ y" }),
    tool("__many____"),
    tool("nested", { inputSchema: repeatedTypes(9) }),
  ],
}[mode] ?? [];

// An object schema whose type names "object" ten times at each of `levels` levels.
function repeatedTypes(levels) {
  let schema = { type: "string" };
  for (let i = 0; i < levels; i++) schema = { type: Array(10).fill("object"), properties: { a: schema } };
  return schema;
}

function call(name, args) {
  if (name === "types") return { content: [{ type: null, text: "x" }] };
  if (name === "texts") return { content: [{ type: "text", text: 'a"\u00e9' }, { type: "text", text: "b\n" }, { type: "text", text: "" }] };
  if (name === "error") return null;
  if (name === "crash") process.exit(1);
  if (name === "get") return text(JSON.stringify(args.__name));
  if (name === "__many____") return text("many");
  if (name === "echo") return text(args.text);
  if (name === "huge_text") return text("y".repeat(Number(process.env.HUGE_BYTES)));
  if (name === "huge_error") {
    const n = Math.floor((Number(process.env.HUGE_BYTES) - 2) / 3);
    const items = JSON.parse("[" + "[],".repeat(n) + "[]]");
    return { content: [{ type: "text", text: "too many" }], structuredContent: { items }, isError: true };
  }
  if (name === "method") {
    send({ id: "dsh-probe", method: null });
    for (;;) {
      const msg = JSON.parse(nextLine());
      if (msg.id === "dsh-probe") return text(msg.error?.message ?? "no error");
    }
  }
  return text("?");
}

for (;;) {
  const msg = JSON.parse(nextLine());
  if (msg.method === "initialize") {
    const version = mode === "null-version" || (mode === "null-restart" && restarted) ? null : "2025-06-18";
    send({ id: msg.id, result: { protocolVersion: version, capabilities: { tools: {} }, serverInfo: { name: "hostile", version: "0" } } });
  } else if (msg.method === "tools/list") {
    send({ id: msg.id, result: { tools } });
    if (mode === "deaf") {
      writeFileSync(join(process.env.MARKER_DIR, "deaf"), "");
      for (;;) Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0);
    }
  } else if (msg.method === "tools/call") {
    const { name, arguments: args = {} } = msg.params;
    const result = call(name, { ...args, __name: name });
    if (result === null) send({ id: msg.id, error: { code: -32000, message: null } });
    else send({ id: msg.id, result });
  }
}
