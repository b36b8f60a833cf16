// Writes into the working directory: denied under the default read-only policy, allowed with
// --patch examples/profiles/workspace-write.yaml.
const fs = await import("node:fs/promises");
await fs.writeFile("dsh-example.txt", "written by a PTC program\n");
inspect(await fs.readFile("dsh-example.txt", "utf8"));
await fs.unlink("dsh-example.txt");
