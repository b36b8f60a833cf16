// In-process unit tests of the pure bootstrap modules: lossless JSON, frame reading, text frame
// splitting, result-frame limits and the import rewrite.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { encodeLosslessJson, LossyValueError, MAX_VALUE_DEPTH } from '../../bootstrap/lossless-json.js';
import { FrameReader } from '../../bootstrap/frame-reader.js';
import { FrameWriter, FrameTooLargeError } from '../../bootstrap/frame-writer.js';
import { buildResultFrame } from '../../bootstrap/result-frame.js';
import { parseOptions } from '../../bootstrap/options.js';
import { rewriteDynamicImports } from '../../bootstrap/imports/import-rewrite.js';

function lossy(value) {
  try {
    encodeLosslessJson(value, 'result');
  } catch (error) {
    assert.ok(error instanceof LossyValueError, `unexpected ${error}`);
    return error.message;
  }
  assert.fail('value was accepted');
}

test('lossless JSON round-trips plain data exactly, shared (acyclic) references included', () => {
  const shared = { k: 'v' };
  const value = { a: [1, -2.5, 1e21, true, false, null, 'é🎉"\\\n'], b: { c: shared, d: shared }, '': 0, 'a b': [] };
  const text = encodeLosslessJson(value, 'result');
  assert.deepEqual(JSON.parse(text), value);
  assert.equal(text, JSON.stringify(value));
  assert.equal(encodeLosslessJson(Object.create(null), 'result'), '{}');
});

test('lossless JSON names the lossy path and kind', () => {
  assert.equal(lossy({ a: [1, 2, NaN] }), 'result.a[2] is NaN');
  assert.equal(lossy({ 'a b': undefined }), 'result["a b"] is undefined');
  assert.equal(lossy([Infinity]), 'result[0] is Infinity');
  assert.equal(lossy(-Infinity), 'result is -Infinity');
  assert.equal(lossy({ z: -0 }), 'result.z is -0');
  assert.equal(lossy({ f() {} }), 'result.f is a function');
  assert.equal(lossy({ s: Symbol('x') }), 'result.s is a symbol');
  assert.equal(lossy({ n: 10n }), 'result.n is a BigInt');
  assert.equal(lossy([1, , 3]), 'result[1] is a hole in a sparse array');
  assert.match(lossy({ d: new Date(0) }), /^result\.d is a Date instance/);
  assert.match(lossy(new Map()), /^result is a Map instance/);
  assert.match(lossy(new (class Point {})()), /^result is a Point instance/);
  const cycle = { list: [] };
  cycle.list.push(cycle);
  assert.equal(lossy(cycle), 'result.list[0] is a circular reference');
  assert.equal(lossy('\uD800x'), 'result contains a lone surrogate');
  assert.equal(lossy({ ['\uDC00']: 1 }), 'result["\\udc00"] (property name) contains a lone surrogate');
  assert.match(lossy({ [Symbol('k')]: 1 }), /^result has a symbol-keyed property/);
  const extra = [1];
  extra.tag = 'x';
  assert.equal(lossy(extra), 'result has a non-index property "tag"');
  assert.equal(lossy(Object.defineProperty({}, 'hidden', { value: 1 })), 'result.hidden is a non-enumerable property');
  assert.match(lossy(new Number(1)), /boxed primitive/);
  assert.equal(lossy(new Proxy({}, {})), 'result is a Proxy');
  assert.equal(lossy({ get x() { throw new Error('nope'); } }), 'result.x could not be read: nope');
});

test('lossless JSON refuses nesting deeper than MAX_VALUE_DEPTH, naming the limit', () => {
  const nested = (levels) => {
    let value = 1;
    for (let i = 0; i < levels; i++) value = i % 2 ? { k: value } : [value];
    return value;
  };
  assert.equal(MAX_VALUE_DEPTH, 10000);
  assert.equal(JSON.parse(encodeLosslessJson(nested(MAX_VALUE_DEPTH), 'result')).constructor, Object);
  const message = 'result nests arrays and objects deeper than 10000 levels (the limit for values)';
  assert.equal(lossy(nested(MAX_VALUE_DEPTH + 1)), message);
  // Far deeper than the stack allows recursing: still the limit, not a RangeError.
  let deep = [];
  for (let i = 0; i < 200000; i++) deep = [deep];
  assert.equal(lossy(deep), message);
});

