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

// How deep the pinned Node's own JSON.stringify(JSON.parse(text)) goes in this process.
function nodeRoundTripDepth() {
  let lo = 1, hi = 20000;
  while (lo < hi) {
    const mid = (lo + hi + 1) >> 1;
    try {
      JSON.stringify(JSON.parse('['.repeat(mid) + ']'.repeat(mid)));
      lo = mid;
    } catch {
      hi = mid - 1;
    }
  }
  return lo;
}

for (const depth of [40, 1000, nodeRoundTripDepth()]) {
  test(`a ${depth}-level value crosses --serve both ways as this Node's JSON gives it`, async () => {
    const text = '{"a":'.repeat(depth - 1) + '[-0,1.50,"x"]' + '}'.repeat(depth - 1);
    const expected = JSON.parse(text);
    const s = new Serve();
    s.send({ type: 'run', id: 'deep', bindings: h, program: 'const v = await h.f(); return [JSON.stringify(v), await h.f(v)]' });
    const c1 = await s.next((e) => e.type === 'call' && e.run === 'deep');
    s.child.stdin.write(`{"type":"reply","run":"deep","call":${c1.call},"ok":true,"value":${text}}\n`);
    const c2 = await s.next((e) => e.type === 'call' && e.run === 'deep');
    assert.deepEqual(c2.args[0], expected, 'the program sent back the value it received');
    s.send({ type: 'reply', run: 'deep', call: c2.call, ok: true, value: 0 });
    const r = await s.result('deep');
    assert.equal(r.ok, true, JSON.stringify(r.error));
    assert.equal(r.value[0], JSON.stringify(expected));
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
