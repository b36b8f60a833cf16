// The network allow-list end to end (examples/providers/README.md, "Network allow-list"): real
// dsh runs under `read-only` with `network.mode: allow-list`, against TLS, HTTP and TCP servers of
// this test on 127.0.0.1 with a CA made here, reached through the test-only resolverOverride. No
// internet. Every refusal has a control: the same request succeeds when the policy permits it.
//   node network_allow.mjs DSH [PYTHON_PROFILE]
import assert from 'node:assert/strict';
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import dgram from 'node:dgram';
import fs from 'node:fs';
import http from 'node:http';
import https from 'node:https';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';

const [dsh, pythonProfile] = process.argv.slice(2);
if (process.getuid() !== 0) {
  console.log('SKIP: the network allow-list needs a root host');
  process.exit(77);
}
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'dsh-net-'));
const ws = path.join(tmp, 'ws');
fs.mkdirSync(ws);
process.on('exit', () => fs.rmSync(tmp, { recursive: true, force: true }));

// ---- a test CA and a server certificate for every test name -----------------------------------
const names = ['allowed.test', 'other.test', 'evil.test', 'api.wild.test', 'blocked.wild.test', 'localhost'];
const ossl = (...args) => execFileSync('openssl', args, { cwd: tmp, stdio: ['ignore', 'ignore', 'pipe'] });
ossl('req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', 'ca.key', '-out', 'ca.pem', '-days', '1', '-subj', '/CN=dsh test CA');
ossl('req', '-newkey', 'rsa:2048', '-nodes', '-keyout', 'srv.key', '-out', 'srv.csr', '-subj', '/CN=allowed.test');
fs.writeFileSync(path.join(tmp, 'ext'), `subjectAltName=${names.map((n) => 'DNS:' + n).join(',')}\n`);
ossl('x509', '-req', '-in', 'srv.csr', '-CA', 'ca.pem', '-CAkey', 'ca.key', '-CAcreateserial', '-out', 'srv.pem', '-days', '1', '-extfile', 'ext');
fs.copyFileSync(path.join(tmp, 'ca.pem'), path.join(ws, 'ca.pem'));

// ---- servers ---------------------------------------------------------------------------------
let tlsAccepted = 0;
const handler = (req, res) => {
  const u = new URL(req.url, 'http://x');
  if (u.pathname === '/proxy-status') {
    // Asked while the run's egress proxy lives: its own confinement (Landlock sets no_new_privs).
    const proxies = fs.readdirSync('/proc').filter((p) => /^[0-9]+$/.test(p)).filter((p) => {
      try {
        return fs.readFileSync(`/proc/${p}/cmdline`, 'utf8').split('\0')[0].endsWith('/dsh-egress-proxy');
      } catch {
        return false;
      }
    });
    const status = proxies.map((p) => {
      const text = fs.readFileSync(`/proc/${p}/status`, 'utf8');
      return ['NoNewPrivs', 'CapPrm', 'CapEff', 'CapBnd', 'CapAmb'].map((k) => `${k} ${new RegExp(`${k}:\\s+(\\S+)`).exec(text)[1]}`).join(', ');
    });
    return res.end(JSON.stringify(status));
  }
  if (u.pathname === '/release-slow') releaseSlow();
  if (u.pathname === '/redirect') {
    res.writeHead(302, { location: u.searchParams.get('to') });
    return res.end();
  }
  res.end(`hello ${req.headers.host}`);
};
const tlsServer = https.createServer(
  { key: fs.readFileSync(path.join(tmp, 'srv.key')), cert: fs.readFileSync(path.join(tmp, 'srv.pem')) },
  handler,
);
tlsServer.on('connection', () => tlsAccepted++);
const httpServer = http.createServer(handler);
const echoServer = net.createServer((s) => s.pipe(s));
const listen = (srv) => new Promise((res) => srv.listen(0, '127.0.0.1', () => res(srv.address().port)));
const P = await listen(tlsServer);
const H = await listen(httpServer);
const R = await listen(echoServer);
const udp = dgram.createSocket('udp4');
const datagrams = [];
let onDatagram = null;
udp.on('message', (m) => {
  datagrams.push(String(m));
  if (onDatagram) onDatagram();
});
// A barrier: the test's own marker, sent after the program ended; loopback keeps their order.
const marked = () =>
  new Promise((res) => {
    onDatagram = () => datagrams.at(-1) === 'marker' && res(datagrams.splice(0).slice(0, -1));
    const s = dgram.createSocket('udp4');
    s.send('marker', U, '127.0.0.1', () => s.close());
  });
await new Promise((res) => udp.bind(0, '127.0.0.1', res));
const U = udp.address().port;

