// Native bindings (dsh-native-bindings rows): C functions of examples/native called through
// libffi by the real dsh, every type at its boundaries, every rejection, result ownership,
// concurrency with other bindings and many calls in one program.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { runProgram, Serve, ROOT, DSH, tempDir } from './harness.js';
import { examplePatch, nativePatch, FUNCTIONS, SETTLE } from './native-fixture.js';

const PATCH = examplePatch();

async function native(program, opts = {}) {
  const { result, stderr } = await runProgram(SETTLE + program, { ...opts, args: ['--patch', opts.patch ?? PATCH] });
  assert.equal(result.ok, true, `${JSON.stringify(result)}\n${stderr}`);
  return { value: result.value, stderr };
}

const rejected = (fn, message) => ['ToolCallError', `nx.${fn}: ${message}`, fn];

test('the README example: hypot, a checksum of a string, json in and out', async () => {
  const { value } = await native(`return [await nx.hypot({ x: 3, y: 4 }), await nx.crc({ text: "hello" }),
    await nx.info({ query: { q: "ptc", n: [1, 2.5] } })]`);
  assert.deepEqual(value, [5, 907060870, { query: { q: 'ptc', n: [1, 2.5] }, bytes: 23 }]);
});

test('integer types at their boundaries', async () => {
  const { value } = await native(`
    const r = {};
    for (const [t, lo, hi] of [["int8", -128, 127], ["int16", -32768, 32767], ["int32", -2147483648, 2147483647],
                               ["uint8", 0, 255], ["uint16", 0, 65535], ["uint32", 0, 4294967295]])
      r[t] = [await nx[t]({ v: lo }), await nx[t]({ v: hi }), await nx[t]({ v: 0 })];
    r.int64 = [await nx.int64({ v: "-9223372036854775808" }), await nx.int64({ v: "9223372036854775807" }),
               await nx.int64({ v: -9007199254740991 }), await nx.int64({ v: 9007199254740991 }),
               await nx.int64({ v: 9007199254740992 }), await nx.int64({ v: 2 ** 62 }), await nx.int64({ v: -(2 ** 63) })];
    r.uint64 = [await nx.uint64({ v: "18446744073709551615" }), await nx.uint64({ v: "0" }),
                await nx.uint64({ v: 9007199254740991 }), await nx.uint64({ v: 2 ** 63 })];
    r.add32 = await nx.add32({ a: 2147483647, b: 1 });
    return r`);
  assert.deepEqual(value, {
    int8: [-128, 127, 0], int16: [-32768, 32767, 0], int32: [-2147483648, 2147483647, 0],
    uint8: [0, 255, 0], uint16: [0, 65535, 0], uint32: [0, 4294967295, 0],
    // Beyond +-(2^53 - 1) an integer crosses as the string of its exact digits.
    int64: ['-9223372036854775808', '9223372036854775807', -9007199254740991, 9007199254740991,
            '9007199254740992', '4611686018427387904', '-9223372036854775808'],
    uint64: ['18446744073709551615', 0, 9007199254740991, '9223372036854775808'],
    add32: -2147483648, // the C function wraps; the adapter passes both arguments exactly
  });
});

test('bool, float, double and eight mixed arguments', async () => {
  const { value } = await native(`return [await nx.negate({ value: true }), await nx.negate({ value: false }),
    await nx.float({ v: 0.5 }), await nx.float({ v: 0.1 }), await nx.float({ v: 3.4028234663852886e38 }), await nx.float({ v: -1e-45 }),
    await nx.double({ v: 1.7976931348623157e308 }), await nx.double({ v: 5e-324 }), await nx.double({ v: -2.5 }), await nx.double({ v: 0.1 }),
    await nx.divide({ a: 1, b: 3 }), await nx.divideFloat({ a: 1, b: 3 }),
    await nx.mix({ a: -1, b: 65535, c: -3, d: 4, e: 0.5, f: 0.25, g: true, h: 255 })]`);
  assert.deepEqual(value, [false, true,
    0.5, 0.10000000149011612, 3.4028234663852886e38, -1.401298464324817e-45,
    1.7976931348623157e308, 5e-324, -2.5, 0.1,
    1 / 3, 0.3333333432674408,
    -1 + 65535 - 3 + 4 + 0.5 + 0.25 + 1 + 255]);
});

