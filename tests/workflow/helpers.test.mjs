// Workflow helpers and caps through the real `dsh workflow run`.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { agentOverlap, runWorkflow, tempDir } from './harness.mjs';

test('parallel fan-out honours maxConcurrentAgents: observed maximum equals the cap', async () => {
  const script = `
    phase('fan-out');
    return await parallel(args.items.map((x) => () => agent('await tools.sleep({ms: 300}); return ' + x, {label: 'item-' + x})));`;
  const r = await runWorkflow(script, { args: { items: [0, 1, 2, 3, 4, 5, 6, 7] }, rows: { workflow: { maxConcurrentAgents: 3 } } });
  assert.equal(r.status, 0, r.stderr);
  assert.deepEqual(r.result, { value: ['0', '1', '2', '3', '4', '5', '6', '7'], stopReason: 'completed', agentsStarted: 8 });
  assert.equal(agentOverlap(r.events, assert), 3);
  assert.deepEqual(r.events.map((e) => e.type).filter((t) => t !== 'agent-start' && t !== 'agent-end'), ['start', 'phase', 'end']);
  assert.ok(r.events.filter((e) => e.type === 'agent-start').every((e) => e.phase === 'fan-out'));
});

test('pipeline keeps item order and runs each item through its stages in order', async () => {
  // A barrier through the workspace: item 1's child waits until item 4's child has written its
  // file. Item 1 gets its value only when the items run concurrently: serialized, it would wait
  // until its deadline and its value would be null.
  const ws = tempDir('dsh-wf-ws-');
  const done4 = JSON.stringify(join(ws, '4.done'));
  const child = {
    1: `const fs = await import('node:fs'); while (!fs.existsSync(${done4})) await new Promise((r) => setTimeout(r, 10)); return 'a1'`,
    4: `(await import('node:fs')).writeFileSync(${done4}, ''); return 'a4'`,
  };
  const script = `
    const child = ${JSON.stringify(child)};
    return await pipeline(args.items,
      async (x, item, i) => { const t = await agent(child[x] ?? 'return "a' + x + '"', {label: 's1-' + x}); log('s1 ' + x); return t; },
      async (prev, item) => { log('s2 ' + item); return prev + '|b' + item; });`;
  const rows = { workflow: { maxConcurrentAgents: 4 }, 'sandbox-policy': { mode: 'workspace-write', workspaceRoot: ws }, 'ptc-runtime': { timeoutMs: 60000 } };
  const r = await runWorkflow(script, { ws, args: { items: [1, 2, 3, 4] }, rows });
  assert.equal(r.status, 0, r.stderr);
  assert.deepEqual(r.result.value, ['a1|b1', 'a2|b2', 'a3|b3', 'a4|b4'], 'items ran concurrently, results in item order');
  const logs = r.events.filter((e) => e.type === 'log').map((e) => e.message);
  for (const x of [1, 2, 3, 4]) assert.ok(logs.indexOf(`s1 ${x}`) < logs.indexOf(`s2 ${x}`), `item ${x}: stage order`);
});

test('agent(): text, structured output with a schema, null when the child fails', async () => {
  const script = `
    const text = await agent('return "hello " + (2 + 3)', {label: 'text'});
    const obj = await agent('return {n: 42, tags: ["a"]}', {label: 'obj', schema: {type: 'object'}});
    const failed = await agent('throw new Error("child broke")', {label: 'fails'});
    const mismatch = await agent('return "not an object"', {label: 'mismatch', schema: {type: 'object'}});
    const timedOut = await agent('for (;;) {}', {label: 'spins'});
    return {text, obj, failed, mismatch, timedOut, argsSeen: args};`;
  const r = await runWorkflow(script, { args: { k: 'v' }, rows: { 'ptc-runtime': { timeoutMs: 1500 } } });
  assert.equal(r.status, 0, r.stderr);
  assert.deepEqual(r.result.value, { text: 'hello 5', obj: { n: 42, tags: ['a'] }, failed: null, mismatch: null, timedOut: null, argsSeen: { k: 'v' } });
  const ends = Object.fromEntries(r.events.filter((e) => e.type === 'agent-end').map((e) => [e.label, e.ok]));
  assert.deepEqual(ends, { text: true, obj: true, fails: false, mismatch: false, spins: false });
  agentOverlap(r.events, assert);
});