// ---- running programs --------------------------------------------------------------------------
function patch(network, mode = 'read-only') {
  const yaml = `- id: sandbox-policy\n  config:\n    mode: ${mode}\n    network: ${JSON.stringify(network)}\n`;
  const file = path.join(tmp, `patch-${Math.random().toString(36).slice(2)}.yaml`);
  fs.writeFileSync(file, yaml);
  return file;
}

// A Node program (the body of an async function) with the test CA trusted, catching its error.
const TRUST = `const tls = await import('node:tls'); const fs = await import('node:fs');
tls.setDefaultCACertificates([...tls.getCACertificates('default'), fs.readFileSync('ca.pem', 'utf8')]);
const fail = (e) => ({ error: String(e && e.cause ? e.cause.code + ' ' + e.cause.message : e && (e.code + ' ' + e.message)) });
`;

// wrap: the command and its arguments before dsh's (e.g. a private resolv.conf), or none.
function run(network, body, extra = [], mode = 'read-only', wrap = []) {
  return new Promise((resolve) => {
    const file = path.join(tmp, `prog-${Math.random().toString(36).slice(2)}.${extra.length ? 'py' : 'ts'}`);
    fs.writeFileSync(file, extra.length ? body : TRUST + body);
    const args = ['headless', '--json', ...extra, '--patch', patch(network, mode), '--program', file];
    const child = spawn(wrap.length ? wrap[0] : dsh, [...wrap.slice(1), ...(wrap.length ? [dsh] : []), ...args], {
      cwd: ws,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '', err = '';
    child.stdout.on('data', (d) => (out += d));
    child.stderr.on('data', (d) => (err += d));
    child.on('close', (code) => {
      let result;
      try {
        result = JSON.parse(out);
      } catch {
        assert.fail(`dsh exit ${code}, not JSON: ${out}\n${err}`);
      }
      resolve(result);
    });
  });
}

// One `dsh headless --serve` with the network patch (and more options): send a request, await the
// event answering an id, await a count of stderr lines matching a pattern, end the session.
function serve(network, extra = []) {
  const child = spawn(dsh, ['headless', '--patch', patch(network), ...extra, '--serve'], { cwd: ws, stdio: ['pipe', 'pipe', 'pipe'] });
  const events = [];
  let wake = () => {};
  let buffered = '', stderr = '';
  child.stderr.on('data', (d) => {
    stderr += d;
    process.stderr.write(d);
    wake();
  });
  const logged = async (pattern, count) => {
    while ((stderr.match(pattern) ?? []).length < count) await new Promise((r) => (wake = r));
  };
  child.stdout.on('data', (d) => {
    buffered += d;
    for (let nl; (nl = buffered.indexOf('\n')) >= 0; buffered = buffered.slice(nl + 1)) events.push(JSON.parse(buffered.slice(0, nl)));
    wake();
  });
  const answer = async (id) => {
    for (;;) {
      const ev = events.find((e) => e.id === id);
      if (ev) return ev;
      await new Promise((r) => (wake = r));
    }
  };
  const send = (req) => child.stdin.write(JSON.stringify(req) + '\n');
  const end = () => {
    child.stdin.end();
    return new Promise((r) => child.on('close', r));
  };
  return { send, answer, logged, end };
}

const base = { mode: 'allow-list', allow: [`allowed.test:${P}`], resolverOverride: ['allowed.test'] };
const FETCH = (url) => `try { const r = await fetch(${JSON.stringify(url)}); return await r.text(); } catch (e) { return fail(e); }`;
const conns = (r) => r.sandbox.network.connections;
let failures = 0;
async function check(name, fn) {
  try {
    await fn();
    console.log(`ok - ${name}`);
  } catch (e) {
    failures++;
    console.log(`not ok - ${name}\n${e.stack}`);
  }
}

function permitted(r, host, port) {
  assert.equal(r.ok, true, JSON.stringify(r));
  assert.equal(r.sandbox.denied, false, JSON.stringify(r.sandbox));
  assert.equal(r.sandbox.capabilities.network, 'allow-list');
  const c = conns(r).find((c) => c.host === host && c.port === port);
  assert.ok(c && c.verdict === 'allowed' && c.bytesReceived > 0, JSON.stringify(r.sandbox.network));
}

function refused(r, host, port, reason) {
  assert.equal(r.sandbox.denied, true, JSON.stringify(r.sandbox));
  const c = conns(r).find((c) => c.host === host && c.port === port);
  assert.ok(c && c.verdict === 'refused' && c.reason === reason, JSON.stringify(r.sandbox.network));
  assert.match(r.sandbox.network.diagnostic, new RegExp(`^the sandbox refused network access to .*${host.replace(/\./g, '\\.')}`));
}

await check('patterns are checked when dsh starts: a bad one, an unknown key, a bad mode', async () => {
  const start = (network) =>
    spawnSync(dsh, ['headless', '-e', 'return 1', '--patch', patch(network)], { cwd: ws, encoding: 'utf8' });
  let r = start({ mode: 'allow-list', allow: ['a.*.test'] });
  assert.equal(r.status, 2);
  assert.equal(r.stderr, 'dsh: cannot create the services: option network.allow: "a.*.test" is refused: ' +
    'a wildcard is only `*.` before a name\n');
  r = start({ mode: 'allow-list', deny: ['10.0.0.1'] });
  assert.equal(r.status, 2);
  assert.match(r.stderr, /option network\.deny: "10\.0\.0\.1" is refused: not a host name .*no IP literal/);
  r = start({ mode: 'allow-list', resolverOverride: ['*.test'] });
  assert.equal(r.status, 2);
  assert.match(r.stderr, /option network\.resolverOverride: "\*\.test" is refused: a plain host name is required here/);
  r = start({ mode: 'allow-list', allow: ['a.test'], bogus: 1 });
  assert.equal(r.status, 2);
  assert.match(r.stderr, /network\.bogus: unknown field/);
  r = start({ mode: 'everything' });
  assert.equal(r.status, 2);
  assert.match(r.stderr, /network\.mode/);
});

await check('a permitted name: Node fetch succeeds without proxy settings, and the result lists it', async () => {
  const r = await run(base, FETCH(`https://allowed.test:${P}/`));
  assert.equal(r.value, `hello allowed.test:${P}`);
  permitted(r, 'allowed.test', P);
});

await check('the egress proxy runs confined itself (no_new_privs, Landlock, no capability)', async () => {
  const r = await run(base, FETCH(`https://allowed.test:${P}/proxy-status`));
  const none = '0000000000000000';
  assert.deepEqual(JSON.parse(r.value), [`NoNewPrivs 1, CapPrm ${none}, CapEff ${none}, CapBnd ${none}, CapAmb ${none}`]);
});

await check('a name not on the list: ENOTFOUND, denied, named in the diagnostic (control: listed)', async () => {
  const r = await run(base, FETCH(`https://evil.test:${P}/`));
  assert.equal(r.value.error, 'ENOTFOUND getaddrinfo ENOTFOUND evil.test');
  refused(r, 'evil.test', 0, 'not on the allow-list');
  const control = await run(
    { ...base, allow: [`allowed.test:${P}`, `evil.test:${P}`], resolverOverride: ['allowed.test', 'evil.test'] },
    FETCH(`https://evil.test:${P}/`),
  );
  assert.equal(control.value, `hello evil.test:${P}`);
  permitted(control, 'evil.test', P);
});

await check('a deny match inside an allowed wildcard is refused (control: a sibling name)', async () => {
  const policy = {
    mode: 'allow-list',
    allow: [`*.wild.test:${P}`],
    deny: ['blocked.wild.test'],
    resolverOverride: ['api.wild.test', 'blocked.wild.test'],
  };
  const r = await run(policy, FETCH(`https://blocked.wild.test:${P}/`));
  assert.equal(r.value.error, 'ENOTFOUND getaddrinfo ENOTFOUND blocked.wild.test');
  refused(r, 'blocked.wild.test', 0, 'matches a deny pattern');
  const control = await run(policy, FETCH(`https://api.wild.test:${P}/`));
  assert.equal(control.value, `hello api.wild.test:${P}`);
});

await check('an IP literal (the host network) is refused and never reaches the host (control: the name)', async () => {
  const before = tlsAccepted;
  const r = await run(base, FETCH(`https://127.0.0.1:${P}/`));
  assert.match(r.value.error, /^ECONNRESET /);
  refused(r, '127.0.0.1', P, 'an address the resolver did not give (IP literal)');
  assert.equal(tlsAccepted, before, 'no connection reached the host listener');
});

await check('a permitted name resolving to a private address is refused (control: allowPrivateAddresses)', async () => {
  const policy = { mode: 'allow-list', allow: [`localhost:${P}`] };
  const r = await run(policy, FETCH(`https://localhost:${P}/`));
  assert.match(r.value.error, /^ENOTFOUND /);
  refused(r, 'localhost', 0, 'resolves to a private address');
  const control = await run({ ...policy, allowPrivateAddresses: true }, FETCH(`https://localhost:${P}/`));
  assert.equal(control.value, `hello localhost:${P}`);
  permitted(control, 'localhost', P);
});

const TLS_SNI = (servername) => `const net = await import('node:net');
try {
  return await new Promise((res, rej) => {
    const s = tls.connect({ host: 'allowed.test', port: ${P}, servername: ${JSON.stringify(servername)} }, () => { s.end(); res('connected'); });
    s.on('error', rej);
  });
} catch (e) { return fail(e); }`;

await check('TLS naming another server than the host resolved is refused (control: the same name)', async () => {
  const r = await run(base, TLS_SNI('other.test'));
  assert.match(r.value.error, /^ECONNRESET /);
  refused(r, 'allowed.test', P, 'TLS server name differs from the host connected to');
  const control = await run(base, TLS_SNI('allowed.test'));
  assert.equal(control.value, 'connected');
});

const HTTP_HOST = (host) => `const http = await import('node:http');
try {
  return await new Promise((res, rej) => {
    const q = http.get({ host: 'allowed.test', port: ${H}, path: '/', headers: ${host ? `{ host: ${JSON.stringify(host)} }` : '{}'} }, (r) => {
      let t = ''; r.on('data', (d) => (t += d)); r.on('end', () => res(t));
    });
    q.on('error', rej);
  });
} catch (e) { return fail(e); }`;

await check('plain HTTP with another Host header is refused (control: its own Host)', async () => {
  const policy = { ...base, allow: [`allowed.test:${H}`] };
  const r = await run(policy, HTTP_HOST('other.test'));
  assert.match(r.value.error, /^ECONNRESET /);
  refused(r, 'allowed.test', H, 'HTTP Host header differs from the host connected to');
  const control = await run(policy, HTTP_HOST(null));
  assert.equal(control.value, `hello allowed.test:${H}`);
});

const TCP = (port) => `const net = await import('node:net');
try {
  return await new Promise((res, rej) => {
    const s = net.connect(${port}, 'allowed.test', () => s.write('ping'));
    s.on('data', (d) => { s.end(); res(String(d)); });
    s.on('error', rej);
  });
} catch (e) { console.log(String(e)); return fail(e); }`;

await check('plain TCP to a port not permitted is refused by the kernel (control: the port listed)', async () => {
  const r = await run(base, TCP(R));
  assert.match(r.value.error, /^EACCES connect EACCES/);
  assert.equal(r.sandbox.denied, true);
  const control = await run({ ...base, allow: [`allowed.test:${P}`, `allowed.test:${R}`] }, TCP(R));
  assert.equal(control.value, 'ping');
  permitted(control, 'allowed.test', R);
});

// A datagram to host:port, from a connected socket (whose error the range's closed port answers)
// or not (UDP reports nothing to an unconnected sender).
const UDP = (host, port, connected) => `const dgram = await import('node:dgram');
    return await new Promise((res) => { const s = dgram.createSocket('udp4'); s.on('error', (e) => { s.close(); res(fail(e)); });
      ${connected ? `s.connect(${port}, '${host}', () => s.send('program', (e) => e && res(fail(e))));`
                  : `s.send('program', ${port}, '${host}', (e) => { s.close(); res(e ? fail(e) : 'sent'); });`} });`;
const UDP_REFUSED = "UDP to another destination than the range's resolver";

await check('UDP other than the resolver never leaves the range and is refused (control: unconfined, it arrives)', async () => {
  const r = await run(base, UDP('127.0.0.1', U, true));
  assert.equal(r.value.error, 'ECONNREFUSED recvmsg ECONNREFUSED', JSON.stringify(r));
  refused(r, '127.0.0.1', U, UDP_REFUSED);
  assert.equal(conns(r).find((c) => c.port === U).bytesSent, 'program'.length);
  assert.deepEqual(await marked(), [], 'no datagram reached the host');
  // An unconnected sender is told nothing, as by any closed port, but the result says it.
  const quiet = await run(base, UDP('127.0.0.1', U, false));
  assert.equal(quiet.value, 'sent');
  refused(quiet, '127.0.0.1', U, UDP_REFUSED);
  assert.deepEqual(await marked(), [], 'no datagram reached the host');
  const control = await run({ mode: 'none' }, UDP('127.0.0.1', U, false), [], 'danger-full-access');
  assert.equal(control.value, 'sent');
  assert.deepEqual(await marked(), ['program']);
});

await check('UDP to a permitted name and to a public address is refused too (control: the resolver answers over UDP)', async () => {
  const quic = await run(base, UDP('allowed.test', P, true));
  assert.equal(quic.value.error, 'ECONNREFUSED recvmsg ECONNREFUSED', JSON.stringify(quic));
  refused(quic, 'allowed.test', P, UDP_REFUSED);
  const dns = await run(base, UDP('192.0.2.53', 53, true));
  assert.equal(dns.value.error, 'ECONNREFUSED recvmsg ECONNREFUSED', JSON.stringify(dns));
  refused(dns, '192.0.2.53', 53, UDP_REFUSED);
  // Control: the name itself was resolved over UDP by the range's resolver, which is no refusal.
  assert.deepEqual(conns(quic).map((c) => c.host), ['allowed.test']);
});

await check('a public IP literal reaches no network: the proxy refuses and names it (control: the name)', async () => {
  const literal = `const net = await import('node:net');
    return await new Promise((res) => { const s = net.connect(${P}, '198.51.100.7'); s.on('error', (e) => res(fail(e)));
      s.on('connect', () => s.on('close', () => res('closed'))); });`;
  const r = await run(base, literal);
  // Reset as soon as accepted: before or after the program saw it connect.
  assert.match(r.value.error ?? r.value, /^(ECONNRESET (connect|read) ECONNRESET.*|closed)$/, JSON.stringify(r));
  refused(r, '198.51.100.7', P, 'an address the resolver did not give (IP literal)');
  const control = await run(base, FETCH(`https://allowed.test:${P}/`));
  assert.equal(control.value, `hello allowed.test:${P}`);
});

// The host's resolver, as the proxy uses it, made a test DNS server: dsh runs in a mount namespace
// whose /etc/resolv.conf names 127.0.0.2 (root; the proxy resolves in the host's network
// namespace). It answers public.test with a public address, rebind.test with a public and a
// private one, and slow.test only once released (or, so that a failure ends, after 20 s).
const dnsServer = dgram.createSocket('udp4');
let slowAnsweredBeforeRelease = null;
const heldSlow = []; // the answers to slow.test's questions (A and AAAA), until released
const releaseSlow = () => {
  slowAnsweredBeforeRelease ??= false;
  heldSlow.splice(0).forEach((answer) => answer());
};
const dnsBound = await new Promise((res) => {
  dnsServer.once('error', (e) => res(e.code));
  dnsServer.bind(53, '127.0.0.2', () => res(true));
});
dnsServer.on('message', (q, from) => {
  let o = 12;
  const labels = [];
  while (q[o]) {
    labels.push(q.subarray(o + 1, o + 1 + q[o]).toString());
    o += q[o] + 1;
  }
  const name = labels.join('.'), qtype = q.readUInt16BE(o + 1), end = o + 5;
  const addrs = qtype !== 1 ? [] : name === 'rebind.test' ? ['93.184.215.14', '10.0.0.1'] : ['93.184.215.14'];
  const answer = () => {
    const head = Buffer.from(q.subarray(0, end));
    head.writeUInt16BE(0x8180, 2);
    head.writeUInt16BE(addrs.length, 6);
    const rrs = addrs.map((a) => Buffer.from([0xc0, 12, 0, 1, 0, 1, 0, 0, 0, 60, 0, 4, ...a.split('.').map(Number)]));
    dnsServer.send(Buffer.concat([head, ...rrs]), from.port, from.address);
  };
  if (name !== 'slow.test') return answer();
  heldSlow.push(answer);
  setTimeout(() => {
    slowAnsweredBeforeRelease ??= true;
    releaseSlow();
  }, 20000).unref();
});
const resolvConf = path.join(tmp, 'resolv.conf');
fs.writeFileSync(resolvConf, 'nameserver 127.0.0.2\noptions timeout:30 attempts:1\n');
const PRIVATE_RESOLVER = ['unshare', '-m', '--', 'sh', '-c', 'mount --bind "$0" /etc/resolv.conf && exec "$@"', resolvConf];

if (dnsBound !== true) {
  console.log(`ok - # SKIP the host resolver's checks: cannot serve DNS on 127.0.0.2:53 (${dnsBound})`);
} else {
  await check("a name the host's resolver answers slowly holds up nothing else of the run (control: it resolves)", async () => {
    const network = { ...base, allow: [`allowed.test:${P}`, 'slow.test'] };
    const r = await run(network, `const dns = await import('node:dns');
      const slow = dns.promises.lookup('slow.test').then((a) => a.address, (e) => e.code);
      const fast = await (await fetch('https://allowed.test:${P}/release-slow')).text();
      return { fast, slow: await slow };`, [], 'read-only', PRIVATE_RESOLVER);
    assert.deepEqual(r.value, { fast: `hello allowed.test:${P}`, slow: '127.77.0.1' }, JSON.stringify(r));
    assert.equal(slowAnsweredBeforeRelease, false, 'the permitted name was fetched while the other one resolved');
  });

  await check("names the host's resolver answers: a public address passes, a rebinding answer is refused", async () => {
    const network = { ...base, allow: [`allowed.test:${P}`, 'public.test', 'rebind.test'] };
    const r = await run(network, `const dns = await import('node:dns');
      const lookup = (n) => dns.promises.lookup(n).then((a) => a.address, (e) => e.code);
      return [await lookup('public.test'), await lookup('rebind.test')];`, [], 'read-only', PRIVATE_RESOLVER);
    assert.deepEqual(r.value, ['127.77.0.1', 'ENOTFOUND'], JSON.stringify(r));
    refused(r, 'rebind.test', 0, 'resolves to a private address');
  });
}

await check('a redirect to a host not permitted is refused (control: a redirect to the permitted one)', async () => {
  const r = await run(base, FETCH(`https://allowed.test:${P}/redirect?to=https://evil.test:${P}/`));
  assert.equal(r.value.error, 'ENOTFOUND getaddrinfo ENOTFOUND evil.test');
  refused(r, 'evil.test', 0, 'not on the allow-list');
  const control = await run(base, FETCH(`https://allowed.test:${P}/redirect?to=https://allowed.test:${P}/x`));
  assert.equal(control.value, `hello allowed.test:${P}`);
});

await check('no path reaches the proxy: unix sockets stay refused, no proxy process is visible', async () => {
  const r = await run(
    base,
    `const net = await import('node:net');
    const procs = fs.readdirSync('/proc').filter((p) => /^[0-9]+$/.test(p))
      .map((p) => { try { return fs.readFileSync('/proc/' + p + '/cmdline', 'utf8'); } catch { return ''; } })
      .filter((c) => c.includes('egress'));
    const unix = await new Promise((res) => { const s = net.connect('\\0dsh-egress'); s.on('connect', () => res('connected')); s.on('error', (e) => res(e.code)); });
    return { procs, unix };`,
  );
  assert.deepEqual(r.value, { procs: [], unix: 'EACCES' }, JSON.stringify(r));
});

await check("another run's relay address is not reachable from a run that did not resolve it", async () => {
  // The first name a run resolves gets 127.77.0.1 in that run's own namespace; here nothing was
  // resolved, so the same address is only an IP literal.
  const r = await run(base, FETCH(`https://127.77.0.1:${P}/`));
  assert.match(r.value.error, /^ECONNRESET /);
  refused(r, '127.77.0.1', P, 'an address the resolver did not give (IP literal)');
});

if (pythonProfile) {
  await check('Python urllib reaches a permitted name through the default configuration', async () => {
    const r = await run(
      base,
      `import ssl, urllib.request\nctx = ssl.create_default_context(cafile="ca.pem")\n` +
        `return urllib.request.urlopen("https://allowed.test:${P}/", context=ctx).read().decode()\n`,
      ['--patch', pythonProfile],
    );
    assert.equal(r.value, `hello allowed.test:${P}`, JSON.stringify(r));
    permitted(r, 'allowed.test', P);
  });
}

// A process the program starts that honours https_proxy (plain python3's urllib) reaches the host
// through the CONNECT port; the program's own process.env stays empty.
const VIA_PROXY = (host) => `const cp = await import('node:child_process');
const script = 'import ssl, sys, urllib.request\\n' +
  'ctx = ssl.create_default_context(cafile="ca.pem")\\n' +
  'try:\\n    print(urllib.request.urlopen("https://${host}:${P}/", context=ctx).read().decode())\\n' +
  'except Exception as e:\\n    print("error", e)\\n';
return { env: Object.keys(process.env).length, out: cp.execFileSync('/usr/bin/python3', ['-c', script], { encoding: 'utf8' }).trim() };`;

await check('a process honouring HTTPS_PROXY goes through the CONNECT port, checked the same way', async () => {
  const r = await run(base, VIA_PROXY('allowed.test'));
  assert.deepEqual(r.value, { env: 0, out: `hello allowed.test:${P}` }, JSON.stringify(r));
  permitted(r, 'allowed.test', P);
  const no = await run(base, VIA_PROXY('evil.test'));
  assert.equal(no.value.out, 'error <urlopen error Tunnel connection failed: 403 Forbidden>');
  refused(no, 'evil.test', P, 'not on the allow-list');
  const literal = await run(base, VIA_PROXY('127.0.0.1'));
  assert.equal(literal.value.out, 'error <urlopen error Tunnel connection failed: 403 Forbidden>');
  refused(literal, '127.0.0.1', P, 'an address the resolver did not give (IP literal)');
});

await check('an approved escalation carries its own list for that run only (controls: the standing list before and after)', async () => {
  const standing = { ...base, resolverOverride: ['allowed.test', 'other.test'] };
  const { send, answer, end } = serve(standing);
  const other = TRUST + FETCH(`https://other.test:${P}/`), allowed = TRUST + FETCH(`https://allowed.test:${P}/`);
  const escalation = { mode: 'allow-list', allow: [`other.test:${P}`] };
  send({ type: 'run', id: 'before', program: other });
  refused((await answer('before')).result, 'other.test', 0, 'not on the allow-list');
  send({ type: 'run', id: 'up', program: other, mode: 'read-only', network: escalation });
  const up = (await answer('up')).result;
  assert.equal(up.value, `hello other.test:${P}`, JSON.stringify(up));
  assert.ok(conns(up).some((c) => c.host === 'other.test' && c.verdict === 'allowed'), JSON.stringify(up.sandbox.network));
  send({ type: 'run', id: 'replaced', program: allowed, mode: 'read-only', network: escalation });
  refused((await answer('replaced')).result, 'allowed.test', 0, 'not on the allow-list');
  send({ type: 'run', id: 'after', program: other });
  refused((await answer('after')).result, 'other.test', 0, 'not on the allow-list');
  send({ type: 'run', id: 'alone', program: 'return 1', network: escalation });
  assert.equal((await answer('alone')).message,
    'run rejected (request-invalid): request network needs mode: another network list is a one-time escalation');
  send({ type: 'run', id: 'override', program: 'return 1', mode: 'read-only', network: { ...escalation, resolverOverride: ['evil.test'] } });
  assert.equal((await answer('override')).message,
    'run rejected (request-invalid): request network.resolverOverride is refused: it is test-only configuration');
  await end();
});

await check('prewarmed processes: each run served by one accounts only its own connections', async () => {
  const { send, answer, logged, end } = serve(base, ['-v']);
  const ready = /a prewarmed process is ready/g;
  // The pool fills after the session's first run: the second and third take a prewarmed process.
  for (const [i, path] of ['cold', 'second', 'third'].entries()) {
    await logged(ready, i);
    send({ type: 'run', id: path, program: TRUST + FETCH(`https://allowed.test:${P}/${path}`) });
    const r = (await answer(path)).result;
    assert.equal(r.value, `hello allowed.test:${P}`, JSON.stringify(r));
    assert.deepEqual(conns(r).map((c) => [c.host, c.port, c.verdict]), [['allowed.test', P, 'allowed']]);
  }
  await end();
});

await check("a retained environment accounts each run apart: its own decisions, open connections' new bytes", async () => {
  const network = { ...base, allow: [`allowed.test:${P}`, `allowed.test:${R}`] };
  const { send, answer, end } = serve(network, ['--patch', path.join(path.dirname(pythonProfile), 'persistent.yaml')]);
  // Scoped REPL programs: the last expression is the value, top-level declarations stay.
  const result = async (id, program) => {
    send({ type: 'run', id, stateOwner: 'a', program });
    const r = (await answer(id)).result;
    assert.equal(r.ok, true, JSON.stringify(r));
    return r;
  };
  const LOOKUP = (name) => `await (await import('node:dns')).promises.lookup(${JSON.stringify(name)}).catch((e) => e.code)`;
  // Run 1 keeps a connection open and is refused a name.
  const r1 = await result('r1', `var kept = (await import('node:net')).connect(${R}, 'allowed.test');
    await new Promise((res) => kept.on('connect', res)); ${LOOKUP('evil.test')}`);
  assert.equal(r1.value, 'ENOTFOUND');
  // In the proxy's order of decisions: the connection's accept and the question may come either way.
  assert.deepEqual(conns(r1).map((c) => [c.host, c.port, c.verdict, c.bytesSent, c.open ?? false]).sort(),
    [['allowed.test', R, 'allowed', 0, true], ['evil.test', 0, 'refused', 0, false]]);
  assert.equal(r1.sandbox.network.refused, 1);
  // Run 2 only uses the kept connection: its bytes since run 1, and not run 1's refusal.
  const r2 = await result('r2', `kept.write('ping'); await new Promise((res) => kept.once('data', (d) => res(String(d))))`);
  assert.equal(r2.value, 'ping');
  assert.deepEqual(conns(r2).map((c) => [c.host, c.port, c.verdict, c.bytesSent, c.bytesReceived, c.open ?? false]),
    [['allowed.test', R, 'allowed', 4, 4, true]]);
  assert.equal(r2.sandbox.network.refused, 0);
  assert.equal(r2.sandbox.denied, false, JSON.stringify(r2.sandbox));
  // Runs 3 and 4 each make 127 decisions: the ledger's 128 entries hold each run's own (entries
  // of runs already reported are reused), and a name refused before is refused again.
  const many = (tag) => `kept.destroy(); var dns = await import('node:dns'); var out = [];
    for (let i = 0; i < 126; i++) out.push(await dns.promises.lookup('${tag}' + i + '.test').catch((e) => e.code));
    out.push(${LOOKUP('evil.test')}); out.filter((c) => c === 'ENOTFOUND').length`;
  for (const tag of ['a', 'b']) {
    const r = await result(`many-${tag}`, many(tag));
    assert.equal(r.value, 127);
    const hosts = conns(r).filter((c) => c.verdict === 'refused').map((c) => c.host);
    assert.equal(hosts.length, 127, JSON.stringify(r.sandbox.network));
    assert.equal(hosts.filter((h) => h.startsWith(tag) || h === 'evil.test').length, 127);
    assert.equal(r.sandbox.network.omitted, 0);
    assert.equal(r.sandbox.network.refused, 127);
  }
  await end();
});

await check('dsh mcp tells the model the hosts, and names a refused one in the result', async () => {
  const child = spawn(dsh, ['--workspace', ws, 'mcp', '--patch', patch(base)], { cwd: ws, stdio: ['pipe', 'pipe', 'inherit'] });
  const answers = new Map();
  let buf = '', wake = null;
  child.stdout.on('data', (d) => {
    buf += d;
    for (let i; (i = buf.indexOf('\n')) >= 0; buf = buf.slice(i + 1)) {
      const m = JSON.parse(buf.slice(0, i));
      if (m.id !== undefined) answers.set(m.id, m);
      if (wake) wake();
    }
  });
  const send = (m) => child.stdin.write(JSON.stringify({ jsonrpc: '2.0', ...m }) + '\n');
  const answer = async (id) => {
    while (!answers.has(id)) await new Promise((res) => (wake = res));
    return answers.get(id);
  };
  send({ id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 't', version: '1' } } });
  await answer(1);
  send({ method: 'notifications/initialized' });
  send({ id: 2, method: 'tools/list' });
  const runCode = (await answer(2)).result.tools.find((t) => t.name === 'run_code');
  assert.match(runCode.description, new RegExp(`Network: only these hosts \\(others fail with ENOTFOUND and the result says the sandbox refused them\\): allowed\\.test:${P}\\.`));
  send({ id: 3, method: 'tools/call', params: { name: 'run_code', arguments: { description: 'd',
    program: 'try { await fetch("https://evil.test/") } catch (e) { inspect(e.cause.code) }' } } });
  const text = (await answer(3)).result.content[0].text;
  child.kill();
  assert.equal(text, 'ENOTFOUND\nthe sandbox refused: an operation of the program that read-only mode does not allow\n' +
    'the sandbox refused network access to evil.test (not on the allow-list)');
});

