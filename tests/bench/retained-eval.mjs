// Retained evaluation: host-side round trip of `x += 1; x` in an owner's retained environment,
// vm-script (scriptPersistence) and scoped REPL (persistent-in-memory), each interleaved with the
// same-run floor of any retained evaluation: one JSON line through a bare pinned Node over pipes.
// Usage: node tests/bench/retained-eval.mjs [evaluations]
import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { Serve } from '../conformance/harness.js';
import { NODE, pairs, report } from './lib.mjs';

const evaluations = Number(process.argv[2] ?? 1000);

/** A bare Node that echoes each line back: the pipe round trip a retained evaluation cannot avoid. */
function lineEcho() {
  const child = spawn(NODE, ['-e', 'require("readline").createInterface({input: process.stdin}).on("line", (l) => process.stdout.write(l + "\\n"))'],
    { stdio: ['pipe', 'pipe', 'inherit'] });
  const waiting = [];
  createInterface({ input: child.stdout }).on('line', () => waiting.shift()());
  return {
    roundTrip: () => new Promise((resolve) => { waiting.push(resolve); child.stdin.write('{"type":"ping"}\n'); }),
    close: () => child.stdin.end(),
  };
}

const modes = [
  ['vm-script', { executionMode: 'vm-script', scriptPersistence: true }, 'var x = 0'],
  ['scoped-repl', { executionMode: 'persistent-in-memory' }, 'let x = 0'],
];
const echo = lineEcho();
for (const [name, runtime, declare] of modes) {
  const serve = new Serve({ mode: 'workspace-write', runtime });
  let id = 0;
  let expected = 0;
  const first = await serve.run(`d${id++}`, declare, { stateOwner: 'bench' });
  if (!first.ok) throw new Error(JSON.stringify(first));
  const evaluate = async () => {
    const r = await serve.run(`e${id++}`, 'x += 1; x', { stateOwner: 'bench' });
    if (!r.ok || r.value !== ++expected) throw new Error(`expected ${expected}: ${JSON.stringify(r)}`);
  };
  console.log(`retained-${name}: \`x += 1; x\`, one owner, workspace-write`);
  const figures = await pairs(evaluations, evaluate, echo.roundTrip, 20);
  await serve.close();
  report(`retained-${name}`, 'retained evaluation', 'bare node line echo', figures, 'ms', 3);
}
echo.close();
