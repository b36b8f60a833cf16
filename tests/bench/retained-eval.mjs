// Retained evaluation: host-side round trip of `x += 1; x` in an owner's retained environment,
// vm-script (scriptPersistence) and scoped REPL (persistent-in-memory), each interleaved with the
// same-run floor of any retained evaluation: one JSON line through a bare pinned Node over pipes.
// First the floor of two processes in a row (`SUMMARY retained-floor`): the line through a bare
// Node relaying it to a bare Node echo, against the echo alone.
// Each mode also prints the CPU time per evaluation of dsh and of the owner's process, and per
// line of the echo (/proc/PID/task/*/schedstat over the interleaved loop): where the time goes.
// Usage: node tests/bench/retained-eval.mjs [evaluations] [--vs DSH]
//   --vs DSH interleaves the same evaluation through another dsh build instead of the bare echo
//   (an A/B of two builds, e.g. main's), and prints each dsh's CPU time per evaluation.
import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { Serve } from '../conformance/harness.js';
import { descendants, isStripperRange, NODE, pairs, processCpuNs, report } from './lib.mjs';

const args = process.argv.slice(2);
const vsAt = args.indexOf('--vs');
const vs = vsAt >= 0 ? args.splice(vsAt, 2)[1] : null;
const evaluations = Number(args[0] ?? 1000);

const ECHO = 'require("readline").createInterface({input: process.stdin}).on("line", (l) => process.stdout.write(l + "\\n"))';
// A bare Node that passes each chunk on to an echo of its own and the answer back: the shape of
// a retained evaluation (client, dsh, the owner's process) with nothing done in either process.
const RELAY = `const echo = require("child_process").spawn(process.execPath, ["-e", ${JSON.stringify(ECHO)}], { stdio: ["pipe", "pipe", "inherit"] });
process.stdin.on("data", (d) => echo.stdin.write(d)); echo.stdout.on("data", (d) => process.stdout.write(d));
process.stdin.on("end", () => echo.stdin.end());`;

/** A bare Node that echoes each line back: the pipe round trip a retained evaluation cannot avoid
 * (relayed: through a second bare Node, the two-process floor). */
function lineEcho(relayed = false) {
  const child = spawn(NODE, ['-e', relayed ? RELAY : ECHO], { stdio: ['pipe', 'pipe', 'inherit'] });
  const waiting = [];
  createInterface({ input: child.stdout }).on('line', () => waiting.shift()());
  return {
    roundTrip: () => new Promise((resolve) => { waiting.push(resolve); child.stdin.write('{"type":"ping"}\n'); }),
    cpuNs: () => processCpuNs(child.pid),
    close: () => child.stdin.end(),
  };
}

/** An owner declared in a fresh `dsh headless --serve` (bin: another build); evaluate() adds one. */
async function retainedOwner(runtime, declare, bin) {
  const serve = new Serve({ mode: 'workspace-write', runtime, bin });
  let id = 0;
  let expected = 0;
  const first = await serve.run(`d${id++}`, declare, { stateOwner: 'bench' });
  if (!first.ok) throw new Error(JSON.stringify(first));
  return {
    evaluate: async () => {
      const r = await serve.run(`e${id++}`, 'x += 1; x', { stateOwner: 'bench' });
      if (!r.ok || r.value !== ++expected) throw new Error(`expected ${expected}: ${JSON.stringify(r)}`);
    },
    /** Nanoseconds dsh has run on a CPU. */
    cpuNs: () => processCpuNs(serve.child.pid),
    /** Nanoseconds the processes below dsh (the range's supervisor, the owner's Node) have run. */
    ownerCpuNs: () => descendants(serve.child.pid, isStripperRange).reduce((sum, pid) => sum + processCpuNs(pid), 0),
    close: () => serve.close(),
  };
}

const modes = [
  ['vm-script', { executionMode: 'vm-script', scriptPersistence: true }, 'var x = 0'],
  ['scoped-repl', { executionMode: 'persistent-in-memory' }, 'let x = 0'],
];
const echo = vs ? null : lineEcho();
const relay = vs ? null : lineEcho(true);
if (relay) {
  console.log('retained-floor: one JSON line through a bare Node relaying to a bare Node echo, against the echo alone');
  report('retained-floor', 'relayed echo', 'bare node line echo', await pairs(evaluations, relay.roundTrip, echo.roundTrip, 20), 'ms', 3);
}
for (const [name, runtime, declare] of modes) {
  const owner = await retainedOwner(runtime, declare);
  const other = vs ? await retainedOwner(runtime, declare, vs) : null;
  console.log(`retained-${name}: \`x += 1; x\`, one owner, workspace-write${vs ? `, against ${vs}` : ''}`);
  const cpu0 = [owner.cpuNs(), owner.ownerCpuNs(), other ? other.cpuNs() : echo.cpuNs()];
  const figures = await pairs(evaluations, owner.evaluate, other ? other.evaluate : echo.roundTrip, 20);
  const perEval = (ns) => `${(ns / (evaluations + 20) / 1000).toFixed(0)} us`;
  const [dshCpu, ownerCpu, otherCpu] = [owner.cpuNs() - cpu0[0], owner.ownerCpuNs() - cpu0[1], (other ?? echo).cpuNs() - cpu0[2]];
  if (other) console.log(`  dsh CPU per evaluation: ${perEval(dshCpu)} vs ${perEval(otherCpu)}`);
  else console.log(`  CPU per evaluation: dsh ${perEval(dshCpu)}, the owner's process ${perEval(ownerCpu)}; per line: the echo ${perEval(otherCpu)}`);
  await owner.close();
  await other?.close();
  report(`retained-${name}`, 'retained evaluation', vs ? 'the other build' : 'bare node line echo', figures, 'ms', 3);
}
echo?.close();
relay?.close();
