// Host peak RSS (VmHWM of dsh) for the three program inputs of the JSON budgets rule
// (host-abi/ABI.md, "Values"): a 10 MB result value of empty arrays, a 3 MB call argument (the child exhausts its JS heap encoding 15 MB of empty arrays), and a
// raw 30 MB frame written on fd 3 by a range limited to 256 MiB. Each runs in a fresh
// `dsh headless --serve`; the figure is read from /proc once the run's result arrived.
//   node tests/bench/host-rss.mjs [DSH] [PROVIDER.so]   (defaults: build/examples/host/dsh, its own provider)
import { spawn } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { createInterface } from 'node:readline';
import { join } from 'node:path';
import { DSH, tempDir } from '../conformance/harness.js';

const dsh = process.argv[2] ?? DSH;
const provider = process.argv[3];
const MiB = 1024 * 1024;

function serve(runtime) {
  const ws = tempDir('dsh-rss-ws-');
  const patch = join(tempDir('dsh-rss-patch-'), 'patch.yaml');
  writeFileSync(patch, [
    '- id: sandbox-policy',
    `  config: ${JSON.stringify({ mode: 'workspace-write', workspaceRoot: ws })}`,
    '- id: ptc-runtime',
    ...(provider ? [`  path: ${JSON.stringify(provider)}`] : []),
    `  config: ${JSON.stringify(runtime)}`,
  ].join('\n') + '\n');
  const child = spawn(dsh, ['headless', '--patch', patch, '--serve'], { cwd: ws, stdio: ['pipe', 'pipe', 'inherit'] });
  const events = [];
  let wake = () => {};
  createInterface({ input: child.stdout }).on('line', (line) => {
    events.push(line);
    wake();
  });
  const next = async (pred) => {
    for (;;) {
      const i = events.findIndex(pred);
      if (i >= 0) return events.splice(i, 1)[0];
      await new Promise((r) => (wake = r));
    }
  };
  const hwm = () => Number(/VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${child.pid}/status`, 'utf8'))[1]) * 1024;
  return { child, next, hwm, send: (o) => child.stdin.write(JSON.stringify(o) + '\n') };
}

async function measure(name, n, runtime, drive) {
  const s = serve(runtime);
  await drive(s);
  const rss = s.hwm();
  s.child.stdin.end();
  s.child.kill('SIGTERM');
  console.log(`${name}: N ${(n / MiB).toFixed(1)} MiB, dsh peak RSS ${(rss / MiB).toFixed(1)} MiB ` +
    `(${(rss / n).toFixed(1)}x N; target 2N + 16 MiB = ${((2 * n + 16 * MiB) / MiB).toFixed(1)} MiB)`);
}

const isResult = (id) => (l) => l.startsWith('{"type":"result"') && l.includes(`"id":"${id}"`);
await measure('result value', 3 * 3.3e6 + 1, {}, async (s) => {
  s.send({ type: 'run', id: 'v', program: 'return JSON.parse("[" + "[],".repeat(3.3e6) + "[]]")' });
  await s.next(isResult('v'));
});
await measure('call argument', 3 * 1e6 + 3, {}, async (s) => {
  s.send({ type: 'run', id: 'a', bindings: [{ global: 'h', functions: ['f'] }], program: 'return await h.f(JSON.parse("[" + "[],".repeat(1e6) + "[]]"))' });
  const call = JSON.parse(await s.next((l) => l.startsWith('{"type":"call"')));
  s.send({ type: 'reply', run: 'a', call: call.call, ok: true, value: 1 });
  await s.next(isResult('a'));
});
await measure('raw fd-3 frame', 3 * 1e7 + 24, { maxMemoryMb: 256 }, async (s) => {
  s.send({ type: 'run', id: 'r', program: 'const fs = await import("node:fs"); fs.writeSync(3, \'{"type":"text","junk":[\' + "[],".repeat(1e7) + \'[]]}\\n\'); await new Promise(() => {})' });
  await s.next(isResult('r'));
});
