// Images: host-registered attachments as `Image` values, displayed through inspect() in argument
// order with text, inside the shared maxOutputBytes budget.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { statSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { spawn } from 'node:child_process';
import { DSH, patchFile, runProgram, Serve, tempDir, text } from './harness.js';
import { jpegBytes, pngBytes } from './image-fixtures.js';

function workspace() {
  const ws = tempDir('dsh-img-');
  writeFileSync(join(ws, 'a.png'), pngBytes(3, 2));
  writeFileSync(join(ws, 'b.jpg'), jpegBytes(640, 480));
  writeFileSync(join(ws, 'c.txt'), 'not an image');
  return ws;
}

// An output entry: the descriptor plus the registered file's identity (dev, ino as decimal
// strings) and size, which a host uses to find exactly that file again.
const entry = (attachmentId, path, width, height) => {
  const st = statSync(path, { bigint: true });
  return { type: 'image', attachmentId, path, width, height, dev: String(st.dev), ino: String(st.ino), size: Number(st.size) };
};
const A1 = (ws) => entry('a1', join(ws, 'a.png'), 3, 2);

async function show(program, { runtime, mode } = {}) {
  const ws = workspace();
  const { result } = await runProgram(program, { ws, runtime, mode, args: ['--image', `a1=${join(ws, 'a.png')}`, '--image', `b1=${join(ws, 'b.jpg')}`] });
  return { result, ws };
}

test('an image shown directly is an image entry between its label and the newline', async () => {
  const { result, ws } = await show('inspect(Image.get("a1"))');
  assert.equal(result.ok, true, JSON.stringify(result));
  assert.deepEqual(result.output, [{ type: 'text', text: '[Image a1 3x2]' }, A1(ws), { type: 'text', text: '\n' }]);
});

test('Image values: frozen, read from the file, JPEG too, unknown ids and construction', async () => {
  const { result } = await show(`
    const a = Image.get("a1"), b = Image.get("b1");
    return { a: [a.attachmentId, a.width, a.height, Object.isFrozen(a), a instanceof Image],
             b: [b.width, b.height], none: Image.get("zz") === undefined,
             ctor: (() => { try { new (Image as any)(); return "made"; } catch (e) { return e.constructor.name; } })() }`);
  assert.equal(result.ok, true, JSON.stringify(result));
  assert.deepEqual(result.value, { a: ['a1', 3, 2, true, true], b: [640, 480], none: true, ctor: 'TypeError' });
});

test('images nested in a Map entry, a Set value, an array and a Symbol property are emitted', async () => {
  const { result, ws } = await show(`
    const i = Image.get("a1");
    inspect(new Map([["k", i]]), new Set([i]), [{ deep: { er: i } }], { [Symbol("s")]: i })`);
  assert.equal(result.ok, true, JSON.stringify(result));
  const images = result.output.filter((e) => e.type === 'image');
  assert.equal(images.length, 4);
  for (const image of images) assert.deepEqual(image, A1(ws));
  assert.match(text(result), /Map\(1\) \{ 'k' => \[Image a1 3x2\] \}/);
  assert.ok(text(result).endsWith('\n'));
});

test('images as a Map key, an Error property and cause, and a class field are emitted in place', async () => {
  const { result, ws } = await show(`
    const i = Image.get("a1");
    class Holder { field = i }
    inspect(new Map([[i, "v"]]), Object.assign(new Error("e", { cause: i }), { shot: i }), new Holder())`);
  assert.equal(result.ok, true, JSON.stringify(result));
  assert.equal(result.output.filter((e) => e.type === 'image').length, 4);
  assert.deepEqual(result.output.slice(0, 2), [{ type: 'text', text: 'Map(1) { [Image a1 3x2]' }, A1(ws)]);
  assert.ok(result.output[2].text.startsWith(" => 'v' } Error: e"), result.output[2].text);
  assert.match(text(result), /shot: \[Image a1 3x2\][^]*\[cause\]: \[Image a1 3x2\]/);
  assert.match(text(result), /Holder \{ field: \[Image a1 3x2\] \}/);
});