test('a -0 result reaches the program as -0, as JSON.parse gives it', async () => {
  const { value } = await native('const z = await nx.negativeZero(); return [Object.is(z, -0), Object.is(z, 0)]');
  const parsed = JSON.parse('-0');
  assert.deepEqual(value, [Object.is(parsed, -0), Object.is(parsed, 0)]);
});

test('NaN and Infinity results reject the call: they are not lossless JSON', async () => {
  const { value } = await native(`return [await settle(nx.divide({ a: 0, b: 0 })), await settle(nx.divide({ a: 1, b: 0 })),
    await settle(nx.divide({ a: -1, b: 0 })), await settle(nx.divideFloat({ a: 1, b: 0 })),
    await settle(nx.divide({ a: 1, b: 4 }))]`);
  assert.deepEqual(value, [
    rejected('divide', 'the result NaN is not lossless JSON'),
    rejected('divide', 'the result Infinity is not lossless JSON'),
    rejected('divide', 'the result -Infinity is not lossless JSON'),
    rejected('divideFloat', 'the result Infinity is not lossless JSON'),
    { value: 0.25 }, // control: a finite result of the same function resolves
  ]);
});

test('integer arguments out of range or fractional reject the call naming the argument', async () => {
  const { value } = await native(`return [
    await settle(nx.int8({ v: 128 })), await settle(nx.int8({ v: -129 })), await settle(nx.uint8({ v: 256 })),
    await settle(nx.uint8({ v: -1 })), await settle(nx.int16({ v: 32768 })), await settle(nx.uint16({ v: 65536 })),
    await settle(nx.int32({ v: 2147483648 })), await settle(nx.uint32({ v: 4294967296 })),
    await settle(nx.int64({ v: "9223372036854775808" })), await settle(nx.int64({ v: "-9223372036854775809" })),
    await settle(nx.int64({ v: 2 ** 63 })), await settle(nx.uint64({ v: "18446744073709551616" })),
    await settle(nx.uint64({ v: -1 })), await settle(nx.uint64({ v: 2 ** 64 })),
    await settle(nx.int32({ v: 1.5 })), await settle(nx.int8({ v: 1e-7 })), await settle(nx.uint64({ v: 0.5 })),
    await settle(nx.int64({ v: "12.0" })), await settle(nx.int64({ v: "007" })), await settle(nx.int32({ v: "5" })),
    await settle(nx.int32({ v: true })), await settle(nx.float({ v: 3.5e38 })), await settle(nx.double({ v: "1" })),
    await settle(nx.negate({ value: 1 })), await settle(nx.crc({ text: 5 }))]`);
  assert.deepEqual(value, [
    rejected('int8', 'argument v: 128 is out of range for int8 (-128..127)'),
    rejected('int8', 'argument v: -129 is out of range for int8 (-128..127)'),
    rejected('uint8', 'argument v: 256 is out of range for uint8 (0..255)'),
    rejected('uint8', 'argument v: -1 is out of range for uint8 (0..255)'),
    rejected('int16', 'argument v: 32768 is out of range for int16 (-32768..32767)'),
    rejected('uint16', 'argument v: 65536 is out of range for uint16 (0..65535)'),
    rejected('int32', 'argument v: 2147483648 is out of range for int32 (-2147483648..2147483647)'),
    rejected('uint32', 'argument v: 4294967296 is out of range for uint32 (0..4294967295)'),
    rejected('int64', 'argument v: 9223372036854775808 is out of range for int64 (-9223372036854775808..9223372036854775807)'),
    rejected('int64', 'argument v: -9223372036854775809 is out of range for int64 (-9223372036854775808..9223372036854775807)'),
    rejected('int64', 'argument v: 9223372036854776000 is out of range for int64 (-9223372036854775808..9223372036854775807)'),
    rejected('uint64', 'argument v: 18446744073709551616 is out of range for uint64 (0..18446744073709551615)'),
    rejected('uint64', 'argument v: -1 is out of range for uint64 (0..18446744073709551615)'),
    rejected('uint64', 'argument v: 18446744073709552000 is out of range for uint64 (0..18446744073709551615)'),
    rejected('int32', 'argument v: 1.5 is not an integer (int32)'),
    rejected('int8', 'argument v: 1e-7 is not an integer (int8)'),
    rejected('uint64', 'argument v: 0.5 is not an integer (uint64)'),
    rejected('int64', 'argument v: "12.0" is not a string of decimal digits'),
    rejected('int64', 'argument v: "007" is not a string of decimal digits'),
    rejected('int32', 'argument v: expected int32, got a string'),
    rejected('int32', 'argument v: expected int32, got a boolean'),
    rejected('float', 'argument v: 3.5e+38 is out of range for float'),
    rejected('double', 'argument v: expected double, got a string'),
    rejected('negate', 'argument value: expected bool, got a number'),
    rejected('crc', 'argument text: expected string, got a number'),
  ]);
});

