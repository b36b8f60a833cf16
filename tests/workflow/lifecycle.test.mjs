// Workflow lifecycle through the real `dsh workflow run`: cancellation, the shared PTC sandbox,
// the null deadline and rejections at start.
import assert from 'node:assert/strict';
import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { agentOverlap, DSH, runProgram, runWorkflow, startWorkflow, tempDir } from './harness.mjs';
import { spawnSync } from 'node:child_process';

test('cancellation mid-fan-out: PTC process and children abort at once, each child disposed exactly once', async () => {
  const script = `
    log('fan-out');
    return await parallel(Array.from({length: 8}, (_, i) => () => agent('await tools.sleep({ms: 3600000}); return ' + i, {label: 'c' + i})));`;
  // The children sleep an hour, far beyond the suite's timeout: the run ends only if the
  // cancellation aborts them (no clock bound needed).
  let starts = 0;
  const { done } = startWorkflow(script, {
    rows: { workflow: { maxConcurrentAgents: 4 } },
    onEvent(e, child) {
      if (e.type === 'agent-start' && ++starts === 4) child.kill('SIGINT');
    },
  });
  const r = await done;
  assert.equal(r.status, 1);
  assert.equal(r.result.stopReason, 'cancelled');
  assert.equal(r.result.error.code, 'cancelled');
  assert.equal(r.result.agentsStarted, 4, 'queued agents never start after cancellation');
  assert.equal(agentOverlap(r.events, assert), 4);
  assert.ok(r.events.filter((e) => e.type === 'agent-end').every((e) => e.ok === false));
  const started = r.subagents.filter((s) => s.subagent === 'started').map((s) => s.child);
  const disposed = r.subagents.filter((s) => s.subagent === 'disposed').map((s) => s.child);
  assert.equal(started.length, 4);
  assert.deepEqual([...disposed].sort(), [...started].sort(), 'every started child disposed exactly once');
  // agent-end reaches observers before the child is disposed; the end event comes last.
  const last = r.events.at(-1);
  assert.deepEqual([last.type, last.stopReason], ['end', 'cancelled']);
  const lines = r.stderr.split('\n');
  for (const id of started) {
    const ended = lines.findIndex((l) => l.includes('"type":"agent-end"') && l.includes(`"agentId":${id},`));
    const gone = lines.indexOf(`{"subagent":"disposed","child":${id}}`);
    assert.ok(ended >= 0 && ended < gone, `child ${id}: agent-end before disposal`);
  }
});

test('cancellation awaits a child that publishes after it (fault-injection child)', async () => {
  // model "fault:publish-after-cancel" makes the reference provider ignore cancel() for that child.
  const script = `
    return await parallel([
      () => agent('await tools.sleep({ms: 1500}); return "late"', {label: 'late', model: 'fault:publish-after-cancel'}),
      () => agent('await tools.sleep({ms: 60000}); return "never"', {label: 'normal'}),
    ]);`;
  let starts = 0;
  let signalledAt = 0;
  const { done } = startWorkflow(script, {
    onEvent(e, child) {
      if (e.type === 'agent-start' && ++starts === 2) {
        signalledAt = Date.now();
        child.kill('SIGINT');
      }
    },
  });
  const r = await done;
  assert.equal(r.result.stopReason, 'cancelled');
  assert.ok(Date.now() - signalledAt >= 1000, 'the result waited for the late child');
  const ends = Object.fromEntries(r.events.filter((e) => e.type === 'agent-end').map((e) => [e.label, e.ok]));
  assert.deepEqual(ends, { late: true, normal: false }, 'the late child published after cancellation');
  agentOverlap(r.events, assert);
  const steps = r.subagents.map((s) => `${s.subagent} ${s.child}`);
  const late = r.subagents.find((s) => s.subagent === 'published').child;
  assert.ok(steps.indexOf(`cancel ${late}`) < steps.indexOf(`published ${late}`));
  assert.equal(steps.filter((s) => s.startsWith('disposed')).length, 2);
  assert.equal(r.events.at(-1).type, 'end');
});

test('children the script does not await are cancelled and disposed before the result', async () => {
  const script = `agent('await tools.sleep({ms: 60000}); return 1', {label: 'orphan'}); await agent('return 2'); return 'left one behind';`;
  const r = await runWorkflow(script);
  assert.equal(r.result.stopReason, 'completed');
  assert.equal(r.result.value, 'left one behind');
  agentOverlap(r.events, assert);
  assert.equal(r.subagents.filter((s) => s.subagent === 'disposed').length, 2);
});

