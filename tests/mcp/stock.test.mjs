// `dsh mcp` mounting the three stock MCP servers (@modelcontextprotocol/server-everything,
// -filesystem, -memory, pinned in tests/clients/) through a dsh-mcp-bindings row, driven by the
// MCP Inspector's CLI (@modelcontextprotocol/inspector, a client nobody here wrote) and the SDK:
// the run_code description stays within the default 4 KB budget by listing the tools instead of
// declaring them, and a program that asks tools.describeTool for a declaration then calls the tool
// it learned about works; under the budget the declarations are shown whole.
// Usage: node --test tests/mcp/stock.test.mjs (DSH=build/examples/host/dsh).
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { after, test } from "node:test";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { bindingsRow } from "./bindings-patch.mjs";
import sdk from "./sdk.cjs";

const { Client, StdioClientTransport } = sdk;
const here = dirname(fileURLToPath(import.meta.url));
const src = resolve(here, "../..");
const dsh = resolve(process.env.DSH ?? join(src, "build/examples/host/dsh"));
const clients = createRequire(join(src, "tests/clients/package.json"));
const pkg = (name) => dirname(clients.resolve(`${name}/package.json`));
const inspector = join(pkg("@modelcontextprotocol/inspector"), "clients/launcher/build/index.js");
const scratch = mkdtempSync(join(tmpdir(), "dsh-mcp-stock-"));
const files = join(scratch, "files");
mkdirSync(files);
writeFileSync(join(files, "notes.txt"), "stock servers answer\n");

// The three servers, each started with this test's (pinned) Node; budget: the row's
// declarationBudget, or the catalog default when undefined.
function stockPatch(budget) {
  const node = process.execPath;
  const entry = (name) => join(pkg(`@modelcontextprotocol/${name}`), "dist/index.js");
  const path = join(scratch, `stock-${budget ?? "default"}.yaml`);
  const servers = [
    { name: "everything", command: node, args: [entry("server-everything"), "stdio"] },
    { name: "filesystem", command: node, args: [entry("server-filesystem"), files] },
    { name: "memory", command: node, args: [entry("server-memory")], env: ["MEMORY_FILE_PATH=" + join(scratch, "memory.jsonl")] },
  ];
  writeFileSync(path, bindingsRow(budget === undefined ? { servers } : { declarationBudget: budget, servers }));
  return path;
}
const stock = stockPatch();

// The Inspector's CLI against `dsh --patch PATCH mcp`; its stdout is JSON.
async function inspect(args) {
  const { stdout } = await promisify(execFile)(
    process.execPath,
    [inspector, "--cli", dsh, "--patch", stock, "mcp", ...args],
    { cwd: scratch, maxBuffer: 64 << 20 },
  );
  return JSON.parse(stdout);
}

const sessions = [];
async function connect(patch) {
  const transport = new StdioClientTransport({ command: dsh, args: ["--patch", patch, "mcp"], cwd: scratch, stderr: "pipe" });
  const client = new Client({ name: "dsh-mcp-stock-test", version: "1.0.0" });
  await client.connect(transport);
  sessions.push(client);
  return client;
}
after(async () => {
  for (const c of sessions) await c.close();
});
const text = (result) => result.content.filter((c) => c.type === "text").map((c) => c.text).join("");

test("the Inspector CLI lists run_code: with the three stock servers its description is at most 4 KB, each tool listed", async () => {
  const { tools } = await inspect(["--method", "tools/list"]);
  assert.deepEqual(tools.map((t) => t.name), ["run_code", "wait_run", "terminate_run", "list_runs"]);
  const [tool] = tools;
  const bytes = Buffer.byteLength(tool.description);
  console.log(`run_code description with the three stock servers, tools discovered on demand: ${bytes} bytes`);
  assert.ok(bytes <= 4096, `${bytes} bytes:\n${tool.description}`);
  assert.doesNotMatch(tool.description, /declare const/, "no declaration is shown");
  assert.match(tool.description, /^- tools: registerImage \(Registers a PNG or JPEG file\.\.\.\); describeTool; searchTools$/m);
  assert.match(tool.description, /^- everything: echo \(Echoes back the input string\); .*get_sum \(Returns the sum of two numbers\);/m);
  assert.match(tool.description, /^- filesystem: read_file \(.*\); .*list_allowed_directories/m);
  assert.match(tool.description, /^- memory: create_entities \(.*\); .*open_nodes/m);
  assert.ok(tool.description.includes(
    'Their TypeScript declarations are not shown: `await tools.describeTool("namespace.function")` returns one as text, ' +
      '`await tools.searchTools("words")` the functions whose name or description has them all, as [{name, summary}]. ' +
      "A call works the same whether or not its declaration was read.",
  ));
  assert.equal(tool.annotations.readOnlyHint, true);
  assert.equal(tool.outputSchema.type, "object");
});