test('custom inspection methods decide which nested images are visited', async () => {
  const { result } = await show(`
    const hidden = { img: Image.get("a1"), [Symbol.for("nodejs.util.inspect.custom")]() { return "hidden" } };
    inspect(hidden)`);
  assert.equal(result.ok, true, JSON.stringify(result));
  assert.deepEqual(result.output, [{ type: 'text', text: 'hidden\n' }]);
});

test('images and text follow argument order', async () => {
  const { result, ws } = await show('inspect("before", Image.get("a1"), "middle", Image.get("b1"), "after")');
  assert.equal(result.ok, true, JSON.stringify(result));
  assert.deepEqual(result.output, [
    { type: 'text', text: 'before [Image a1 3x2]' },
    A1(ws),
    { type: 'text', text: ' middle [Image b1 640x480]' },
    entry('b1', join(ws, 'b.jpg'), 640, 480),
    { type: 'text', text: ' after\n' },
  ]);
});

test('an image that overflows maxOutputBytes fails the run and keeps the prefix', async () => {
  const { result } = await show('inspect("x".repeat(40)); inspect(Image.get("a1")); inspect("never")', { runtime: { maxOutputBytes: 80 } });
  assert.equal(result.ok, false);
  assert.equal(result.error.kind, 'output-limit');
  assert.ok(text(result).startsWith('x'.repeat(40)), JSON.stringify(result));
  assert.equal(result.output.filter((e) => e.type === 'image').length, 0);
  assert.doesNotMatch(text(result), /never/);
});

test('a program-created PNG registered through a host binding is displayed', async () => {
  const ws = workspace();
  const program = `
    const fs = await import("node:fs");
    fs.copyFileSync("a.png", "chart.png");
    const id = await tools.registerImage({ path: "chart.png", attachmentId: "chart" });
    inspect("chart:", Image.get(id));
    return id`;
  const { result } = await runProgram(program, { ws, mode: 'workspace-write' });
  assert.equal(result.ok, true, JSON.stringify(result));
  assert.equal(result.value, 'chart');
  assert.deepEqual(result.output[1], entry('chart', join(ws, 'chart.png'), 3, 2));
});

test('Image.path names a file the program can read in the execution world', async () => {
  const { result, ws } = await show('const i = Image.get("a1"); return [i.path, (await import("node:fs")).readFileSync(i.path).length]');
  assert.equal(result.ok, true, JSON.stringify(result));
  assert.deepEqual(result.value, [join(ws, 'a.png'), pngBytes(3, 2).length]);
});

// An Image the program holds keeps its host record: the same file again is the same Image, and
// another file under that attachment id is refused.
test('re-registering an attachment id keeps the Images the program holds', async () => {
  const { result, ws } = await show(`
    const old = Image.get("a1");
    const again = await tools.registerImage({ path: "a.png", attachmentId: "a1" });
    let refused = "";
    try { await tools.registerImage({ path: "b.jpg", attachmentId: "a1" }) } catch (e) { refused = e.message }
    inspect(old);
    return [again, Image.get("a1") === old, refused]`);
  assert.equal(result.ok, true, JSON.stringify(result));
  assert.deepEqual(result.value.slice(0, 2), ['a1', true]);
  assert.match(result.value[2], /attachment id "a1" is already registered for .*a\.png \(3x2\), not .*b\.jpg \(640x480\)/);
  assert.deepEqual(result.output, [{ type: 'text', text: '[Image a1 3x2]' }, A1(ws), { type: 'text', text: '\n' }]);
});

