// A downstream MCP server for the dsh mcp tests, written with the official SDK's server API.
// Its tools exercise what dsh maps: a structured result, a text result, a tool error, names that
// are not identifiers or are reserved words, and a call that only ends when it is cancelled (it
// writes $MARKER_DIR/blocked when called and $MARKER_DIR/cancelled when the cancellation arrives).
// For restarts: every start appends its pid to $MARKER_DIR/pids, `pid` answers it, `crash` exits
// mid-call, and RESTART_MODE says what a restarted process (one that finds pids already there)
// does: "exit" exits at once, "hang" never answers (nor reads its stdin), "bad-version" (hostile,
// not the SDK) answers initialize with a protocol revision nobody speaks, "fewer-tools" lacks the
// first life's tool `first_life`.
import { appendFileSync, existsSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import sdk from "./sdk.cjs";

const { McpServer, StdioServerTransport, z } = sdk;
const pids = join(process.env.MARKER_DIR, "pids");
const restarted = existsSync(pids);
appendFileSync(pids, `${process.pid}\n`);
const mode = restarted ? process.env.RESTART_MODE : undefined;
if (mode === "exit") process.exit(3);
if (mode === "hang") {
  setInterval(() => {}, 1 << 30);
  await new Promise(() => {});
}
if (mode === "bad-version") {
  const { createInterface } = await import("node:readline");
  for await (const line of createInterface({ input: process.stdin })) {
    const { id, method } = JSON.parse(line);
    const result = { protocolVersion: "1999-01-01", capabilities: {}, serverInfo: { name: "old", version: "0" } };
    if (method === "initialize") process.stdout.write(JSON.stringify({ jsonrpc: "2.0", id, result }) + "\n");
  }
  process.exit(0);
}
const server = new McpServer({ name: "issue-tracker", version: "1.0.0" });
const issues = [
  { id: 1, title: "ptc streams output" },
  { id: 2, title: "ptc speaks MCP" },
  { id: 3, title: "unrelated" },
];

server.registerTool(
  "search_issues",
  {
    description: "Finds issues whose title contains the query",
    inputSchema: { query: z.string().describe("text to find"), limit: z.number().int().optional() },
    outputSchema: { hits: z.array(z.object({ id: z.number(), title: z.string() })) },
  },
  async ({ query, limit }) => {
    const hits = issues.filter((i) => i.title.includes(query)).slice(0, limit ?? 10);
    return { content: [{ type: "text", text: JSON.stringify({ hits }) }], structuredContent: { hits } };
  },
);

server.registerTool(
  "fail-always",
  { description: "Always fails", inputSchema: {} },
  async () => ({ content: [{ type: "text", text: "downstream says no" }], isError: true }),
);

server.registerTool(
  "delete",
  { description: "Pretends to delete an issue", inputSchema: { id: z.number() } },
  async ({ id }) => ({ content: [{ type: "text", text: `deleted ${id}` }] }),
);

server.registerTool(
  "block",
  { description: "Answers only when cancelled" },
  async (extra) =>
    new Promise((resolve) => {
      writeFileSync(join(process.env.MARKER_DIR, "blocked"), String(extra.requestId));
      extra.signal.addEventListener("abort", () => {
        writeFileSync(join(process.env.MARKER_DIR, "cancelled"), String(extra.requestId));
        resolve({ content: [{ type: "text", text: "cancelled" }] });
      });
    }),
);

server.registerTool("pid", { description: "This process's pid" }, async () => ({
  content: [{ type: "text", text: String(process.pid) }],
}));

server.registerTool("crash", { description: "Exits before it answers" }, async () => process.exit(1));

if (!restarted || mode !== "fewer-tools")
  server.registerTool("first_life", { description: "Only before a fewer-tools restart" }, async () => ({
    content: [{ type: "text", text: "first life" }],
  }));

await server.connect(new StdioServerTransport());
