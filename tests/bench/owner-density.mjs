// Owner density: the proportional set size (PSS, /proc/PID/smaps_rollup) an idle retained owner
// costs, with N owners alive at once in one `dsh headless --serve` (each ran `var x = 1; x` and
// idles), for the scoped REPL and for vm-script (`scriptPersistence`), against N idle bare pinned
// Node processes (`node -e` with a pending timer) measured in the same run. Then scoped-REPL owners
// that ran a program that may have types (`const o = {a: 1}; o`, stripped by the session's type
// stripper). The stripper, one per session and started at load, is no owner's: its range is left
// out of the owners' figures and its PSS printed on its own. PSS divides shared pages
// among the processes that map them, so the figure is what one more owner adds at that density.
// Usage: node tests/bench/owner-density.mjs [owners]
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { Serve } from '../conformance/harness.js';
import { descendants, isStripperRange, NODE } from './lib.mjs';

const owners = Number(process.argv[2] ?? 100);
const MIB = 1024;

function pssKiB(pid) {
  try {
    return Number(/^Pss:\s+(\d+)/m.exec(readFileSync(`/proc/${pid}/smaps_rollup`, 'utf8'))[1]);
  } catch {
    return 0; // gone meanwhile
  }
}

async function ownersPss(runtime, program = 'var x = 1; x') {
  const serve = new Serve({ mode: 'workspace-write', runtime });
  for (let i = 0; i < owners; i++) {
    const r = await serve.run(`r${i}`, program, { stateOwner: `o${i}` });
    if (!r.ok) throw new Error(JSON.stringify(r));
  }
  const sum = (pids) => pids.reduce((total, pid) => total + pssKiB(pid), 0);
  const all = sum(descendants(serve.child.pid));
  const ownersKiB = sum(descendants(serve.child.pid, isStripperRange));
  await serve.close();
  stripperMiB = (all - ownersKiB) / MIB;
  return ownersKiB / owners / MIB;
}

async function bareNodesPss() {
  const children = [];
  for (let i = 0; i < owners; i++) {
    const child = spawn(NODE, ['-e', 'setInterval(() => {}, 1 << 30); process.stdout.write("up")'], { stdio: ['ignore', 'pipe', 'inherit'] });
    await new Promise((resolve) => child.stdout.once('data', resolve));
    children.push(child);
  }
  const total = children.reduce((sum, child) => sum + pssKiB(child.pid), 0);
  for (const child of children) child.kill();
  return total / owners / MIB;
}

let stripperMiB = 0; // the session's stripper in the last ownersPss
const bare = await bareNodesPss();
const scoped = await ownersPss({ executionMode: 'persistent-in-memory' });
const vmScript = await ownersPss({ executionMode: 'vm-script', scriptPersistence: true });
const typed = await ownersPss({ executionMode: 'persistent-in-memory' }, 'const o = {a: 1}; o');
console.log(`owner-density: ${owners} idle owners in one dsh, workspace-write`);
console.log(`  idle bare node: ${bare.toFixed(2)} MiB PSS each`);
console.log(`  scoped REPL owner: ${scoped.toFixed(2)} MiB PSS (${(scoped / bare).toFixed(2)}x a bare node)`);
console.log(`  vm-script owner: ${vmScript.toFixed(2)} MiB PSS (${(vmScript / bare).toFixed(2)}x a bare node)`);
console.log(`  scoped REPL owner of a program with a colon: ${typed.toFixed(2)} MiB PSS (${(typed / bare).toFixed(2)}x a bare node)`);
console.log(`  the session's type stripper: ${stripperMiB.toFixed(2)} MiB PSS (shared by the session's owners)`);
console.log(`SUMMARY owner-density: scoped REPL ${scoped.toFixed(2)} MiB, vm-script ${vmScript.toFixed(2)} MiB per idle owner (${owners} owners; ${typed.toFixed(2)} MiB scoped after a program with a colon), bare node ${bare.toFixed(2)} MiB, ratio ${(scoped / bare).toFixed(3)}x`);