if (pythonProfile) {
  await check('only IPv4 TCP and UDP sockets exist in an allow-list run (control: those two)', async () => {
    const r = await run(
      base,
      `import errno, socket\nout = {}\n` +
        `for name, args in [("inet6", (socket.AF_INET6, socket.SOCK_STREAM)), ("unix", (socket.AF_UNIX, socket.SOCK_STREAM)),\n` +
        `    ("raw", (socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_ICMP)), ("ping", (socket.AF_INET, socket.SOCK_DGRAM, socket.IPPROTO_ICMP)),\n` +
        `    ("netlink", (socket.AF_NETLINK, socket.SOCK_RAW, 0)), ("packet", (socket.AF_PACKET, socket.SOCK_RAW, 0)),\n` +
        `    ("tcp", (socket.AF_INET, socket.SOCK_STREAM, 0)), ("udp", (socket.AF_INET, socket.SOCK_DGRAM, socket.IPPROTO_UDP))]:\n` +
        `    try:\n        socket.socket(*args).close()\n        out[name] = "ok"\n` +
        `    except OSError as e:\n        out[name] = errno.errorcode.get(e.errno, str(e.errno))\n` +
        `return out\n`,
      ['--patch', pythonProfile],
    );
    assert.deepEqual(r.value, {
      inet6: 'EACCES', unix: 'EACCES', raw: 'EACCES', ping: 'EACCES', netlink: 'EACCES', packet: 'EACCES',
      tcp: 'ok', udp: 'ok',
    }, JSON.stringify(r));
  });
}

tlsServer.close();
httpServer.close();
echoServer.close();
udp.close();
dnsServer.close();
console.log(failures ? `${failures} failed` : 'all passed');
process.exit(failures ? 1 : 0);
