// The "command" subagent provider (workflow row commandTemplate) and unparsable scripts,
// through the real `dsh workflow run`.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { agentOverlap, DSH, runWorkflow, tempDir } from './harness.mjs';

// The prompt reaches the shell as "$1", data only: the script text is the template's own.
const SHELL_ECHO = ['/bin/sh', '-c', 'printf "%s" "$1"', 'sh', '{prompt}'];

test('an unparsable script is rejected at start with script-invalid and no agent started', () => {
  const ws = tempDir();
  const file = join(tempDir(), 'w.js');
  writeFileSync(file, `await agent('return 1', {label: 'never'});\nreturn 1 +;`);
  const r = spawnSync(DSH, ['workflow', 'run', file, '--json'], { cwd: ws, encoding: 'utf8' });
  assert.equal(r.status, 2, r.stderr);
  assert.equal(r.stdout, '', 'no result for a rejected start');
  assert.equal(r.stderr, "dsh: the workflow was rejected (script-invalid): SyntaxError: Unexpected token ';' (line 2, column 11)\n");
  assert.ok(!r.stderr.includes('"subagent"'), 'no child was started');
  assert.ok(!r.stderr.includes('"type":"start"'), 'no run, so no events');
  // The same script made valid runs normally (the check does not reject good scripts).
  writeFileSync(file, `const x = await agent('return 1', {label: 'ok'});\nreturn x + '!';`);
  const good = spawnSync(DSH, ['workflow', 'run', file, '--json'], { cwd: ws, encoding: 'utf8' });
  assert.equal(good.status, 0, good.stderr);
  assert.deepEqual(JSON.parse(good.stdout), { value: '1!', stopReason: 'completed', agentsStarted: 1 });
});

test('a syntax error is reported at the line and column of the script the user wrote', () => {
  const ws = tempDir();
  const file = join(tempDir(), 'w.js');
  const rejected = (script) => {
    writeFileSync(file, script);
    const r = spawnSync(DSH, ['workflow', 'run', file], { cwd: ws, encoding: 'utf8' });
    assert.equal(r.status, 2, r.stderr);
    return r.stderr;
  };
  const prefix = 'dsh: the workflow was rejected (script-invalid): SyntaxError: ';
  assert.equal(rejected('const a = 1;\n  const b = (;\nreturn a;\n'), `${prefix}Unexpected token ';' (line 2, column 14)\n`);
  assert.equal(rejected('log("x");\n  foo bar\n'), `${prefix}Unexpected identifier 'bar' (line 2, column 7)\n`);
  // A block left open: the parser meets the wrapper's closing, which is not the user's; the
  // message names the end of the script instead of a '}' or ')' the user never wrote.
  const unclosed = 'unclosed block, bracket, string or template';
  assert.equal(rejected('const a = 1;\nif (a) {\n  return a;\n\n'), `${prefix}the script ends inside an ${unclosed} (line 3, column 12)\n`);
  assert.equal(rejected('return `abc'), `${prefix}the script ends inside an ${unclosed} (line 1, column 12)\n`);
  assert.equal(rejected('return [1,\n  2'), `${prefix}the script ends inside an ${unclosed} (line 2, column 4)\n`);
});

test('a command-template workflow returns the command output (structured with a schema)', async () => {
  const script = `
    const text = await agent('hello world', {label: 'echo'});
    const obj = await agent('{"n": 7}', {label: 'json', schema: {type: 'object'}});
    const nested = await agent('return "from nested"', {label: 'n', provider: 'nested'});
    return {text, obj, nested};`;
  const r = await runWorkflow(script, { rows: { workflow: { commandTemplate: SHELL_ECHO } } });
  assert.equal(r.status, 0, r.stderr);
  assert.deepEqual(r.result, { value: { text: 'hello world', obj: { n: 7 }, nested: 'from nested' }, stopReason: 'completed', agentsStarted: 3 });
  assert.equal(r.events[0].provider, 'command', 'a configured template is the default provider');
  const providers = r.events.filter((e) => e.type === 'agent-start').map((e) => e.provider);
  assert.deepEqual(providers, ['command', 'command', 'nested']);
  agentOverlap(r.events, assert);
});

test('a failing command fails its agent: null, agent-end ok false, the workflow completes', async () => {
  const script = `
    const failed = await agent('anything', {label: 'fails'});
    const killed = await agent('x', {label: 'killed', provider: 'command'});
    return {failed, killed};`;
  const rows = { workflow: { commandTemplate: ['/bin/sh', '-c', 'echo oops >&2; exit 3', 'sh', '{prompt}'] } };
  const r = await runWorkflow(script, { rows });
  assert.equal(r.status, 0, r.stderr);
  assert.deepEqual(r.result.value, { failed: null, killed: null });
  const ends = r.events.filter((e) => e.type === 'agent-end').map((e) => e.ok);
  assert.deepEqual(ends, [false, false]);
  const missing = await runWorkflow(`return await agent('x')`, { rows: { workflow: { commandTemplate: ['/nonexistent/tool', '{prompt}'] } } });
  assert.equal(missing.result.value, null);
  assert.equal(missing.result.stopReason, 'completed');
});

test('a prompt with shell metacharacters is passed literally, as one argument', async () => {
  const ws = tempDir('dsh-wf-ws-');
  const prompt = `a $(touch ${ws}/pwned) \`touch ${ws}/pwned2\` ; touch ${ws}/pwned3 | cat > ${ws}/out * 'q' "d" \\ $HOME\nline2 {prompt}`;
  const r = await runWorkflow(`return [await agent(args.p), await agent(args.p, {provider: 'command'})]`, {
    ws,
    args: { p: prompt },
    rows: { workflow: { commandTemplate: SHELL_ECHO } },
  });
  assert.equal(r.status, 0, r.stderr);
  assert.deepEqual(r.result.value, [prompt, prompt]);
  assert.deepEqual(readdirSync(ws), [], 'nothing the prompt spelled was executed');
  // No shell at all: argv straight to the program; {prompt} inside a larger element stays text.
  const direct = await runWorkflow(`return [await agent(args.p)]`, {
    ws,
    args: { p: prompt },
    rows: { workflow: { commandTemplate: ['/usr/bin/printf', '%s|%s', '{prompt}', 'x{prompt}'] } },
  });
  assert.deepEqual(direct.result.value, [`${prompt}|x{prompt}`]);
  assert.ok(!existsSync(join(ws, 'pwned')));
});
