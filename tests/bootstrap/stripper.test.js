// bootstrap/stripper.js, the out-of-process type stripper: ready after its warm-up, the same
// stripped text and the same syntax-error text (location and caret) as the child's own stripping
// for every format, answers in request order, and a malformed request ends it.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import path from 'node:path';
import { BOOTSTRAP_DIR, ChildSession, NODE, runProgram } from './fake-host.js';
import { renameSyntaxError } from '../../bootstrap/typescript.js';

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

// The host sends the stripper the name `[program]` and a refusal on to the child as the run frame's
// `syntaxError`: the child reports it as its own strip would, naming its own file, and so, in a
// retained process too, never loads amaro for it. The control: the same programs stripped by the
// child load it.
const AMARO = "process.moduleLoadList.includes('NativeModule internal/deps/amaro/dist/index')";
test("a refusal passed on as syntaxError reads as the child's own, and the child never loads amaro", async () => {
  const { answers } = await strip(FAILING.map(([format, source], i) => ({ id: i + 1, format, filename: '[program]', source })));
  for (const [i, [format, source]] of FAILING.entries()) {
    const { message } = answers[i + 1];
    assert.match(message, /\n    at \[program\]:\d+:\d+\n/, 'the stripper names the file it was given');
    for (const syntaxError of [message, undefined]) {
      const session = new ChildSession();
      await session.waitFor((frame) => frame.type === 'hello');
      const ended = format === 'async-function' || format === 'vm-script' ? '' : ';';
      session.send({ type: 'run', run: 1, format, program: source, syntaxError, cwd: '/tmp', bindings: [], retain: true });
      const refused = await session.waitFor((frame) => frame.type === 'result' && frame.run === 1);
      const after = format === 'async-function' ? `return ${AMARO}` : `${ended}${AMARO}`;
      // `stripped` as the host sends it: this check run strips nothing itself.
      session.send({ type: 'run', run: 2, format, program: after, stripped: after, cwd: '/tmp', bindings: [], retain: true });
      const loaded = await session.waitFor((frame) => frame.type === 'result' && frame.run === 2);
      await session.kill();
      const { result } = await runProgram(source, { format, cwd: '/tmp' });
      assert.equal(refused.ok, false);
      assert.equal(refused.error.message, result.error.message, `${format}: ${source}`);
      assert.equal(loaded.value, syntaxError === undefined, `${format}: amaro loaded`);
    }
  }
});

test('renameSyntaxError renames only the location line of the layout it knows', () => {
  const located = "SyntaxError: Expected '}'\n    at [program]:2:3\nab {\n  ^";
  assert.equal(renameSyntaxError(located, '/w/[program]'), "SyntaxError: Expected '}'\n    at /w/[program]:2:3\nab {\n  ^");
  for (const kept of ['SyntaxError: no location', 'SyntaxError: x\n    at [program]:2:3\nab {\nno caret',
    'SyntaxError: x\n    at [other]:2:3\nab {\n^', '    at [program]:1:1\nab\n^']) {
    assert.equal(renameSyntaxError(kept, '/w/[program]'), kept);
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
