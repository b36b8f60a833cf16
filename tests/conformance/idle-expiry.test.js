// Idle expiry of retained environments (the runtime row's idleReleaseMs and maxRetainedOwners),
// through `dsh headless --serve`: an idle owner's process range is gone, a long run is never
// expired, the least recently used idle owner makes room, the next run is told why; and the
// controls with both off. No upper bound on time: each case waits for the effect itself.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Serve } from './harness.js';

// Both retaining modes behave alike; vm-script keeps the programs short. No prewarmed process, so
// every process below dsh belongs to a retained environment, but the session's type stripper
// (plugin/env/stripper.c, started at load): its range (the supervisor's command line names
// stripper.js) lives until unload, so it is left out.
const SCRIPT = { executionMode: 'vm-script', scriptPersistence: true, prewarmProcesses: 0 };

const isStripperRange = (pid) => {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes('/stripper.js');
  } catch {
    return false;
  }
};

// Every process below pid but a stripper's range, with its start time (so a reused pid is not
// mistaken for it).
function descendants(pid) {
  const parent = new Map();
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const stat = readFileSync(`/proc/${name}/stat`, 'utf8');
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      parent.set(Number(name), { ppid: Number(fields[1]), start: fields[19] });
    } catch {
      // it ended while we looked
    }
  }
  const out = [];
  const walk = (p) => {
    for (const [child, info] of parent) if (info.ppid === p && !isStripperRange(child)) {
      out.push({ pid: child, start: info.start });
      walk(child);
    }
  };
  walk(pid);
  return out;
}

function alive({ pid, start }) {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19] === start;
  } catch {
    return false;
  }
}

const key = ({ pid, start }) => `${pid}/${start}`;
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

async function gone(processes) {
  while (processes.some(alive)) await sleep(10);
}

// Runs program for owner and returns its result with the processes its run added below dsh.
async function runNew(s, id, program, owner) {
  const before = new Set(descendants(s.child.pid).map(key));
  const result = await s.run(id, program, { stateOwner: owner });
  const added = descendants(s.child.pid).filter((p) => !before.has(key(p)));
  return { result, added };
}

test('an owner idle past idleReleaseMs is released: its processes end, the next run is fresh and told why', async () => {
  const s = new Serve({ runtime: { ...SCRIPT, idleReleaseMs: 100 } });
  const { result, added } = await runNew(s, '1', 'var n = 41; n', 'o');
  assert.equal(result.value, 41, JSON.stringify(result));
  assert.ok(added.length > 0, 'the owner has processes');
  await gone(added);
  const r = await s.run('2', 'typeof n', { stateOwner: 'o' });
  assert.equal(r.value, 'undefined', JSON.stringify(r));
  assert.equal(r.retained.state, 'preserved');
  assert.deepEqual(r.retained.released, {
    reason: 'idleReleaseMs',
    message: 'the earlier environment of state owner "o" was released after 100 ms without a run (idleReleaseMs); ' +
      'this run started in a fresh one, so earlier variables are gone',
  });
  // Told once: the next run (before another idle period ends, or after it: a new notice then)
  // either finds its environment or is told again, never silently fresh.
  const again = await s.run('3', 'typeof n', { stateOwner: 'o' });
  assert.equal(again.value, 'undefined');
  // A release of an expired owner completes at once.
  s.send({ type: 'release', id: 'x', stateOwner: 'o' });
  await s.next((e) => e.type === 'released' && e.id === 'x');
  await s.close();
});

test('a run longer than idleReleaseMs is not expired; idle after it ends, the owner is released', async () => {
  const s = new Serve({ runtime: { ...SCRIPT, idleReleaseMs: 100 } });
  const { added } = await runNew(s, '1', 'var n = 41; n', 'o');
  // The run waits for the test's go, which comes after many idle periods have passed.
  s.send({
    type: 'run', id: 'long', stateOwner: 'o', timeoutMs: null,
    program: 'var fs = await import("node:fs"); fs.writeFileSync("started", ""); ' +
      'while (!fs.existsSync("go")) await new Promise(r => setTimeout(r, 10)); n + 1',
  });
  while (!readdirSync(s.ws).includes('started')) await sleep(10);
  await sleep(1000);
  assert.ok(added.every(alive), 'a process of the running owner ended');
  writeFileSync(join(s.ws, 'go'), '');
  const r = await s.result('long');
  assert.equal(r.value, 42, JSON.stringify(r));
  assert.equal(r.retained.released, undefined);
  // The control: the same owner, idle after its run, goes.
  await gone(added);
  await s.close();
});

test('maxRetainedOwners: 2 and three owners: the least recently used idle one goes, the others keep their variables', async () => {
  const s = new Serve({ runtime: { ...SCRIPT, maxRetainedOwners: 2 } });
  const a = await runNew(s, 'a1', 'var who = "a"; who', 'a');
  const b = await runNew(s, 'b1', 'var who = "b"; who', 'b');
  assert.equal((await s.run('a2', 'who', { stateOwner: 'a' })).value, 'a'); // b is now the least recently used
  const c = await runNew(s, 'c1', 'var who = "c"; who', 'c');
  assert.ok(a.added.length && b.added.length && c.added.length, 'each owner has processes');
  assert.equal(c.result.value, 'c');
  assert.equal(c.result.retained.released, undefined);
  await gone(b.added);
  assert.ok(a.added.every(alive) && c.added.every(alive), 'a or c lost a process');
  assert.equal((await s.run('a3', 'who', { stateOwner: 'a' })).value, 'a');
  assert.equal((await s.run('c2', 'who', { stateOwner: 'c' })).value, 'c'); // a is now the least recently used
  const r = await s.run('b2', 'typeof who', { stateOwner: 'b' });
  assert.equal(r.value, 'undefined', JSON.stringify(r));
  assert.equal(r.retained.released.reason, 'maxRetainedOwners');
  assert.match(r.retained.released.message, /^the earlier environment of state owner "b" was released as the least recently used one/);
  await gone(a.added);
  assert.equal((await s.run('c3', 'who', { stateOwner: 'c' })).value, 'c');
  await s.close();
});

test('controls: without idleReleaseMs and maxRetainedOwners idle owners keep their processes and variables', async () => {
  const s = new Serve({ runtime: SCRIPT });
  const owners = ['a', 'b', 'c'];
  const added = [];
  for (const o of owners) added.push(...(await runNew(s, `${o}1`, `var who = "${o}"; who`, o)).added);
  assert.ok(added.length > 0);
  await sleep(500);
  assert.ok(added.every(alive), 'an idle owner lost a process');
  for (const o of owners) {
    const r = await s.run(`${o}2`, 'who', { stateOwner: o });
    assert.equal(r.value, o);
    assert.equal(r.retained.released, undefined);
  }
  await s.close();
});