test('a workflow writing outside the workspace is denied by the same sandbox as PTC', async () => {
  const ws = tempDir('dsh-wf-ws-');
  const outside = tempDir('dsh-wf-outside-');
  const rows = { 'sandbox-policy': { mode: 'workspace-write', workspaceRoot: ws } };
  // The VM is no boundary: a main-realm function leads to process and fs. The OS sandbox holds.
  const script = `
    const fs = log.constructor('return process')().getBuiltinModule('node:fs');
    fs.writeFileSync(args.inside, 'ok');
    fs.writeFileSync(args.outside, 'escaped');
    return 'wrote both';`;
  const r = await runWorkflow(script, { ws, rows, args: { inside: join(ws, 'in.txt'), outside: join(outside, 'x.txt') } });
  assert.equal(r.result.stopReason, 'error');
  assert.ok(existsSync(join(ws, 'in.txt')), 'the workspace stays writable');
  assert.ok(!existsSync(join(outside, 'x.txt')), 'nothing was written outside');
  const code = r.result.error.message.match(/\b(E[A-Z]+):/)?.[1];
  assert.ok(code === 'EACCES' || code === 'EROFS' || code === 'EPERM', r.result.error.message);
  // A plain PTC program gets the very same denial.
  const p = await runProgram(`(await import('node:fs')).writeFileSync(${JSON.stringify(join(outside, 'y.txt'))}, 'x')`, { ws, rows });
  assert.equal(p.result.ok, false);
  assert.match(p.result.error.message, new RegExp(`${code}:`));
  // Children run under the same sandbox.
  const c = await runWorkflow(`return await agent(${JSON.stringify(`(await import('node:fs')).writeFileSync(${JSON.stringify(join(outside, 'z.txt'))}, 'x'); return 1`)})`, { ws, rows });
  assert.equal(c.result.value, null);
  assert.ok(!existsSync(join(outside, 'z.txt')));
});

test('a workflow running longer than the runtime default timeoutMs finishes normally', async () => {
  const rows = { 'ptc-runtime': { timeoutMs: 1000 } };
  // The guest VM is no security boundary: the main realm's setTimeout waits twice the runtime's
  // 1000 ms default, which the workflow's run (timeoutMs: null) must not apply. Timers only fire
  // later under load, never earlier, so no time is measured here.
  const script = `const wait = log.constructor('return setTimeout')();
    await new Promise((r) => wait(r, 2000));
    return 'outlived';`;
  const r = await runWorkflow(script, { rows });
  assert.equal(r.status, 0, r.stderr);
  assert.deepEqual(r.result, { value: 'outlived', stopReason: 'completed', agentsStarted: 0 });
  // Control: an ordinary PTC run under the same row keeps its 1000 ms default and times out.
  const p = await runProgram('await tools.sleep({ms: 2000}); return 1', { rows });
  assert.equal(p.result.error.kind, 'timeout');
});

test('start rejects invalid meta, unknown providers and out-of-range caps with named codes', () => {
  const file = join(tempDir(), 'w.js');
  writeFileSync(file, 'return 1');
  const run = (...extra) => spawnSync(DSH, ['workflow', 'run', file, '--json', ...extra], { cwd: tempDir(), encoding: 'utf8' });
  const cases = [
    [['--meta', '{"name": "ok", "bogus": 1}'], 'request-invalid', /meta\.bogus/],
    [['--meta', '{"name": 5}'], 'request-invalid', /meta\.name/],
    [['--provider', 'nope'], 'not-found', /nope/],
    [['--max-total-agents', '0'], 'limit', /maxTotalAgents/],
    [['--max-total-agents', '101'], 'limit', /1\.\.100/],
  ];
  for (const [extra, code, message] of cases) {
    const r = run(...extra);
    assert.equal(r.status, 2, extra.join(' '));
    assert.equal(r.stdout, '', 'no result for a rejected start');
    assert.match(r.stderr, new RegExp(`rejected \\(${code}\\)`));
    assert.match(r.stderr, message);
  }
  const good = run('--meta', '{"name": "demo", "description": "d", "phases": ["a"]}', '--provider', 'nested', '--max-total-agents', '100');
  assert.equal(good.status, 0, good.stderr);
  assert.ok(good.stderr.includes('"meta":{"name":"demo","description":"d","phases":["a"]}'));
  // An invalid engine row is a configuration error.
  const patch = join(tempDir(), 'p.yaml');
  writeFileSync(patch, '- id: workflow\n  config: {maxConcurrentAgents: 0}\n');
  const bad = run('--patch', patch);
  assert.equal(bad.status, 2);
  assert.match(bad.stderr, /maxConcurrentAgents/);
});

test('without --json progress is printed for a person as it happens', () => {
  const file = join(tempDir(), 'w.js');
  writeFileSync(file, `phase('p1'); log('hi'); const t = await agent('return "x"', {label: 'one'}); return {t};`);
  const r = spawnSync(DSH, ['workflow', 'run', file], { cwd: tempDir(), encoding: 'utf8' });
  assert.equal(r.status, 0, r.stderr);
  assert.equal(r.stdout, 'workflow: start\n== p1\nhi\n-> agent #1 one\n<- agent #1 one ok\nworkflow: completed (1 agents)\n{"t":"x"}\n');
});

// json-c's own tokener stops at 32 levels: the workflow's result and an agent's result are parsed
// strictly (DSH_JSON_MAX_DEPTH) so a 40-level value is returned as this Node's JSON gives it.
test('a 40-level value crosses an agent result and the workflow result', async () => {
  const nested = '{"a":'.repeat(39) + '[1]' + '}'.repeat(39);
  // Without a schema an agent's non-string value arrives as its JSON text.
  const script = `const v = await agent('return ' + ${JSON.stringify(nested)}); return [typeof v === 'string' ? JSON.parse(v) : v, ${nested}];`;
  const r = await runWorkflow(script);
  assert.equal(r.result.stopReason, 'completed', JSON.stringify(r.result.error));
  assert.deepEqual(r.result.value, [JSON.parse(nested), JSON.parse(nested)]);
});
