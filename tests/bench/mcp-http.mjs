// MCP over HTTP against MCP over stdio: S sessions at once, each making C sequential run_code
// calls of a trivial program (prewarmed, workspace-write), through ONE `dsh mcp --listen` (one
// official-SDK StreamableHTTPClientTransport client per session) and through S `dsh mcp` on
// stdio (one StdioClientTransport client per dsh). Rounds alternate (HTTP, stdio, HTTP, ...).
// Prints p50/p99 per-call latency of both, the errors (must be 0), the per-call ratio of the
// medians, and the host's peak resident set: the one HTTP dsh against one stdio dsh and the sum of
// the stdio ones. Usage: node tests/bench/mcp-http.mjs [sessions] [calls] [rounds]
import { spawn } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { median, peakRss } from './lib.mjs';

const sessions = Number(process.argv[2] ?? 50);
const calls = Number(process.argv[3] ?? 20);
const rounds = Number(process.argv[4] ?? 2);
const here = dirname(fileURLToPath(import.meta.url));
const root = resolve(here, '../..');
const dsh = join(root, process.env.DSH_BUILD_DIR ?? 'build', 'examples/host/dsh');
const from = createRequire(join(root, 'tests/clients/package.json'));
const { Client } = from('@modelcontextprotocol/sdk/client/index.js');
const { StreamableHTTPClientTransport } = from('@modelcontextprotocol/sdk/client/streamableHttp.js');
const { StdioClientTransport } = from('@modelcontextprotocol/sdk/client/stdio.js');

const work = mkdtempSync(join(tmpdir(), 'dsh-bench-mcp-http-'));
const token = 'bench-token-0123456789abcdef';
writeFileSync(join(work, 'token'), token);
// One warm process per session's standing policy, room for every session's.
const patch = join(work, 'prewarm.yaml');
writeFileSync(patch, `- id: ptc-runtime\n  config: {prewarmProcesses: 1, prewarmTotalProcesses: ${sessions}}\n`);
const common = ['--patch', patch, '--sandbox', 'workspace-write', '--workspace', work];

const percentile = (xs, p) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor((xs.length * p) / 100))];

// C sequential calls of one client; latencies pushed, errors counted.
async function drive(client, latencies, errors) {
  for (let i = 0; i < calls; i++) {
    const t0 = performance.now();
    try {
      const r = await client.callTool({ name: 'run_code', arguments: { program: 'return 1', description: 'bench' } });
      if (r.isError || r.content[0].text !== '1\n') errors.push(JSON.stringify(r));
    } catch (e) {
      errors.push(String(e));
    }
    latencies.push(performance.now() - t0);
  }
}

async function httpRound() {
  const child = spawn(dsh, [...common, 'mcp', '--listen', '127.0.0.1:0', '--token-file', join(work, 'token'), '--max-sessions', String(sessions + 1)], { stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  const url = await new Promise((res, rej) => {
    child.stderr.on('data', (d) => {
      stderr += d;
      const m = /listening on (http:\/\/\S+)/.exec(stderr);
      if (m) res(m[1]);
    });
    child.on('exit', () => rej(new Error(stderr)));
  });
  const clients = await Promise.all(Array.from({ length: sessions }, async () => {
    const c = new Client({ name: 'bench', version: '1' });
    await c.connect(new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers: { Authorization: `Bearer ${token}` } } }));
    return c;
  }));
  // Untimed: every session's first call starts its pool (a policy's first run is cold).
  await Promise.all(clients.map((c) => c.callTool({ name: 'run_code', arguments: { program: 'return 1', description: 'warm' } })));
  const latencies = [], errors = [];
  const t0 = performance.now();
  await Promise.all(clients.map((c) => drive(c, latencies, errors)));
  const wall = performance.now() - t0;
  const rss = peakRss(child.pid);
  await Promise.all(clients.map((c) => c.close()));
  child.kill('SIGTERM');
  await new Promise((r) => child.on('exit', r));
  return { latencies, errors, wall, rss: [rss] };
}

async function stdioRound() {
  const pairs = await Promise.all(Array.from({ length: sessions }, async () => {
    const transport = new StdioClientTransport({ command: dsh, args: [...common, 'mcp'], cwd: work, stderr: 'ignore' });
    const c = new Client({ name: 'bench', version: '1' });
    await c.connect(transport);
    return { c, transport };
  }));
  await Promise.all(pairs.map(({ c }) => c.callTool({ name: 'run_code', arguments: { program: 'return 1', description: 'warm' } })));
  const latencies = [], errors = [];
  const t0 = performance.now();
  await Promise.all(pairs.map(({ c }) => drive(c, latencies, errors)));
  const wall = performance.now() - t0;
  const rss = pairs.map(({ transport }) => peakRss(transport.pid));
  await Promise.all(pairs.map(({ c }) => c.close()));
  return { latencies, errors, wall, rss };
}

console.log(`mcp-http: ${sessions} sessions x ${calls} run_code calls at once, prewarmed, workspace-write; ${rounds} rounds each, alternating`);
const http = { latencies: [], errors: [], walls: [], rss: [] };
const stdio = { latencies: [], errors: [], walls: [], rss: [] };
for (let i = 0; i < rounds; i++) {
  for (const [run, into] of [[httpRound, http], [stdioRound, stdio]]) {
    const r = await run();
    into.latencies.push(...r.latencies);
    into.errors.push(...r.errors);
    into.walls.push(r.wall);
    into.rss.push(r.rss);
  }
}
const MiB = (b) => (b / 1048576).toFixed(1);
for (const [label, f] of [['HTTP, one dsh', http], ['stdio, one dsh per client', stdio]]) {
  console.log(`  ${label}: p50 ${percentile(f.latencies, 50).toFixed(1)} ms, p99 ${percentile(f.latencies, 99).toFixed(1)} ms over ${f.latencies.length} calls, errors ${f.errors.length}, round wall median ${median(f.walls).toFixed(0)} ms`);
  if (f.errors.length) console.log(`    first error: ${f.errors[0].slice(0, 300)}`);
}
const httpRss = Math.max(...http.rss.map((r) => r[0]));
const stdioEach = Math.max(...stdio.rss.flat());
const stdioSum = Math.max(...stdio.rss.map((r) => r.reduce((a, b) => a + b, 0)));
console.log(`  host peak RSS: HTTP dsh ${MiB(httpRss)} MiB for ${sessions} sessions; stdio: ${MiB(stdioEach)} MiB per dsh, ${MiB(stdioSum)} MiB for ${sessions}`);
const ratio = percentile(http.latencies, 50) / percentile(stdio.latencies, 50);
console.log(`SUMMARY mcp-http: p50 ${percentile(http.latencies, 50).toFixed(1)} ms vs ${percentile(stdio.latencies, 50).toFixed(1)} ms (p99 ${percentile(http.latencies, 99).toFixed(1)} vs ${percentile(stdio.latencies, 99).toFixed(1)}), ratio ${ratio.toFixed(3)}x, errors ${http.errors.length + stdio.errors.length}, host RSS ${MiB(httpRss)} MiB vs ${MiB(stdioSum)} MiB`);
