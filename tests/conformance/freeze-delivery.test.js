// Freeze, then deliver: a temporary run's result is delivered once nothing of its range can run,
// and what the range wrote before it stood still is in the result.
import test from 'node:test';
import assert from 'node:assert/strict';
import { statSync } from 'node:fs';
import { join } from 'node:path';
import { Serve, text } from './harness.js';

// A descendant that ignores SIGTERM and appends to a workspace file for as long as it runs; the
// program returns once the file has begun to grow.
const APPENDER = `
const { spawn } = await import("node:child_process");
const fs = await import("node:fs");
spawn("/bin/sh", ["-c", "trap '' TERM; while :; do printf x >> grow.txt; done"], { stdio: "ignore", detached: true }).unref();
while (!fs.existsSync("grow.txt") || fs.statSync("grow.txt").size === 0) await new Promise((r) => setTimeout(r, 5));
return "appending";
`;

const sizeOf = (file) => statSync(file).size;

async function waitForGrowth(file, beyond) {
  while (sizeOf(file) <= beyond) await new Promise((r) => setTimeout(r, 5));
}

test('a descendant appending to a workspace file stops growing it at delivery', async () => {
  const s = new Serve();
  const r = await s.run('grow', APPENDER);
  assert.equal(r.ok, true, JSON.stringify(r));
  assert.equal(r.value, 'appending');
  const file = join(s.ws, 'grow.txt');
  const atDelivery = sizeOf(file);
  // Barrier: dsh exits only after every range it started is gone.
  await s.close();
  assert.equal(sizeOf(file), atDelivery);
});

test('control: with a freeze that stops nothing and delivery at once, the file grows after delivery', async () => {
  // Fault-injection double of the subprocess service: freeze() reports the range frozen without
  // stopping it, and the terminated range is killed only 3 s after SIGTERM (which the descendant
  // ignores). The test above must see this fault; this one shows it does.
  const s = new Serve({ rows: [{ id: 'subprocess', config: { faultFreezeSkippedMs: 3000 } }] });
  const r = await s.run('grow', APPENDER);
  assert.equal(r.ok, true, JSON.stringify(r));
  const file = join(s.ws, 'grow.txt');
  const atDelivery = sizeOf(file);
  await waitForGrowth(file, atDelivery);
  assert.ok(sizeOf(file) > atDelivery);
  await s.close();
});

test('raw output the program wrote just before its result is delivered in full', async () => {
  // More than a pipe holds: the tail of it is still in the pipe when the range is frozen.
  const s = new Serve();
  const r = await s.run('out', `
const fs = await import("node:fs");
// fd 1 and 2 are non-blocking pipes: wait for the host to read when they are full.
async function writeAll(fd, text) {
  let rest = Buffer.from(text);
  while (rest.length) {
    try {
      rest = rest.subarray(fs.writeSync(fd, rest));
    } catch (e) {
      if (e.code !== "EAGAIN") throw e;
      await new Promise((r) => setTimeout(r, 1));
    }
  }
}
for (let i = 0; i < 64; i++) await writeAll(1, String(i % 10).repeat(4095) + "\\n");
await writeAll(2, "last line on stderr\\n");
return "written";
`);
  assert.equal(r.ok, true, JSON.stringify(r));
  const out = text(r);
  const expected = Array.from({ length: 64 }, (_, i) => String(i % 10).repeat(4095) + '\n').join('');
  assert.equal(out.length, expected.length + 'last line on stderr\n'.length);
  assert.ok(out.includes('last line on stderr\n'));
  assert.equal(out.replace('last line on stderr\n', ''), expected);
  await s.close();
});
