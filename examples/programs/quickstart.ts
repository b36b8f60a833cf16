// The quick start's program: a host binding, a write inside the workspace, a denied write outside.

interface Sum { a: number; b: number }

const sum: number = await tools.add({ a: 20, b: 22 } satisfies Sum);
inspect(`tools.add returned ${sum}`);

const fs = await import("node:fs/promises");
await fs.writeFile("hello.txt", `written by a confined program: ${sum}\n`);
inspect("wrote hello.txt in the workspace:", await fs.readFile("hello.txt", "utf8"));

try {
  await fs.writeFile("/etc/dsh-escape.txt", "should never exist");
  inspect("unexpected: wrote outside the workspace");
} catch (error) {
  inspect(`write outside the workspace denied: ${(error as NodeJS.ErrnoException).code}`);
}

return { sum, files: await fs.readdir(".") };
