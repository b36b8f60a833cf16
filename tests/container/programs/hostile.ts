// The hostile set: each action's outcome, "OK" when it succeeded, else the error code.
const fs = await import("node:fs/promises");
const net = await import("node:net");
const attempt = async (f: () => Promise<unknown> | unknown): Promise<string> => {
  try { await f(); return "OK"; } catch (e) { return (e as NodeJS.ErrnoException).code ?? String(e); }
};
const socket = () => new Promise<string>((resolve) => {
  try {
    const s = net.connect(9, "127.0.0.1");
    s.on("error", (e: NodeJS.ErrnoException) => resolve(e.code ?? "error"));
    s.on("connect", () => { s.destroy(); resolve("OK"); });
  } catch (e) { resolve((e as NodeJS.ErrnoException).code ?? String(e)); }
});
return {
  writeWorkspace: await attempt(() => fs.writeFile("inside.txt", "x")),
  writeOutside: await attempt(() => fs.writeFile("/etc/dsh-hostile", "x")),
  readShadow: await attempt(() => fs.readFile("/etc/shadow")),
  killPid1: await attempt(() => process.kill(1, 0)),
  socket: await socket(),
};
