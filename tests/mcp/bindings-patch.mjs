// Patches that insert the dsh-mcp-bindings row, for the tests of dsh mcp and --serve.
import { writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const here = dirname(fileURLToPath(import.meta.url));

// The patch text inserting the row with this config (written as JSON, which is YAML).
export const bindingsRow = (config) =>
  `- insert:\n  - id: mcp-bindings\n    name: dsh-mcp-bindings\n    config: ${JSON.stringify(config)}\n`;

// Writes to path a patch mounting downstream-server.mjs, the SDK-written test server, as the
// server `issue-tracker` with these environment entries; returns path.
export function writeBindingsPatch(path, env) {
  writeFileSync(
    path,
    bindingsRow({
      servers: [{ name: "issue-tracker", command: process.execPath, args: [join(here, "downstream-server.mjs")], env }],
    }),
  );
  return path;
}
