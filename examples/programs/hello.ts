// dsh headless --program examples/programs/hello.ts
const greeting: string = "hello from a confined Node process";
inspect(greeting);
return { node: process.version, sum: 1 + 2 };