test('missing, extra and misplaced arguments reject the call', async () => {
  const { value } = await native(`return [
    await settle(nx.hypot({ x: 1 })), await settle(nx.hypot({ x: 1, y: 2, z: 3 })), await settle(nx.hypot({ x: 1, y: 2 }, 5)),
    await settle(nx.hypot(5)), await settle(nx.hypot()), await settle(nx.hypot([1, 2])), await settle(nx.version({ extra: 1 })),
    await settle(nx.version({})), await settle(nx.hypot({ x: 1, y: null }))]`);
  assert.deepEqual(value, [
    rejected('hypot', 'missing argument y (double)'),
    rejected('hypot', 'unknown argument z'),
    rejected('hypot', 'expects one object of named arguments {x, y}, got 2 arguments'),
    rejected('hypot', 'expects one object of named arguments {x, y}, got a number'),
    rejected('hypot', 'expects one object of named arguments {x, y}, got 0 arguments'),
    rejected('hypot', 'expects one object of named arguments {x, y}, got an array'),
    rejected('version', 'unknown argument extra'),
    { value: 'dsh-native-example 1' },
    rejected('hypot', 'argument y: expected double, got null'),
  ]);
});

test('text arguments: embedded NUL rejects in the namespace class; lone surrogates and lossy json in the program', async () => {
  const { value } = await native(`return [
    await settle(nx.crc({ text: "a\\u0000b" })), await settle(nx.crc({ text: "ab" })),
    await settle(nx.crc({ text: "\\ud800" })), await settle(nx.info({ query: { n: NaN } })),
    await settle(nx.info({ query: [undefined] })), await settle(nx.length({ text: "é漢🙂" })),
    await settle(nx.info({ query: "\\u0000 é" }))]`);
  assert.deepEqual(value, [
    rejected('crc', 'argument text: contains a NUL character'),
    { value: 2659403885 }, // control: the same call without the NUL
    // Invalid UTF-8 and non-lossless json never leave the program: the binding proxy's lossless
    // rule rejects them first, naming the argument's path.
    ['TypeError', 'nx.crc: arguments are not lossless JSON: args[0].text contains a lone surrogate', null],
    ['TypeError', 'nx.info: arguments are not lossless JSON: args[0].query.n is NaN', null],
    ['TypeError', 'nx.info: arguments are not lossless JSON: args[0].query[0] is undefined', null],
    { value: 2 + 3 + 4 }, // UTF-8 bytes
    { value: { query: '\u0000 é', bytes: 11 } }, // a json argument may hold any string: it is escaped text
  ]);
});

