// Untrusted JSON is parsed with budgets (host-abi/ABI.md, "Values"): the host passes a program's
// values, arguments and frames on as validated text, so its peak RSS for a frame of N bytes stays
// within 2N + 16 MiB; values nest as deep as the pinned Node's own JSON round trip goes, and
// numbers keep their text (-0 included). Differential: expectations come from this Node's JSON.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { Serve } from './harness.js';

const MiB = 1024 * 1024;
const peakRss = (pid) => Number(/VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))[1]) * 1024;
const h = [{ global: 'h', functions: ['f'] }];

test('a 10 MB value of empty arrays keeps the host within 2N + 16 MiB', async () => {
  const s = new Serve();
  const r = await s.run('big', 'return JSON.parse("[" + "[],".repeat(3.3e6) + "[]]")');
  assert.equal(r.ok, true, JSON.stringify(r.error));
  assert.equal(r.value.length, 3.3e6 + 1);
  const n = 3 * 3.3e6 + 1;
  const rss = peakRss(s.child.pid);
  // The result is handed to dsh's stdout queue without a copy (ABI 1.5 on_done_owned), so the
  // client reading this 9.4 MiB line slowly costs nothing more.
  assert.ok(rss <= 2 * n + 16 * MiB, `dsh peaked at ${(rss / MiB).toFixed(1)} MiB for a ${(n / MiB).toFixed(1)} MiB value`);
  await s.close();
});

test('a 3 MB call argument keeps the host within 2N + 16 MiB and reaches the client whole', async () => {
  const s = new Serve();
  s.send({ type: 'run', id: 'arg', bindings: h, program: 'return await h.f(JSON.parse("[" + "[],".repeat(1e6) + "[]]"))' });
  const c = await s.next((e) => e.type === 'call' && e.run === 'arg');
  assert.equal(c.args[0].length, 1e6 + 1);
  s.send({ type: 'reply', run: 'arg', call: c.call, ok: true, value: 1 });
  assert.equal((await s.result('arg')).value, 1);
  const n = 3 * 1e6 + 3;
  const rss = peakRss(s.child.pid);
  assert.ok(rss <= 2 * n + 16 * MiB, `dsh peaked at ${(rss / MiB).toFixed(1)} MiB for a ${(n / MiB).toFixed(1)} MiB argument`);
  await s.close();
});

test('a raw 30 MB frame on fd 3 from a range limited to 256 MiB fails the run; the host stays within 2N + 16 MiB', async () => {
  const s = new Serve({ runtime: { maxMemoryMb: 256 } });
  const n = 3 * 1e7 + 24;
  const r = await s.run('raw', `const fs = await import("node:fs");
    fs.writeSync(3, '{"type":"text","junk":[' + "[],".repeat(1e7) + '[]]}\\n');
    await new Promise(() => {});`);
  assert.equal(r.ok, false);
  assert.equal(r.error.kind, 'protocol', JSON.stringify(r.error));
  const rss = peakRss(s.child.pid);
  assert.ok(rss <= 2 * n + 16 * MiB, `dsh peaked at ${(rss / MiB).toFixed(1)} MiB for a ${(n / MiB).toFixed(1)} MiB frame`);
  await s.close();
});

// Deep equality without recursion (assert.deepEqual recurses per level).
function sameValue(a, b) {
  const pending = [[a, b]];
  while (pending.length) {
    const [x, y] = pending.pop();
    if (x === null || y === null || typeof x !== 'object' || typeof y !== 'object') {
      if (!Object.is(x, y)) return false;
      continue;
    }
    if (Array.isArray(x) !== Array.isArray(y)) return false;
    const kx = Object.keys(x), ky = Object.keys(y);
    if (kx.length !== ky.length || kx.some((k, i) => k !== ky[i])) return false;
    for (const k of kx) pending.push([x[k], y[k]]);
  }
  return true;
}

// The value's shape at a given depth: objects around an array of assorted leaves.
const shaped = (depth) => '{"a":'.repeat(depth - 1) + '[0,1.50,"x",{"k\\u0000":null}]' + '}'.repeat(depth - 1);
// In the program: the deepest such value its own JSON.stringify(JSON.parse(text)) round-trips,
// measured where it will stringify the value it receives (0 when a fixed depth is asked).
const probe = `const shaped = ${shaped.toString()};
  const roundTrips = (m) => { try { JSON.stringify(JSON.parse(shaped(m))); return true } catch { return false } };
  let lo = 1, hi = 20000;
  while (lo < hi) { const mid = (lo + hi + 1) >> 1; if (roundTrips(mid)) lo = mid; else hi = mid - 1 }`;

for (const fixed of [40, 1000, 0]) {
  test(`a ${fixed || "child's own JSON round-trip"}-level value crosses --serve both ways as this Node's JSON gives it`, async () => {
    const s = new Serve();
    s.send({ type: 'run', id: 'deep', bindings: h,
      // The probe runs where a reply resumes the program, as the stringify of the value does.
      program: `await h.f(); ${probe}; const v = await h.f(lo); return [JSON.stringify(v), await h.f(v)]` });
    const c0 = await s.next((e) => e.type === 'call' && e.run === 'deep');
    s.send({ type: 'reply', run: 'deep', call: c0.call, ok: true, value: 0 });
    const c1 = await s.next((e) => e.type === 'call' && e.run === 'deep');
    const depth = fixed || c1.args[0];
    if (!fixed) assert.ok(depth >= 1000, `the child round-trips only ${depth} levels`);
    const text = shaped(depth);
    const expected = JSON.parse(text);
    s.child.stdin.write(`{"type":"reply","run":"deep","call":${c1.call},"ok":true,"value":${text}}\n`);
    const c2 = await s.next((e) => e.type === 'call' && e.run === 'deep');
    assert.ok(sameValue(c2.args[0], expected), 'the program sent back the value it received');
    s.send({ type: 'reply', run: 'deep', call: c2.call, ok: true, value: 0 });
    const r = await s.result('deep');
    assert.equal(r.ok, true, JSON.stringify(r.error));
    assert.ok(sameValue(JSON.parse(r.value[0]), expected), "the program's own JSON.stringify gave the value");
    await s.close();
  });
}

test('-0 in a --serve reply reaches the program as JSON.parse gives it', async () => {
  const s = new Serve();
  s.send({ type: 'run', id: 'z', bindings: h, program: 'const v = await h.f(); return v.map((x) => Object.is(x, -0))' });
  const c = await s.next((e) => e.type === 'call' && e.run === 'z');
  const text = '[-0,-0.0,0,-0e5]';
  s.child.stdin.write(`{"type":"reply","run":"z","call":${c.call},"ok":true,"value":${text}}\n`);
  const r = await s.result('z');
  assert.equal(r.ok, true, JSON.stringify(r.error));
  assert.deepEqual(r.value, JSON.parse(text).map((x) => Object.is(x, -0)));
  await s.close();
});
