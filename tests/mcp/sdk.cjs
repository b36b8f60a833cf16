// The official MCP TypeScript SDK and zod, from the pinned install in tests/clients/.
const { createRequire } = require("node:module");
const { join } = require("node:path");
const from = createRequire(join(__dirname, "../clients/package.json"));
module.exports = {
  ...from("@modelcontextprotocol/sdk/client/index.js"),
  ...from("@modelcontextprotocol/sdk/client/stdio.js"),
  ...from("@modelcontextprotocol/sdk/server/mcp.js"),
  ...from("@modelcontextprotocol/sdk/server/stdio.js"),
  z: from("zod").z,
};