test('string and json results: copied, freed exactly once with free, never freed when borrowed', async () => {
  const { value } = await native(`
    const before = await nx.live();
    const r = [await nx.greet({ name: "wörld" }), await nx.version(), await nx.noText(),
      await nx.info({ query: { big: 12345678901234567000, small: 1e-300, s: "é" } }), await nx.staticJson(), await nx.staticJson(),
      await settle(nx.badUtf8()), await settle(nx.badJson()), await settle(nx.nanJson()), await settle(nx.noJson())];
    return { before, r, after: await nx.live() }`);
  assert.deepEqual(value, {
    before: 0,
    r: ['hello, wörld', 'dsh-native-example 1', null,
      { query: { big: 12345678901234567000, small: 1e-300, s: 'é' }, bytes: 52 }, // the query's text as sent
      { name: 'dsh-native-example', version: 1, tags: ['static', 'borrowed'] },
      { name: 'dsh-native-example', version: 1, tags: ['static', 'borrowed'] },
      rejected('badUtf8', 'the result is not valid UTF-8'),
      rejected('badJson', 'the result is not strict JSON text (UTF-8, no NaN or Infinity)'),
      rejected('nanJson', 'the result is not strict JSON text (UTF-8, no NaN or Infinity)'),
      rejected('noJson', 'the result is NULL, not JSON text')],
    // Every buffer the library returned (greet, info, badUtf8, badJson, nanJson) was given back,
    // also for the rejected results; a second free would have aborted dsh (nx_free checks).
    after: 0,
  });
});

test('control: a leaking declaration is visible to the same accounting', async () => {
  // nx_greet's buffer declared borrowed: nobody frees it, and nx_live_blocks sees it.
  const patch = nativePatch([{ id: 'leaky', config: { global: 'nx', functions: {
    live: FUNCTIONS.live, greet: { ...FUNCTIONS.greet, free: undefined, borrowed: true } } } }]);
  const { value } = await native('await nx.greet({ name: "a" }); await nx.greet({ name: "b" }); return await nx.live()', { patch });
  assert.equal(value, 2);
});

test('a void result is undefined', async () => {
  const { value } = await native('const v = await nx.reset(); return [v === undefined, "value" in { value: v }]');
  assert.deepEqual(value, [true, true]);
});

test('the row errorClass is the class of rejections', async () => {
  const patch = nativePatch([{ id: 'e', config: { global: 'lib', errorClass: 'NativeError', functions: { int8: FUNCTIONS.int8 } } }]);
  const { value } = await native(`try { await lib.int8({ v: 1000 }) } catch (e) {
    return [e instanceof NativeError, e.name, e.message, e.member] }`, { patch });
  assert.deepEqual(value, [true, 'NativeError', 'lib.int8: argument v: 1000 is out of range for int8 (-128..127)', 'int8']);
});

test('several native rows are several namespaces next to the demo tools', async () => {
  const patch = nativePatch([
    { id: 'a', config: { global: 'geometry', functions: { hypot: FUNCTIONS.hypot } } },
    { id: 'b', config: { global: 'text', functions: { crc: FUNCTIONS.crc, greet: FUNCTIONS.greet } } },
  ]);
  const { value } = await native(`return [await geometry.hypot({ x: 6, y: 8 }), await text.crc({ text: "" }),
    await text.greet({ name: "b" }), await tools.add({ a: 1, b: 2 }), typeof geometry.crc]`, { patch });
  assert.deepEqual(value, [10, 0, 'hello, b', 3, 'undefined']);
});

test('native calls interleave with concurrent demo-tool calls in one program', async () => {
  const { value } = await native(`
    await nx.reset();
    const slow = tools.sleep({ ms: 300 }).then(() => "slept");
    const mixed = await Promise.all(Array.from({ length: 60 }, (_, i) =>
      i % 3 === 0 ? nx.hypot({ x: i, y: 0 }) : i % 3 === 1 ? tools.echo(i) : nx.count()));
    return [await slow, mixed.filter((v, i) => i % 3 === 0 ? v !== i : i % 3 === 1 ? v !== i : false).length,
            mixed.filter((_, i) => i % 3 === 2).sort((a, b) => a - b).join(",")]`);
  assert.deepEqual(value, ['slept', 0, Array.from({ length: 20 }, (_, i) => i + 1).join(',')]);
});

