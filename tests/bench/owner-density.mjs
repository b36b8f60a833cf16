// Owner density: the proportional set size (PSS, /proc/PID/smaps_rollup) an idle retained owner
// costs, with N owners alive at once in one `dsh headless --serve` (each ran `var x = 1; x` and
// idles), for the scoped REPL and for vm-script (`scriptPersistence`), against N idle bare pinned
// Node processes (`node -e` with a pending timer) measured in the same run. Then scoped-REPL owners
// that ran a program that may have types (`const o = {a: 1}; o`, stripped by the session's type
// stripper). The stripper, one per session and started at load, is no owner's: its range is left
// out of the owners' figures and its PSS printed on its own. PSS divides shared pages
// among the processes that map them, so the figure is what one more owner adds at that density.
// Each figure is taken twice: right after the last owner's run, and once every process has idled
// SETTLE_MS more, past the memory-reducing collection V8 runs about 8 s after a process starts
// (`Memory reducer` under --trace-gc; bootstrap/README.md).
// Usage: node tests/bench/owner-density.mjs [owners]
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { Serve } from '../conformance/harness.js';
import { descendants, isStripperRange, NODE } from './lib.mjs';

const owners = Number(process.argv[2] ?? 100);
const MIB = 1024;
const SETTLE_MS = 10_000;
const settle = () => new Promise((resolve) => setTimeout(resolve, SETTLE_MS));

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
  const measure = () => {
    const all = sum(descendants(serve.child.pid));
    const ownersKiB = sum(descendants(serve.child.pid, isStripperRange));
    stripperMiB = (all - ownersKiB) / MIB;
    return ownersKiB / owners / MIB;
  };
  const now = measure();
  await settle();
  const settled = measure();
  await serve.close();
  return { now, settled };
}

async function bareNodesPss() {
  const children = [];
  for (let i = 0; i < owners; i++) {
    const child = spawn(NODE, ['-e', 'setInterval(() => {}, 1 << 30); process.stdout.write("up")'], { stdio: ['ignore', 'pipe', 'inherit'] });
    await new Promise((resolve) => child.stdout.once('data', resolve));
    children.push(child);
  }
  const measure = () => children.reduce((sum, child) => sum + pssKiB(child.pid), 0) / owners / MIB;
  const now = measure();
  await settle();
  const settled = measure();
  for (const child of children) child.kill();
  return { now, settled };
}

let stripperMiB = 0; // the session's stripper in the last ownersPss
const bare = await bareNodesPss();
const scoped = await ownersPss({ executionMode: 'persistent-in-memory' });
const vmScript = await ownersPss({ executionMode: 'vm-script', scriptPersistence: true });
const typed = await ownersPss({ executionMode: 'persistent-in-memory' }, 'const o = {a: 1}; o');
const row = (figure) => `${figure.now.toFixed(2)} MiB PSS, ${figure.settled.toFixed(2)} MiB after ${SETTLE_MS / 1000} s more`;
const ratio = (figure, when) => `${(figure[when] / bare[when]).toFixed(2)}x`;
console.log(`owner-density: ${owners} idle owners in one dsh, workspace-write; each figure right after the last run, then after ${SETTLE_MS / 1000} s more`);
console.log(`  idle bare node: ${row(bare)}`);
console.log(`  scoped REPL owner: ${row(scoped)} (${ratio(scoped, 'now')}, ${ratio(scoped, 'settled')} a bare node)`);
console.log(`  vm-script owner: ${row(vmScript)} (${ratio(vmScript, 'now')}, ${ratio(vmScript, 'settled')} a bare node)`);
console.log(`  scoped REPL owner of a program with a colon: ${row(typed)} (${ratio(typed, 'now')}, ${ratio(typed, 'settled')} a bare node)`);
console.log(`  the session's type stripper: ${stripperMiB.toFixed(2)} MiB PSS (shared by the session's owners)`);
console.log(`SUMMARY owner-density: scoped REPL ${scoped.now.toFixed(2)} MiB (${scoped.settled.toFixed(2)} settled), vm-script ${vmScript.now.toFixed(2)} MiB (${vmScript.settled.toFixed(2)} settled) per idle owner (${owners} owners; ${typed.now.toFixed(2)} MiB scoped after a program with a colon), bare node ${bare.now.toFixed(2)} MiB (${bare.settled.toFixed(2)} settled), ratio ${(scoped.now / bare.now).toFixed(3)}x`);