// Hostile: a program naming host files outside its world learns nothing about them (existence,
// format, size), also through a symlink in its workspace: visibility is checked before the host
// reads anything, and again on the file it opened.
test('registering a file outside the execution world reveals nothing about it', async () => {
  const ws = workspace();
  const outside = tempDir('dsh-img-hidden-');
  writeFileSync(join(outside, 'secret.txt'), 'not an image');
  writeFileSync(join(outside, 'hidden.png'), pngBytes(7, 7));
  symlinkSync(join(outside, 'hidden.png'), join(ws, 'link.png'));
  const paths = [...['secret.txt', 'hidden.png', 'missing.png'].map((name) => join(outside, name)), join(ws, 'link.png')];
  const { result } = await runProgram(`const out = [];
    for (const path of ${JSON.stringify(paths)}) { try { await tools.registerImage({ path }); out.push("registered") } catch (e) { out.push(e.message) } }
    return out`, { ws });
  assert.equal(result.ok, true, JSON.stringify(result));
  for (const [i, message] of result.value.entries()) {
    assert.ok(message.includes(`the execution world cannot see ${paths[i]}: the host path has no execution-world mapping`), message);
    assert.doesNotMatch(message, /PNG|JPEG|7x7|No such file/);
  }
});

// Hostile: a name with a NUL byte is refused, never cut at the NUL into another file or id.
test('tools.registerImage refuses a path or attachmentId with a NUL byte, or an attachmentId that is not a string', async () => {
  const ws = workspace();
  const { result } = await runProgram(`const out = [];
    for (const a of [{ path: "a.png\\u0000.txt" }, { path: "a.png", attachmentId: "a\\u0000b" }, { path: "a.png", attachmentId: null }]) {
      try { out.push(await tools.registerImage(a)) } catch (e) { out.push(e.message) }
    }
    out.push(await tools.registerImage({ path: "a.png", attachmentId: "ok" }));
    return out`, { ws });
  assert.equal(result.ok, true, JSON.stringify(result));
  const refused = 'tools.registerImage expects {path: string, attachmentId?: string}';
  assert.deepEqual(result.value, [refused, refused, refused, 'ok']);
});

test('registering a file that is not an image rejects inside the program', async () => {
  const ws = workspace();
  const { result } = await runProgram('try { await tools.registerImage({ path: "c.txt" }) } catch (e) { return e.message }', { ws });
  assert.equal(result.ok, true, JSON.stringify(result));
  assert.match(result.value, /not a PNG or JPEG/);
});

test('an unsupported --image file rejects the run before it starts', async () => {
  const ws = workspace();
  const patch = patchFile({ ws });
  const child = spawn(DSH, ['headless', '--patch', patch, '-e', 'inspect(1)', '--image', `t=${join(ws, 'c.txt')}`], { stdio: ['ignore', 'pipe', 'pipe'] });
  let stderr = '';
  child.stderr.on('data', (d) => (stderr += d));
  const status = await new Promise((r) => child.on('close', r));
  assert.equal(status, 2);
  assert.match(stderr, /unsupported.*not a PNG or JPEG/);
});

test('an image file the execution world cannot see rejects the run before it starts', async () => {
  const ws = workspace();
  const outside = tempDir('dsh-img-outside-');
  writeFileSync(join(outside, 'x.png'), pngBytes(3, 2));
  const patch = patchFile({ ws });
  const child = spawn(DSH, ['headless', '--patch', patch, '-e', 'inspect(1)', '--image', `x=${join(outside, 'x.png')}`], { stdio: ['ignore', 'pipe', 'pipe'] });
  let stderr = '';
  child.stderr.on('data', (d) => (stderr += d));
  assert.equal(await new Promise((r) => child.on('close', r)), 2);
  assert.match(stderr, /not-mapped.*cannot see/);
});

