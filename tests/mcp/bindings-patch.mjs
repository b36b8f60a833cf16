// A patch (written to path) mounting downstream-server.mjs, the SDK-written test server, as the
// dsh-mcp-bindings server `issue-tracker` with these environment entries.
import { writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const here = dirname(fileURLToPath(import.meta.url));

export function writeBindingsPatch(path, env) {
  writeFileSync(
    path,
    `- insert:
  - id: mcp-bindings
    name: dsh-mcp-bindings
    config:
      servers:
        - name: issue-tracker
          command: ${JSON.stringify(process.execPath)}
          args: [${JSON.stringify(join(here, "downstream-server.mjs"))}]
          env: ${JSON.stringify(env)}
`,
  );
  return path;
}
