// Calls the demo `tools` namespace of the default profile (answered by dsh itself).
const echoed = await tools.echo({ text: "ping" });
const sum: number = await tools.add({ a: 20, b: 22 });
await tools.sleep({ ms: 50 });
inspect("echo:", echoed, "sum:", sum);
try {
  await tools.fail({ message: "expected failure" });
} catch (e) {
  inspect("caught:", (e as Error).message);
}
return sum;
