// bootstrap/stripper.js, the out-of-process type stripper: ready after its warm-up, the same
// stripped text and the same syntax-error text (location and caret) as the child's own stripping
// for every format, answers in request order, and a malformed request ends it.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import path from 'node:path';
import { BOOTSTRAP_DIR, NODE, runProgram } from './fake-host.js';

// Sends the requests on fd 3 (a socket, as the host's control channel), ends its write side,
// resolves with the answer lines and the exit status.
function strip(requests, args = []) {
  const child = spawn(NODE, [path.join(BOOTSTRAP_DIR, 'stripper.js'), ...args], { stdio: ['ignore', 'pipe', 'pipe', 'pipe'] });
  const control = child.stdio[3];
  let out = '';
  let err = '';
  control.on('data', (d) => (out += d));
  control.on('error', () => {}); // the stripper may exit before reading everything
  child.stderr.on('data', (d) => (err += d));
  for (const request of requests) control.write(typeof request === 'string' ? request : `${JSON.stringify(request)}\n`);
  control.end();
  return new Promise((resolve) => child.on('close', (status) => resolve({ status, stderr: err, answers: out.split('\n').filter(Boolean).map((l) => JSON.parse(l)) })));
}

const FAILING = [
  ['async-function', 'const ok = 1;\nlet broken = ;\n'],
  ['async-function', 'enum E { A }'],
  ['vm-script', 'let a: number = 1\nreturn a'],
  ['scoped-repl', 'class P { constructor(private x: number) {} }'],
  ['repl', 'let x = <'],
];

test('syntax errors read exactly as when the child strips', async () => {
  const { answers, status } = await strip(FAILING.map(([format, source], i) => ({ id: i + 1, format, filename: '/tmp/[program]', source })));
  assert.equal(status, 0);
  assert.deepEqual(answers[0], { type: 'ready' });
  for (const [i, [format, source]] of FAILING.entries()) {
    const { result } = await runProgram(source, { format, cwd: '/tmp' });
    assert.equal(answers[i + 1].id, i + 1);
    assert.equal(answers[i + 1].ok, false);
    assert.equal(answers[i + 1].message, result.error.message, `${format}: ${source}`);
  }
});

test('stripped programs run as the original does, with lines and columns in place', async () => {
  const source = 'const n: number = 41\ntype T = 1\n[n].map((v: number): number => v + 1)\nreturn new Error("x").stack.split("\\n")[1]';
  const { answers } = await strip([{ id: 7, format: 'async-function', filename: '/tmp/[program]', source }]);
  const stripped = answers[1];
  assert.equal(stripped.id, 7);
  assert.equal(stripped.ok, true);
  assert.equal(stripped.code.length, source.length);
  assert.deepEqual(stripped.code.split('\n').map((l) => l.length), source.split('\n').map((l) => l.length));
  const original = await runProgram(source, { cwd: '/tmp' });
  const again = await runProgram(stripped.code, { cwd: '/tmp' });
  assert.deepEqual(again.result, original.result);
  assert.match(original.result.value, /\[program\]:4:8\)?$/);
});

test('a malformed request ends the stripper with status 2', async () => {
  for (const bad of ['{"id": 1, "format": "nope", "filename": "f", "source": ""}\n', '[1]\n', 'not json\n',
    '{"id": 1.5, "format": "repl", "filename": "f", "source": ""}\n', '{"id": 1, "format": "toString", "filename": "f", "source": ""}\n']) {
    const { status, answers } = await strip([bad]);
    assert.equal(status, 2, bad);
    assert.deepEqual(answers, [{ type: 'ready' }]);
  }
});

test('a request over --max-message-bytes is refused before it is stripped', async () => {
  const big = { id: 1, format: 'repl', filename: 'f', source: 'x'.repeat(5000) };
  const { status, answers, stderr } = await strip([big], ['--max-message-bytes=4096']);
  assert.equal(status, 2);
  assert.deepEqual(answers, [{ type: 'ready' }]);
  assert.match(stderr, /^ptc stripper: /);
});