test('dsh prints images for a person as one line with the path', async () => {
  const ws = workspace();
  const patch = patchFile({ ws });
  const child = spawn(DSH, ['headless', '--patch', patch, '-e', 'inspect("see", Image.get("a1"))', '--image', `a1=${join(ws, 'a.png')}`], { stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  child.stdout.on('data', (d) => (stdout += d));
  assert.equal(await new Promise((r) => child.on('close', r)), 0);
  assert.ok(stdout.includes(`[image a1 3x2 ${join(ws, 'a.png')}]\n`), stdout);
});

for (const [label, runtime] of [
  ['vm-script', { executionMode: 'vm-script' }],
  ['scoped REPL', { executionMode: 'persistent-in-memory' }],
  ['Node REPL', { executionMode: 'persistent-in-memory', replScoped: false }],
]) {
  test(`images display in ${label}`, async () => {
    const { result, ws } = await show('inspect([Image.get("a1")])', { runtime });
    assert.equal(result.ok, true, JSON.stringify(result));
    assert.deepEqual(result.output, [{ type: 'text', text: '[ [Image a1 3x2]' }, A1(ws), { type: 'text', text: ' ]\n' }]);
  });
}

test('serve: run requests carry images, and registrations live as long as the retained process', async () => {
  const ws = workspace();
  const srv = new Serve({ ws, mode: 'workspace-write', runtime: { executionMode: 'vm-script', scriptPersistence: true } });
  try {
    const first = await srv.run('r1', 'inspect(Image.get("a1")); await tools.registerImage({ path: "a.png", attachmentId: "later" }); 1', {
      stateOwner: 'o', images: [{ attachmentId: 'a1', path: join(ws, 'a.png') }],
    });
    assert.equal(first.ok, true, JSON.stringify(first));
    assert.deepEqual(first.output[1], A1(ws));
    const second = await srv.run('r2', 'inspect(Image.get("later"), Image.get("a1") !== undefined)', { stateOwner: 'o' });
    assert.equal(second.ok, true, JSON.stringify(second));
    assert.equal(second.output[1].attachmentId, 'later');
    assert.equal(text(second), '[Image later 3x2] true\n');
  } finally {
    await srv.close();
  }
});

// Refused before its program is sent, the run leaves the retained environment as it was.
test('serve: a retained environment keeps an attachment id\'s first file across runs', async () => {
  const ws = workspace();
  const srv = new Serve({ ws, runtime: { executionMode: 'vm-script', scriptPersistence: true } });
  const a1 = [{ attachmentId: 'a1', path: join(ws, 'a.png') }];
  try {
    const first = await srv.run('r1', 'var held = Image.get("a1"); 1', { stateOwner: 'o', images: a1 });
    assert.equal(first.ok, true, JSON.stringify(first));
    const again = await srv.run('r2', 'Image.get("a1") === held', { stateOwner: 'o', images: a1 });
    assert.equal(again.value, true, JSON.stringify(again));
    const other = await srv.run('r3', '1', { stateOwner: 'o', images: [{ attachmentId: 'a1', path: join(ws, 'b.jpg') }] });
    assert.equal(other.error?.kind, 'exception', JSON.stringify(other));
    assert.match(other.error.message, /image registration failed: attachment id "a1" is already registered/);
    assert.equal(other.retained.state, 'preserved');
    const after = await srv.run('r4', 'inspect(held); Image.get("a1") === held', { stateOwner: 'o' });
    assert.equal(after.value, true, JSON.stringify(after));
    assert.deepEqual(after.output[1], A1(ws));
  } finally {
    await srv.close();
  }
});

const forge = (line) => `(await import("node:fs")).writeSync(3, ${JSON.stringify(line)}); await new Promise(r => setTimeout(r, 2000))`;

test('an image frame for an unregistered attachmentId is a protocol failure', async () => {
  const s = new Serve();
  try {
    const r = await s.run('bad', forge('{"type":"image","run":1,"attachmentId":"nope","path":"/etc/passwd","width":1,"height":1}\n'));
    assert.equal(r.error.kind, 'protocol', JSON.stringify(r));
    assert.match(r.error.message, /unregistered attachmentId/);
  } finally {
    await s.close();
  }
});

test('the host describes a registered image from its own record, not the child\'s fields', async () => {
  const ws = workspace();
  const s = new Serve({ ws });
  try {
    const r = await s.run('forged', `(await import("node:fs")).writeSync(3, '{"type":"image","run":1,"attachmentId":"a1","path":"/etc/shadow","width":9999,"height":1}\\n'); 1`, {
      images: [{ attachmentId: 'a1', path: join(ws, 'a.png') }],
    });
    assert.equal(r.ok, true, JSON.stringify(r));
    assert.deepEqual(r.output, [A1(ws)]);
  } finally {
    await s.close();
  }
});