test('a run calls natives while another run waits for a client binding (serve)', async () => {
  const s = new Serve({ args: ['--patch', PATCH] });
  s.send({ type: 'run', id: 'waiting', program: 'const v = await host.wait(); return await nx.add32({ a: v, b: 1 })',
           bindings: [{ global: 'host', functions: ['wait'] }] });
  const call = await s.next((e) => e.type === 'call');
  // Barrier: the client holds the first run's call open until the second run has finished.
  s.send({ type: 'run', id: 'busy', program: 'let s = 0; for (let i = 0; i < 200; i++) s += await nx.add32({ a: i, b: 0 }); return s' });
  const busy = await s.result('busy');
  assert.equal(busy.value, 19900);
  s.send({ type: 'reply', run: call.run, call: call.call, ok: true, value: 41 });
  const waiting = await s.result('waiting');
  assert.equal(waiting.value, 42);
  // A client namespace may not take a native namespace's name: the provider rejects the run.
  s.send({ type: 'run', id: 'clash', program: 'return 1', bindings: [{ global: 'nx', functions: ['x'] }] });
  const clash = await s.next((e) => e.type === 'error' && e.id === 'clash');
  assert.match(clash.message, /binding namespace "nx" is declared twice/);
  await s.close();
});

test('10 000 native calls in one program', async () => {
  const { value } = await native(`
    await nx.reset();
    let last = 0, total = 0;
    for (let i = 0; i < 10000; i++) {
      last = await nx.count();
      total += (await nx.greet({ name: String(i) })).length;
    }
    return [last, total, await nx.live()]`);
  // "hello, " is 7 bytes; the names 0..9999 have 38890 digits.
  assert.deepEqual(value, [10000, 7 * 10000 + 38890, 0]);
});

test('maxCallMs: a slower call is logged, a faster one is not', async () => {
  const patch = nativePatch([{ id: 'slow', config: { global: 'nx', functions: {
    watched: { ...FUNCTIONS.sleep, maxCallMs: 50 }, relaxed: { ...FUNCTIONS.sleep, maxCallMs: 600000 } } } }]);
  const { stderr } = await native('await nx.relaxed({ ms: 300 }); await nx.watched({ ms: 300 }); return 1', { patch });
  const lines = stderr.split('\n').filter((l) => l.includes('native call'));
  assert.equal(lines.length, 1, stderr);
  assert.match(lines[0], /^dsh: \[warn\] native call nx\.watched took \d+ ms \(maxCallMs 50\); it blocked the host thread$/);
  assert.ok(Number(lines[0].match(/took (\d+) ms/)[1]) >= 300);
});

test('a system library by soname: examples/profiles/native-libm.yaml', async () => {
  const { value } = await native('return [await math.hypot({ x: 3, y: 4 }), await math.pow({ x: 2, y: 10 }), await math.lround({ x: -2.5 })]',
    { patch: join(ROOT, 'examples/profiles/native-libm.yaml') });
  assert.deepEqual(value, [5, 1024, -3]);
});

test('nested workflow agents get the native namespaces too', async () => {
  const dir = tempDir('dsh-native-wf-');
  const script = join(dir, 'wf.js');
  writeFileSync(script, "return await agent('return await nx.hypot({ x: 6, y: 8 })', { label: 'native' });\n");
  const r = spawnSync(DSH, ['workflow', 'run', script, '--json', '--patch', PATCH], { encoding: 'utf8', cwd: dir });
  assert.equal(r.status, 0, r.stderr);
  assert.deepEqual(JSON.parse(r.stdout.trim().split('\n').at(-1)), { value: '10', stopReason: 'completed', agentsStarted: 1 });
});
