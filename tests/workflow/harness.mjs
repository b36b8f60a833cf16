// Black-box harness for `dsh workflow run` (the real dsh, engine, runtime, sandbox and Node).
import { spawn } from 'node:child_process';
import { mkdtempSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

export const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
export const DSH = process.env.DSH_BIN ?? join(ROOT, process.env.DSH_BUILD_DIR ?? 'build', 'examples/host/dsh');

const scratch = [];
process.on('exit', () => {
  for (const dir of scratch) rmSync(dir, { recursive: true, force: true });
});

export function tempDir(prefix = 'dsh-wf-') {
  const dir = realpathSync(mkdtempSync(join(tmpdir(), prefix)));
  scratch.push(dir);
  return dir;
}

/** A patch layer: {rowId: config} for every row given. */
export function patchFile(rows) {
  const file = join(tempDir('dsh-wf-patch-'), 'patch.yaml');
  const lines = [];
  for (const [id, config] of Object.entries(rows)) lines.push(`- id: ${id}`, `  config: ${JSON.stringify(config)}`);
  // No rows: `[]`, since dsh refuses an empty patch file.
  writeFileSync(file, lines.length ? lines.join('\n') + '\n' : '[]\n');
  return file;
}

/**
 * Starts `dsh workflow run SCRIPT --json` and returns {child, done}; done resolves to
 * {status, result, events, subagents, stdout, stderr}. events: the workflow events in order;
 * subagents: the nested provider's lifecycle lines ({subagent, child}).
 * opts: args (JSON value), rows (patch rows), ws (workspace, default fresh, workspace-write off),
 * extra (more dsh arguments), onEvent(event, child) (called as events arrive).
 */
export function startWorkflow(script, opts = {}) {
  const ws = opts.ws ?? tempDir('dsh-wf-ws-');
  const file = join(tempDir('dsh-wf-script-'), 'workflow.js');
  writeFileSync(file, script);
  return startDshWorkflow(['run', file], { ...opts, ws });
}

/** `dsh workflow ralph --prompt FILE --json ...` (extra: its other options), as startWorkflow. */
export function startRalph(prompt, opts = {}) {
  const file = join(tempDir('dsh-wf-prompt-'), 'prompt.txt');
  writeFileSync(file, prompt);
  return startDshWorkflow(['ralph', '--prompt', file], opts);
}

function startDshWorkflow(command, opts) {
  const ws = opts.ws ?? tempDir('dsh-wf-ws-');
  const argv = ['workflow', ...command, '--json'];
  if (opts.args !== undefined) argv.push('--args', JSON.stringify(opts.args));
  if (opts.rows) argv.push('--patch', patchFile(opts.rows));
  argv.push(...(opts.extra ?? []));
  const child = spawn(DSH, argv, { cwd: ws, stdio: ['ignore', 'pipe', 'pipe'] });
  const events = [];
  const subagents = [];
  let stdout = '';
  let stderr = '';
  let pending = '';
  child.stdout.on('data', (d) => (stdout += d));
  child.stderr.on('data', (d) => {
    stderr += d;
    pending += d;
    const lines = pending.split('\n');
    pending = lines.pop();
    for (const line of lines) {
      let o;
      try {
        o = JSON.parse(line);
      } catch {
        continue; // a diagnostic line
      }
      if (o.subagent) subagents.push(o);
      else {
        events.push(o);
        opts.onEvent?.(o, child);
      }
    }
  });
  const done = new Promise((resolveDone) => {
    child.on('close', (status, signal) => {
      let result = null;
      try {
        result = JSON.parse(stdout.trim().split('\n').at(-1));
      } catch {
        // rejected at start: no result line
      }
      resolveDone({ status, signal, result, events, subagents, stdout, stderr, ws });
    });
  });
  return { child, done };
}

export const runWorkflow = (script, opts) => startWorkflow(script, opts).done;

/** Runs `dsh headless --json -e CODE` with the same patch rows (a plain PTC run, for contrast). */
export function runProgram(code, { rows, ws } = {}) {
  const argv = ['headless', '--json', '-e', code];
  if (rows) argv.push('--patch', patchFile(rows));
  const child = spawn(DSH, argv, { cwd: ws ?? tempDir('dsh-wf-ws-'), stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  child.stdout.on('data', (d) => (stdout += d));
  return new Promise((res) => child.on('close', (status) => res({ status, result: JSON.parse(stdout.trim() || 'null') })));
}

/** Checks that agent-start/agent-end pair exactly once per agentId; returns the max overlap. */
export function agentOverlap(events, assert) {
  const open = new Set();
  const ended = new Set();
  let max = 0;
  for (const e of events) {
    if (e.type === 'agent-start') {
      assert.ok(!open.has(e.agentId) && !ended.has(e.agentId), `agent ${e.agentId} started once`);
      open.add(e.agentId);
      max = Math.max(max, open.size);
    } else if (e.type === 'agent-end') {
      assert.ok(open.has(e.agentId), `agent-end ${e.agentId} follows its agent-start`);
      open.delete(e.agentId);
      ended.add(e.agentId);
    }
  }
  assert.equal(open.size, 0, 'every agent-start has its agent-end');
  return max;
}
