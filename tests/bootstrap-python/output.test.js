// Captured output of the Python child: print, sys.stdout/sys.stderr, native fd 1/2 writes and
// processes the program starts, in order; inspect() and Image values.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ChildSession, COMMAND, runProgram } from './python-child.js';

const textOf = async (program, options) => {
  const { result, text } = await runProgram(program, options);
  assert.equal(result.ok, true, JSON.stringify(result));
  return text;
};

test('print, stdout, stderr, native fd writes and a child process keep their order', async () => {
  const program = [
    'import os, sys, subprocess',
    'print("one")',
    'os.write(1, b"two\\n")',
    'sys.stderr.write("three\\n")',
    'os.write(2, b"four\\n")',
    'subprocess.run(["/bin/sh", "-c", "echo five; echo six >&2"])',
    'sys.stdout.write("seven")',
    'print("", "eight", sep="|")',
  ].join('\n');
  assert.equal(await textOf(program), 'one\ntwo\nthree\nfour\nfive\nsix\nseven|eight\n');
});

test('control: without draining the native pipe first, native text would follow print text', async () => {
  // os.write happens before print in program order; the pipe is drained before print's frame.
  const t = await textOf('import os\nfor i in range(50):\n    os.write(1, f"n{i} ".encode())\n    print(f"p{i}", end=" ")');
  assert.equal(t, Array.from({ length: 50 }, (_, i) => `n${i} p${i} `).join(''));
});

test('sys.stdout.buffer writes reassemble a character split across writes', async () => {
  assert.equal(await textOf('import sys\nb = "€".encode()\nsys.stdout.buffer.write(b[:1])\nsys.stdout.buffer.write(b[1:])\nprint()'), '€\n');
});

test('native bytes that are not UTF-8 become U+FFFD', async () => {
  assert.equal(await textOf('import os\nos.write(1, b"a\\xffb\\n")'), 'a\uFFFDb\n');
});

test('lone surrogates in printed text become U+FFFD', async () => {
  assert.equal(await textOf('print("x\\ud800y")'), 'x\uFFFDy\n');
});

test('output written just before a synchronous hot loop reaches the host', async () => {
  for (const write of ['print("before the loop", flush=True)', 'import os\nos.write(1, b"before the loop\\n")']) {
    const session = new ChildSession({ command: COMMAND });
    try {
      await session.waitFor((f) => f.type === 'hello');
      session.send({ type: 'run', run: 1, format: 'async-function', program: `${write}\nwhile True:\n    pass`, cwd: '/', bindings: [] });
      // print() writes its text and its end separately: the host merges adjacent text entries.
      const joined = () => session.frames.filter((f) => f.type === 'text').map((f) => f.text).join('');
      await session.waitFor(() => joined().endsWith('\n'));
      assert.equal(joined(), 'before the loop\n');
    } finally {
      await session.kill();
    }
  }
});

test('text larger than one control message is split over frames within the limit', async () => {
  const { frames, text, violations } = await runProgram('print("é" * 10000)', { maxMessageBytes: 4096 });
  assert.equal(text, `${'é'.repeat(10000)}\n`);
  assert.ok(frames.filter((f) => f.type === 'text').length > 4);
  assert.deepEqual(violations, []);
});

test('inspect renders strings raw and other values with repr, one group per call', async () => {
  assert.equal(await textOf('inspect("a", "b\\nc", {"k": [1, None, 2.5]}, ("t",), b"x")\ninspect()'),
    "a b\nc {'k': [1, None, 2.5]} ('t',) b'x'\n\n");
});

test('inspect has no depth or length limits and shows cycles', async () => {
  const t = await textOf('a = [list(range(3000)), "x" * 20000]\na.append(a)\ninspect(a)');
  assert.ok(t.includes('2999') && t.includes('x'.repeat(20000)) && t.includes('[...]'));
});

test('a throwing __repr__ keeps the earlier arguments visible and fails the run', async () => {
  const { result, text } = await runProgram('class Bad:\n    def __repr__(self):\n        raise ValueError("fmt")\ninspect("before", Bad())');
  assert.equal(result.error.kind, 'exception');
  assert.match(result.error.message, /ValueError: fmt$/);
  assert.equal(text, 'before\n');
});

const IMAGES = [{ attachmentId: 'a1', path: '/w/a.png', width: 3, height: 2 }, { attachmentId: 'b1', path: '/w/b.jpg', width: 640, height: 480 }];

async function imageRun(program) {
  const session = new ChildSession({ command: COMMAND });
  try {
    await session.waitFor((f) => f.type === 'hello');
    session.send({ type: 'run', run: 1, format: 'async-function', program, cwd: '/', bindings: [], images: IMAGES });
    const result = await session.waitFor((f) => f.type === 'result');
    // Adjacent text frames merged, as the host's output ledger does.
    const entries = [];
    for (const f of session.frames) {
      if (f.type === 'image') entries.push({ attachmentId: f.attachmentId });
      else if (f.type === 'text' && typeof entries.at(-1) === 'string') entries[entries.length - 1] += f.text;
      else if (f.type === 'text') entries.push(f.text);
    }
    return { result, entries };
  } finally {
    await session.kill();
  }
}

test('images reached by inspect split the group in argument order', async () => {
  const { result, entries } = await imageRun('a = Image.get("a1")\ninspect("see", a, {"nested": [Image.get("b1")]})\nreturn [a.attachment_id, a.path, a.width, a.height]');
  assert.deepEqual(result.value, ['a1', '/w/a.png', 3, 2]);
  assert.deepEqual(entries, ['see [Image a1 3x2]', { attachmentId: 'a1' }, " {'nested': [[Image b1 640x480]", { attachmentId: 'b1' }, ']}\n']);
});

test('programs cannot make or change Images, and a printed label is only text', async () => {
  const { result, entries } = await imageRun([
    'errors = []',
    'try:\n    Image()\nexcept TypeError as e:\n    errors.append(str(e))',
    'try:\n    Image.get("a1").path = "/etc/passwd"\nexcept AttributeError as e:\n    errors.append(str(e))',
    'print(Image.get("a1"))',
    'inspect("[Image a1 3x2]")',
    'return [errors, Image.get("missing") is None]',
  ].join('\n'));
  assert.deepEqual(result.value, [['Image values are registered by the host: use Image.get(attachment_id)', 'Image values are read-only'], true]);
  assert.deepEqual(entries, ['[Image a1 3x2]\n[Image a1 3x2]\n']);
});