test('maxTotalAgents: the agent past the cap fails the workflow with code limit', async () => {
  const script = `for (let i = 0; i < 5; i++) await agent('return ' + i); return 'unreachable';`;
  const r = await runWorkflow(script, { extra: ['--max-total-agents', '3'] });
  assert.equal(r.status, 1);
  assert.equal(r.result.stopReason, 'error');
  assert.equal(r.result.error.code, 'limit');
  assert.match(r.result.error.message, /maxTotalAgents \(3\)/);
  assert.equal(r.result.agentsStarted, 3);
  assert.equal(r.result.value, null);
  // The configured cap applies without a request value too.
  const c = await runWorkflow(`await parallel([1, 2, 3].map(() => () => agent('return 1'))); return 1`, { rows: { workflow: { maxTotalAgents: 2 } } });
  assert.equal(c.result.error.code, 'limit');
});

test('maxItemsPerCall: parallel and pipeline refuse more items', async () => {
  const rows = { workflow: { maxItemsPerCall: 4 } };
  const ok = await runWorkflow(`return await parallel([1, 2, 3, 4].map((x) => () => x * 2))`, { rows });
  assert.deepEqual(ok.result.value, [2, 4, 6, 8]);
  for (const call of ['parallel([1, 2, 3, 4, 5].map((x) => () => x))', 'pipeline([1, 2, 3, 4, 5], (x) => x)']) {
    const r = await runWorkflow(`return await ${call}`, { rows });
    assert.equal(r.result.stopReason, 'error', call);
    assert.equal(r.result.error.code, 'limit');
    assert.match(r.result.error.message, /5 items exceed maxItemsPerCall \(4\)/);
  }
});

test('a 10 000-line log burst with maxPendingCalls 8 completes, every line in order', async () => {
  const script = `phase('burst'); for (let i = 0; i < 10000; i++) log('line ' + i); return 'done';`;
  const r = await runWorkflow(script, { rows: { 'ptc-runtime': { maxPendingCalls: 8 } } });
  assert.equal(r.status, 0, r.stderr.slice(0, 2000));
  assert.equal(r.result.value, 'done');
  const logs = r.events.filter((e) => e.type === 'log');
  assert.equal(logs.length, 10000);
  logs.forEach((e, i) => assert.equal(e.message, `line ${i}`));
  assert.equal(r.events.at(-1).type, 'end', 'the queue drained before the end event');
});

test('a log burst under a small maxMessageBytes arrives whole, in bounded batches', async () => {
  const script = `for (let i = 0; i < 2000; i++) log('line ' + i + ' ' + 'x'.repeat(60)); return 'done';`;
  const r = await runWorkflow(script, { rows: { 'ptc-runtime': { maxMessageBytes: 65536 } } });
  assert.equal(r.status, 0, r.stderr.slice(0, 2000));
  assert.equal(r.result.stopReason, 'completed');
  assert.equal(r.events.filter((e) => e.type === 'log').length, 2000);
});

// A batch holds at most 4 KiB of UTF-8 events, less than the guest library itself, so batches fit
// whenever the program does; multi-byte text counts by its bytes (3 per CJK character here).
test('multi-byte log bursts arrive whole under the smallest maxMessageBytes the program fits in', async () => {
  const script = `for (let i = 0; i < 300; i++) log('行' + i + ' ' + '字'.repeat(80)); return 'done';`;
  const r = await runWorkflow(script, { rows: { 'ptc-runtime': { maxMessageBytes: 10000 } } });
  assert.equal(r.status, 0, r.stderr.slice(0, 2000));
  assert.equal(r.result.stopReason, 'completed', JSON.stringify(r.result));
  const logs = r.events.filter((e) => e.type === 'log');
  assert.equal(logs.length, 300);
  logs.forEach((e, i) => assert.equal(e.message, `行${i} ${'字'.repeat(80)}`));
});

