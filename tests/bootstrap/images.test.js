// Images in the child: the registry filled by `image-register` frames and the run frame's
// `images`, frozen Image values, and inspect() splitting text groups around the images it reaches.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ChildSession } from './fake-host.js';

const A = { attachmentId: 'a', path: '/w/a.png', width: 4, height: 3 };

// Starts a child, sends `before` frames, then one run; returns the run's frames after hello.
async function run(program, { before = [], images, bindings = [], reply, format = 'async-function' } = {}) {
  const session = new ChildSession({
    onFrame: (frame, child) => {
      if (frame.type === 'call') reply(frame, child);
    },
  });
  try {
    await session.waitFor((f) => f.type === 'hello');
    for (const frame of before) session.send(frame);
    const frame = { type: 'run', run: 1, format, program, cwd: process.cwd(), discardCompletion: false, bindings };
    if (images) frame.images = images;
    session.send(frame);
    const result = await session.waitFor((f) => f.type === 'result' || f.type === 'revoked');
    return { result, frames: session.frames.filter((f) => f.type === 'text' || f.type === 'image'), violations: session.violations };
  } finally {
    await session.kill();
  }
}

const image = (d) => ({ type: 'image', run: 1, ...d });
const text = (t) => ({ type: 'text', run: 1, text: t });

test('an image-register frame makes Image.get return a frozen Image', async () => {
  const { result } = await run('const i = Image.get("a"); return [i.attachmentId, i.path, i.width, i.height, Object.isFrozen(i), i instanceof Image, Image.get("b") === undefined]', {
    before: [{ type: 'image-register', ...A }],
  });
  assert.deepEqual(result.value, ['a', '/w/a.png', 4, 3, true, true, true]);
});

test('the run frame`s images are registered before the program starts', async () => {
  const { frames } = await run('inspect(Image.get("a"))', { images: [A] });
  assert.deepEqual(frames, [text('[Image a 4x3]'), image(A), text('\n')]);
});

test('text groups split around nested images, in argument order', async () => {
  const { frames } = await run('const i = Image.get("a"); inspect("x", [i], new Map([[i, 1]]))', { images: [A] });
  assert.deepEqual(frames, [text('x [ [Image a 4x3]'), image(A), text(' ] Map(1) { [Image a 4x3]'), image(A), text(' => 1 }\n')]);
});

test('programs cannot construct Images or forge the markers', async () => {
  const { result, frames } = await run(`
    let made = "no"; try { new (Image as any)(); made = "yes" } catch {}
    inspect(["\\uE000abc:0\\uE001"]); return made`, { images: [A] });
  assert.equal(result.value, 'no');
  assert.equal(frames.filter((f) => f.type === 'image').length, 0);
});

test('a marker forged before the first Image in the same value is text, and the Image after it still renders', async () => {
  const { frames } = await run('inspect(["\\uE000x:0\\uE001", Image.get("a")])', { images: [A] });
  assert.deepEqual(frames, [text("[ '\uE000x:0\uE001', [Image a 4x3]"), image(A), text(' ]\n')]);
});

// The marker is drawn at the first Image (inspect.js): formatting without one never loads
// node:crypto. The bundle loads each import on first use, so this holds where the bundle runs;
// the ESM sources load it with the module.
test('inspect of values without Images loads no crypto module', async () => {
  const { result } = await run(`const before = process.moduleLoadList.length;
    inspect({ a: [1, "b"] }, new Map([[1, { c: 2 }]]), 3n);
    return process.moduleLoadList.slice(before).filter((name) => name.includes("crypto"))`);
  assert.deepEqual(result.value, []);
});

test('if formatting throws, earlier images and text stay visible', async () => {
  const { result, frames } = await run(`
    const evil = { [Symbol.for("nodejs.util.inspect.custom")]() { throw new Error("fmt") } };
    inspect("a", Image.get("a"), evil)`, { images: [A] });
  assert.equal(result.ok, false);
  assert.deepEqual(frames, [text('a [Image a 4x3]'), image(A), text('\n')]);
});

test('an image registered before a binding reply is visible when the call resolves', async () => {
  const { result, frames } = await run('const id = await tools.make(); inspect(Image.get(id)); return id', {
    bindings: [{ global: 'tools', functions: ['make'] }],
    reply: (frame, child) => {
      child.send({ type: 'image-register', ...A, attachmentId: 'made' });
      child.send({ type: 'reply', call: frame.call, ok: true, value: 'made' });
    },
  });
  assert.equal(result.value, 'made');
  assert.equal(frames[1].attachmentId, 'made');
});

test('an Image outside inspect renders as its label', async () => {
  const { result } = await run('return (await import("node:util")).inspect({ i: Image.get("a") })', { images: [A] });
  assert.equal(result.value, '{ i: [Image a 4x3] }');
});

test('a malformed image-register frame is a protocol error (exit 2)', async () => {
  const session = new ChildSession();
  await session.waitFor((f) => f.type === 'hello');
  session.send({ type: 'image-register', attachmentId: '', path: '/x', width: 1, height: 1 });
  const exit = await session.exited;
  assert.equal(exit.code, 2);
  assert.match(session.stderr, /attachmentId/);
});

test('images inspected after a revoke are dropped like text', async () => {
  const session = new ChildSession({
    onFrame: (frame, child) => {
      if (frame.type === 'call') child.send({ type: 'revoke', run: 1 });
    },
  });
  try {
    await session.waitFor((f) => f.type === 'hello');
    session.send({ type: 'image-register', ...A });
    session.send({
      type: 'run', run: 1, format: 'async-function', cwd: process.cwd(), discardCompletion: false,
      bindings: [{ global: 'tools', functions: ['wait'] }],
      program: 'inspect(Image.get("a")); try { await tools.wait() } catch {} inspect("late", Image.get("a"))',
    });
    const terminal = await session.waitFor((f) => f.type === 'result' || f.type === 'revoked');
    assert.equal(terminal.type, 'revoked');
    const output = session.frames.filter((f) => f.type === 'text' || f.type === 'image');
    assert.deepEqual(output, [text('[Image a 4x3]'), image(A), text('\n')]);
  } finally {
    await session.kill();
  }
});