test('frame reader splits chunks into frames and enforces the limit on the JSON text', () => {
  const frames = [];
  const errors = [];
  const reader = new FrameReader(12, (frame) => frames.push(frame), (error) => errors.push(error.message));
  reader.push(Buffer.from('{"a":1}\n{"b"'));
  reader.push(Buffer.from(':2}\n{"c":"1234"}\n'));
  assert.deepEqual(frames, [{ a: 1 }, { b: 2 }, { c: '1234' }]); // '{"c":"1234"}' is 12 bytes
  reader.push(Buffer.from('{"d":"12345"}')); // 13 bytes, refused before its newline arrives
  assert.deepEqual(errors, ['incoming control frame exceeds 12 bytes']);
  reader.push(Buffer.from('\n{"e":1}\n'));
  assert.equal(frames.length, 3, 'a failed reader delivers nothing more');
});

test('frame reader accepts a frame of exactly the limit and rejects non-objects', () => {
  const frames = [];
  const errors = [];
  const exact = new FrameReader(8, (frame) => frames.push(frame), (error) => errors.push(error.message));
  exact.push(Buffer.from('{"a":12}\n')); // 8 bytes of JSON
  assert.deepEqual(frames, [{ a: 12 }]);
  const arrays = new FrameReader(100, () => {}, (error) => errors.push(error.message));
  arrays.push(Buffer.from('[1]\n'));
  const junk = new FrameReader(100, () => {}, (error) => errors.push(error.message));
  junk.push(Buffer.from('nope\n'));
  assert.equal(errors[0], 'incoming control frame is not a JSON object');
  assert.match(errors[1], /^incoming control frame is not JSON/);
});

test('text frames are split below the limit at code point boundaries', () => {
  const file = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'ptc-writer-')), 'frames');
  const fd = fs.openSync(file, 'w');
  const writer = new FrameWriter(fd, 64, () => assert.fail('lost'));
  const text = `${'é'.repeat(40)}🎉"\\\u0001\n${'x'.repeat(50)}🎉🎉\uD800end`;
  writer.sendText(7, text);
  fs.closeSync(fd);
  const lines = fs.readFileSync(file, 'utf8').split('\n').slice(0, -1);
  assert.ok(lines.length > 3);
  for (const line of lines) assert.ok(Buffer.byteLength(line) <= 64, `frame too large: ${line}`);
  assert.ok(lines.some((line) => Buffer.byteLength(line) >= 60), 'frames are filled up to the limit');
  const frames = lines.map((line) => JSON.parse(line));
  assert.ok(frames.every((frame) => frame.type === 'text' && frame.run === 7));
  assert.equal(frames.map((frame) => frame.text).join(''), text.toWellFormed());
});

test('text frames carry exactly what JSON.stringify would write, on every encoding path', () => {
  const file = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'ptc-writer-')), 'frames');
  const fd = fs.openSync(file, 'w');
  const texts = [
    'plain',
    'a"b\\c\n\t\r\b\f\u0000\u001f\u007f é€🎉\u2028\u2029 end',
    '\uD800 lone \uDC00',
    ('y'.repeat(79) + '\n').repeat(2000), // sparse escapes: copied between them
    '\u0001a'.repeat(5000), // dense escapes: stringified whole
    'x'.repeat(3 << 20) + '\u0002'.repeat(10), // longer than the kept scratch buffer, and grown
    'é'.repeat(50) + '\u0004'.repeat(60), // grows the buffer it is written into
  ];
  // Each text through a fresh writer, then all through one (its scratch buffer reused).
  for (const text of texts) new FrameWriter(fd, 1 << 30, () => assert.fail('lost')).sendText(9, text);
  const writer = new FrameWriter(fd, 1 << 30, () => assert.fail('lost'));
  for (const text of texts) writer.sendText(9, text);
  fs.closeSync(fd);
  const want = texts.map((text) => `{"type":"text","run":9,"text":${JSON.stringify(text.toWellFormed())}}\n`).join('').repeat(2);
  assert.ok(fs.readFileSync(file).equals(Buffer.from(want, 'utf8')));
});

test('frames over the limit are refused whole', () => {
  const writer = new FrameWriter(-1, 16, () => assert.fail('nothing may be written'));
  assert.throws(() => writer.send({ type: 'call', args: ['long enough'] }), FrameTooLargeError);
});

