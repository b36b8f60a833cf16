// The network allow-list's cost: a 100 MiB HTTPS download and the first-byte latency of a small
// HTTPS request (a new connection each, the name resolved each time), timed inside the program,
// through the egress proxy (`read-only`, `network.mode: allow-list`) against the same request
// unconfined (`danger-full-access`), interleaved in the same run. A TLS server of this script on
// 127.0.0.1 with a CA made here (no internet). Needs root and openssl.
// Usage: node tests/bench/network-allow.mjs [pairs]
import { execFile, execFileSync } from 'node:child_process';
import fs from 'node:fs';
import https from 'node:https';
import os from 'node:os';
import path from 'node:path';
import { ROOT } from '../conformance/harness.js';
import { median, report } from './lib.mjs';

const runs = Number(process.argv[2] ?? 5);
if (process.getuid() !== 0) {
  console.log('SUMMARY network-allow: skipped (the network allow-list needs a root host)');
  process.exit(0);
}
const dsh = path.join(ROOT, 'build/examples/host/dsh');
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'dsh-net-bench-'));
const ws = path.join(tmp, 'ws');
fs.mkdirSync(ws);
process.on('exit', () => fs.rmSync(tmp, { recursive: true, force: true }));
const ossl = (...a) => execFileSync('openssl', a, { cwd: tmp, stdio: 'ignore' });
ossl('req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', 'ca.key', '-out', 'ca.pem', '-days', '1', '-subj', '/CN=bench CA');
ossl('req', '-newkey', 'rsa:2048', '-nodes', '-keyout', 's.key', '-out', 's.csr', '-subj', '/CN=allowed.test');
fs.writeFileSync(path.join(tmp, 'ext'), 'subjectAltName=DNS:allowed.test,DNS:localhost\n');
ossl('x509', '-req', '-in', 's.csr', '-CA', 'ca.pem', '-CAkey', 'ca.key', '-CAcreateserial', '-out', 's.pem', '-days', '1', '-extfile', 'ext');
fs.copyFileSync(path.join(tmp, 'ca.pem'), path.join(ws, 'ca.pem'));

const MiB = 1 << 20, chunk = Buffer.alloc(MiB, 0x61);
const server = https.createServer({ key: fs.readFileSync(path.join(tmp, 's.key')), cert: fs.readFileSync(path.join(tmp, 's.pem')) }, (req, res) => {
  if (req.url !== '/big') return res.end('ok');
  res.writeHead(200, { 'content-length': 100 * MiB });
  let sent = 0;
  const more = () => {
    while (sent < 100 && res.write(chunk)) sent++;
    if (sent < 100) res.once('drain', () => (sent++, more()));
    else res.end();
  };
  more();
});
await new Promise((r) => server.listen(0, '127.0.0.1', r));
const P = server.address().port;

const TRUST = `const tls = await import('node:tls'); const fs = await import('node:fs'); const https = await import('node:https');
tls.setDefaultCACertificates([...tls.getCACertificates('default'), fs.readFileSync('ca.pem', 'utf8')]);
`;
const download = (host) => TRUST + `const t0 = performance.now(); const r = await fetch('https://${host}:${P}/big');
let n = 0; for await (const c of r.body) n += c.length; return { ms: performance.now() - t0, n };`;
const firstByte = (host) => TRUST + `const ms = [];
for (let i = 0; i < 20; i++) { const t0 = performance.now();
  await new Promise((res, rej) => https.get({ host: '${host}', port: ${P}, path: '/', agent: false }, (r) => { r.once('data', () => { ms.push(performance.now() - t0); r.resume(); r.on('end', res); }); }).on('error', rej)); }
ms.sort((a, b) => a - b); return { ms: ms[10] };`;

function run(sandboxed, body) {
  const file = path.join(tmp, 'p.ts');
  fs.writeFileSync(file, body);
  const yaml = sandboxed
    ? `- id: sandbox-policy\n  config:\n    mode: read-only\n    network: {mode: allow-list, allow: ["allowed.test:${P}"], resolverOverride: [allowed.test]}\n`
    : `- id: sandbox-policy\n  config:\n    mode: danger-full-access\n`;
  fs.writeFileSync(path.join(tmp, 'p.yaml'), yaml);
  // Asynchronously: the server lives in this process and must answer meanwhile.
  return new Promise((resolve, reject) =>
    execFile(dsh, ['headless', '--json', '--patch', path.join(tmp, 'p.yaml'), '--program', file], { cwd: ws, maxBuffer: 1 << 24 }, (e, out) => {
      const r = JSON.parse(out);
      if (!r.ok) return reject(new Error(out));
      resolve(r.value);
    }),
  );
}

async function measure(name, body, unit) {
  const out = { subject: [], baseline: [], ratios: [] };
  await run(true, body('allowed.test'));
  await run(false, body('localhost'));
  for (let i = 0; i < runs; i++) {
    const s = (await run(true, body('allowed.test'))).ms;
    const b = (await run(false, body('localhost'))).ms;
    out.subject.push(s);
    out.baseline.push(b);
    out.ratios.push(s / b);
  }
  report(name, 'through the egress proxy', 'unconfined', out, unit, unit === 'ms' ? 2 : 1);
  return out;
}

const d = await measure('network-allow-download-100MiB', download, 'ms');
console.log(`  throughput: ${(100 / (median(d.subject) / 1000)).toFixed(0)} MiB/s through the proxy, ${(100 / (median(d.baseline) / 1000)).toFixed(0)} MiB/s unconfined`);
await measure('network-allow-first-byte', firstByte, 'ms');
server.close();

