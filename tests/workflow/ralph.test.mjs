// Opt-in Ralph loops through the real `dsh workflow ralph`: each iteration a fresh nested agent
// with the same prompt, ending at the completion promise, the iteration cap or cancellation.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { startRalph, tempDir } from './harness.mjs';

// The prompt (a TypeScript program for the nested subagent provider) keeps its state where a
// Ralph agent does, in the workspace: it counts its runs and promises completion at `doneAt`.
const counter = (doneAt) => `
const fs = await import("node:fs");
const n = (fs.existsSync("count") ? Number(fs.readFileSync("count", "utf8")) : 0) + 1;
fs.writeFileSync("count", String(n));
return n >= ${doneAt} ? "iteration " + n + ": <promise>DONE</promise>" : "iteration " + n + ": not yet";`;

const enabled = (ralph = {}) => ({ workflow: { ralph: { enabled: true, ...ralph } }, 'sandbox-policy': { mode: 'workspace-write' } });
const phases = (events) => events.filter((e) => e.type === 'phase').map((e) => e.title);

test('the loop stops after the third agent, whose output holds the promise', async () => {
  const ws = tempDir('dsh-ralph-ws-');
  const r = await startRalph(counter(3), { ws, rows: enabled(), extra: ['--completion-promise', '<promise>DONE</promise>', '--max-iterations', '8'] }).done;
  assert.equal(r.status, 0, r.stderr);
  assert.deepEqual(r.result.value, { endedBy: 'completion-promise', iterations: 3, output: 'iteration 3: <promise>DONE</promise>' });
  assert.equal(r.result.stopReason, 'completed');
  assert.equal(r.result.agentsStarted, 3);
  assert.deepEqual(phases(r.events), ['ralph iteration 1/8', 'ralph iteration 2/8', 'ralph iteration 3/8']);
  assert.equal(readFileSync(join(ws, 'count'), 'utf8'), '3');
  // Each iteration was its own child agent (the nested provider's lifecycle lines).
  assert.equal(new Set(r.subagents.map((s) => s.child)).size, 3);
});

test('a loop whose agents never promise stops at the cap', async () => {
  const ws = tempDir('dsh-ralph-ws-');
  const r = await startRalph(counter(1000), { ws, rows: enabled({ maxIterations: 4 }), extra: ['--completion-promise', '<promise>DONE</promise>'] }).done;
  assert.equal(r.status, 0, r.stderr);
  assert.deepEqual(r.result.value, { endedBy: 'max-iterations', iterations: 4 });
  assert.equal(phases(r.events).length, 4);
  assert.equal(readFileSync(join(ws, 'count'), 'utf8'), '4');
});

test('the configured completion promise is the default', async () => {
  const prompt = 'return "all done <promise>COMPLETE</promise>"';
  const r = await startRalph(prompt, { rows: enabled() }).done;
  assert.equal(r.result.value.endedBy, 'completion-promise');
  assert.equal(r.result.value.iterations, 1);
});

test('cancellation stops the loop: no further iteration starts', async () => {
  const ws = tempDir('dsh-ralph-ws-');
  // The second agent blocks after counting itself; the barrier is its count in the workspace.
  const prompt = `
const fs = await import("node:fs");
const n = (fs.existsSync("count") ? Number(fs.readFileSync("count", "utf8")) : 0) + 1;
fs.writeFileSync("count", String(n));
if (n === 2) await new Promise(() => {});
return "iteration " + n;`;
  const run = startRalph(prompt, {
    ws,
    rows: enabled(),
    onEvent: (event, child) => {
      if (event.type !== 'agent-start' || event.label !== 'ralph-2') return;
      const poll = setInterval(() => {
        if (existsSync(join(ws, 'count')) && readFileSync(join(ws, 'count'), 'utf8') === '2') {
          clearInterval(poll);
          child.kill('SIGINT');
        }
      }, 20);
    },
  });
  const r = await run.done;
  assert.equal(r.status, 1, r.stderr);
  assert.equal(r.result.stopReason, 'cancelled');
  assert.equal(r.result.agentsStarted, 2);
  assert.deepEqual(phases(r.events), ['ralph iteration 1/10', 'ralph iteration 2/10']);
  assert.equal(readFileSync(join(ws, 'count'), 'utf8'), '2');
});

test('Ralph is disabled by default: the command fails naming the field', async () => {
  const r = await startRalph('return "<promise>COMPLETE</promise>"', {}).done;
  assert.equal(r.status, 2);
  assert.equal(r.result, null);
  assert.match(r.stderr, /the workflow was rejected \(unsupported\): Ralph loops are disabled: set ralph\.enabled: true in the dsh-workflow-ptc row/);
});

test('a request above the configured iteration cap is refused', async () => {
  const r = await startRalph('return 1', { rows: enabled({ maxIterations: 3 }), extra: ['--max-iterations', '5'] }).done;
  assert.equal(r.status, 2);
  assert.match(r.stderr, /ralph\.maxIterations: 5 is outside 1\.\.3 \(the configured ralph\.maxIterations\)/);
});