test("the Inspector CLI calls run_code: describeTool, then the tool it described; searchTools", async () => {
  const program = `const declaration = await tools.describeTool("everything.get_sum");
    inspect(declaration);
    inspect(await tools.searchTools("graph CREATE entities"), await tools.searchTools("SUM"));
    inspect((await filesystem.read_text_file({ path: ${JSON.stringify(join(files, "notes.txt"))} })).content);
    return { sum: await everything.get_sum({ a: 2, b: 40 }) }`;
  const result = await inspect([
    "--method", "tools/call", "--tool-name", "run_code",
    "--tool-arg", `program=${program}`, "--tool-arg", "description=learn a tool, then call it",
  ]);
  assert.equal(result.isError, false, JSON.stringify(result));
  assert.equal(
    text(result),
    '/** A tool of the MCP server "everything"; a failed call throws McpToolError. */\n' +
      "declare const everything: {\n" +
      '  /** Returns the sum of two numbers (MCP tool "get-sum") */\n' +
      "  get_sum(input: {\n    /** First number */\n    a: number;\n    /** Second number */\n    b: number;\n  }): Promise<unknown>;\n" +
      "};\n\n" +
      "[\n  {\n    name: 'memory.create_entities',\n    summary: 'Create multiple new entities in the...'\n  },\n" +
      "  {\n    name: 'memory.create_relations',\n    summary: 'Create multiple new relations...'\n  }\n] [\n" +
      "  {\n    name: 'tools.searchTools',\n    summary: 'The functions whose name or...'\n  },\n" +
      "  {\n    name: 'everything.get_sum',\n    summary: 'Returns the sum of two numbers'\n  }\n]\n" +
      "stock servers answer\n\n" +
      '{"sum":"The sum of 2 and 40 is 42."}\n',
  );
  assert.deepEqual(result.structuredContent, { sum: "The sum of 2 and 40 is 42." });
});

test("under the budget the declarations are shown whole, and calls are the same", async () => {
  const client = await connect(stockPatch(1 << 20));
  const [tool] = (await client.listTools()).tools;
  console.log(`run_code description with every declaration: ${Buffer.byteLength(tool.description)} bytes`);
  assert.match(tool.description, /declare const everything: \{/);
  assert.match(tool.description, /declare const memory: \{/);
  assert.doesNotMatch(tool.description, /^- everything: /m);
  const result = await client.callTool({
    name: "run_code",
    arguments: { program: "return await everything.get_sum({ a: 2, b: 40 })", description: "add" },
  });
  assert.equal(text(result), '"The sum of 2 and 40 is 42."\n');
  // Budget 0: always the list, whatever the declarations take.
  const listed = await connect(stockPatch(0));
  const [small] = (await listed.listTools()).tools;
  assert.match(small.description, /^- everything: /m);
});

test("describeTool and searchTools refuse what is not one string, and name what is missing", async () => {
  const result = await inspect([
    "--method", "tools/call", "--tool-name", "run_code",
    "--tool-arg", `program=for (const [f, arg] of [["describeTool", 3], ["searchTools", { text: "x" }], ["describeTool", "everything.nope"]])
      try { await tools[f](arg) } catch (e) { inspect(e.constructor.name, e.member, e.message) }
      inspect(await tools.searchTools("no tool says this"))`,
    "--tool-arg", "description=refusals",
  ]);
  assert.equal(
    text(result),
    "ToolCallError describeTool tools.describeTool expects one string argument\n" +
      "ToolCallError searchTools tools.searchTools expects one string argument\n" +
      'ToolCallError describeTool tools.describeTool: there is no function "everything.nope"; tools.searchTools("") lists them all\n' +
      "[]\n",
  );
});