test('a maxMessageBytes too small for the workflow program rejects the start, saying so', async () => {
  const r = await runWorkflow('return 1', { rows: { 'ptc-runtime': { maxMessageBytes: 4096 } } });
  assert.equal(r.status, 2);
  assert.equal(r.result, null);
  assert.match(
    r.stderr,
    /^dsh: the workflow was rejected \(limit\): the workflow program \(the engine's \d+-byte guest library with the script, args and meta\) does not fit in the runtime's maxMessageBytes: give the ptc-runtime row a larger maxMessageBytes$/m,
  );
});

// Hostile: the VM is no boundary, so a script can call the progress binding itself. Events are
// rebuilt from their documented fields; anything else is refused and fails the workflow instead
// of vanishing.
test('forged progress events are refused and fail the workflow', async () => {
  // Main-realm values, as the runtime only takes those from a binding call.
  const progress = (events) =>
    `await log.constructor('return workflow')().progress(log.constructor('return JSON')().parse(${JSON.stringify(JSON.stringify(events))}))`;
  const good = await runWorkflow(`${progress([{ type: 'log', message: 'm', phase: 'p', extra: { deep: 1 } }])}; return 1`);
  assert.equal(good.result.stopReason, 'completed', JSON.stringify(good.result));
  assert.deepEqual(good.events.find((e) => e.type === 'log'), { type: 'log', message: 'm', phase: 'p' });
  for (const forged of [{ type: 'log', message: { deep: [1] } }, { type: 'phase' }, { type: 'agent-start', agentId: 9 }, { type: 'log', message: 'a\u0000b' }]) {
    const r = await runWorkflow(`log('before'); ${progress([forged])}; return 1`);
    assert.equal(r.result.stopReason, 'error', JSON.stringify(forged));
    assert.match(r.result.error.message, /events are \{type: "log", message: string\}/, JSON.stringify(forged));
    assert.equal(r.events.filter((e) => e.type === 'agent-start').length, 0);
  }
});

test('agent() refuses options of the wrong type; agent-end names the phase', async () => {
  const bad = await runWorkflow(`return await agent('return 1', { provider: 42 })`);
  assert.equal(bad.result.error.code, 'exception');
  assert.match(bad.result.error.message, /options\.provider must be a string/);
  assert.equal(bad.result.agentsStarted, 0);
  const ok = await runWorkflow(`phase('p1'); return await agent('return 2', { label: 'L' })`);
  assert.equal(ok.result.value, '2', JSON.stringify(ok.result));
  const end = ok.events.find((e) => e.type === 'agent-end');
  assert.deepEqual({ label: end.label, phase: end.phase, ok: end.ok }, { label: 'L', phase: 'p1', ok: true });
});

test('the script: syntax errors, the synchronous-slice timeout and JSON-only results', async () => {
  // A syntax error is rejected by start() (no result; see command.test.mjs).
  const syntax = await runWorkflow('return (');
  assert.equal(syntax.status, 2);
  assert.equal(syntax.result, null);
  assert.match(syntax.stderr, /rejected \(script-invalid\): SyntaxError: the script ends inside an unclosed block, bracket, string or template \(line 1, column 9\)$/m);
  const spin = await runWorkflow('while (true) {}', { rows: { workflow: { syncTimeoutMs: 200 } } });
  assert.equal(spin.result.error.code, 'sync-timeout');
  for (const bad of ['return () => 1', 'return {x: NaN}', 'return new Map()', 'return 10n']) {
    const r = await runWorkflow(bad);
    assert.equal(r.result.stopReason, 'error', bad);
    assert.match(r.result.error.code, /invalid-output|exception/, bad);
  }
  const thrown = await runWorkflow(`throw new Error('script broke')`);
  assert.deepEqual(thrown.result.error, { code: 'exception', message: 'Error: script broke' });
  const undef = await runWorkflow(`log('x')`);
  assert.equal(undef.result.stopReason, 'completed');
  assert.equal(undef.result.value, null);
});

test('child agents run in the workflow request\'s cwd', async () => {
  const ws = tempDir('dsh-wf-ws-');
  mkdirSync(join(ws, 'sub'));
  const script = `return {wf: log.constructor('return process')().cwd(), child: await agent('return process.cwd()')}`;
  const r = await runWorkflow(script, { ws, extra: ['--cwd', join(ws, 'sub')] });
  assert.deepEqual(r.result.value, { wf: join(ws, 'sub'), child: join(ws, 'sub') }, JSON.stringify(r.result));
});