test('JSON frames are written byte for byte, in the kept buffer and in one of their own', () => {
  const file = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'ptc-writer-')), 'frames');
  const fd = fs.openSync(file, 'w');
  const frames = [
    '{"type":"call","run":1,"call":0,"args":[{}]}',
    `{"type":"result","value":${JSON.stringify('é€🎉'.repeat(1000))}}`,
    `{"type":"result","value":${JSON.stringify('é'.repeat((2 << 20) + 5))}}`, // over the kept buffer's bound
    '{"type":"call","run":1,"call":1,"args":[2]}', // after it, in the kept buffer again
  ];
  const writer = new FrameWriter(fd, 1 << 30, () => assert.fail('lost'));
  for (const frame of frames) writer.sendJson(frame);
  fs.closeSync(fd);
  assert.ok(fs.readFileSync(file).equals(Buffer.from(frames.map((frame) => `${frame}\n`).join(''), 'utf8')));
  // The limit counts UTF-8 bytes without the newline, on both paths.
  const exact = '"éé"'; // 6 bytes
  new FrameWriter(-1, 6, () => {}).sendJson(exact); // fits: written (to a bad fd, so lost, not thrown)
  const small = new FrameWriter(-1, 5, () => assert.fail('nothing may be written'));
  assert.throws(() => small.sendJson(exact), { name: 'FrameTooLargeError', message: 'control frame of 6 bytes exceeds the 5-byte message limit' });
  const large = JSON.stringify('é'.repeat(2 << 20)); // 4 MiB + 2 bytes, over the kept buffer's bound
  const limited = new FrameWriter(-1, 4 << 20, () => assert.fail('nothing may be written'));
  assert.throws(() => limited.sendJson(large), { message: `control frame of ${(4 << 20) + 2} bytes exceeds the ${4 << 20}-byte message limit` });
});

test('result frames stay within the limit: oversized values are invalid-output, messages are shortened', () => {
  const big = buildResultFrame(3, { ok: true, value: 'x'.repeat(500) }, 200);
  assert.ok(Buffer.byteLength(big) <= 200);
  assert.deepEqual(JSON.parse(big).error.kind, 'invalid-output');
  assert.match(JSON.parse(big).error.message, /more than the 200-byte control message limit/);
  const long = buildResultFrame(3, { ok: false, kind: 'exception', message: 'é'.repeat(500) }, 200);
  assert.ok(Buffer.byteLength(long) <= 200);
  assert.ok(Buffer.byteLength(long) >= 190, 'the message is cut close to the limit');
  assert.match(JSON.parse(long).error.message, /^é+\n\.\.\. \[message truncated\]$/);
  assert.deepEqual(JSON.parse(buildResultFrame(1, { ok: true, value: { a: 1 }, discard: true }, 200)), {
    type: 'result',
    run: 1,
    ok: true,
  });
});

test('bootstrap options need positive integers and known flags', () => {
  assert.deepEqual(parseOptions(['--max-message-bytes=100', '--max-pending-calls=3']), {
    maxMessageBytes: 100,
    maxPendingCalls: 3,
  });
  assert.throws(() => parseOptions(['--max-message-bytes=0']), /positive integer/);
  assert.throws(() => parseOptions(['--other=1']), /unknown bootstrap argument/);
});

test('REPL import rewrite replaces only the keyword of dynamic import expressions', () => {
  const rewrite = (code) => rewriteDynamicImports(code, { importer: '__$i0a', source: code, filename: '[program]' });
  const code = 'var m = await import /* c */ ("a");\nclass K { [import("k")]() { return import(`t`, { with: {} }) } }\n"import(x)"; // import(y)';
  const rewritten = rewrite(code);
  assert.equal(rewritten, code.replace('import /*', '__$i0a /*').replace('[import(', '[__$i0a(').replace('return import(', 'return __$i0a('));
  assert.equal(rewritten.length, code.length);
  // Nothing to rewrite, or input acorn cannot parse: unchanged (V8 reports syntax errors).
  assert.equal(rewrite('1 + 2'), '1 + 2');
  assert.equal(rewrite('import( ; import("x")'), 'import( ; import("x")');
  assert.throws(() => rewrite('let {a: __$iZZ} = {}'), /names starting with __\$i are reserved[^]*\[program\]:1:9/);
  // A function body parses inside its wrapper; positions stay those of the body.
  const body = 'return import("x");';
  const wrap = { prefix: 'async function f() {\n', suffix: '\n}' };
  assert.equal(rewriteDynamicImports(body, { importer: '__$i0a', wrap, source: body, filename: '[program]' }), 'return __$i0a("x");');
  assert.equal(rewrite(body), body, 'a top-level return does not parse unwrapped');
});
