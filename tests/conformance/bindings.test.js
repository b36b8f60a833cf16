// Host bindings: named asynchronous namespaces, error classes, limits and client-answered calls.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { runProgram, text, Serve } from './harness.js';

test('demo tools resolve through the control channel', async () => {
  const { result } = await runProgram('return [await tools.echo({ a: [1, "é"] }), await tools.add({ a: 2, b: 40 }), await tools.sleep({ ms: 20 })]');
  assert.equal(result.ok, true, JSON.stringify(result));
  assert.deepEqual(result.value, [{ a: [1, 'é'] }, 42, null]);
});

test('a rejected binding throws the namespace error class with the member name', async () => {
  const { result } = await runProgram(`
    try { await tools.fail({ message: "nope" }); return "no throw" }
    catch (e) { return [e instanceof ToolCallError, e.name, e.message, e.member] }`);
  assert.deepEqual(result.value, [true, 'ToolCallError', 'nope', 'fail']);
});

test('an uncaught binding rejection is an exception result', async () => {
  const { result } = await runProgram('await tools.fail({ message: "broken tool" })');
  assert.equal(result.error.kind, 'exception');
  assert.match(result.error.message, /ToolCallError: broken tool/);
});

// A barrier, not a clock: the client holds every answer until all five calls are in flight, so a
// host that ran calls one at a time would never send the second and the run would not finish.
test('binding calls run concurrently: all five are in flight before any is answered', async () => {
  const serve = new Serve();
  serve.send({
    type: 'run', id: 'five', bindings: [{ global: 'h', functions: ['wait'] }],
    program: 'return await Promise.all([1, 2, 3, 4, 5].map((n) => h.wait(n)))',
  });
  const calls = [];
  for (let i = 0; i < 5; i++) calls.push(await serve.next((e) => e.type === 'call' && e.run === 'five'));
  assert.deepEqual(calls.map((c) => c.args).sort(), [[1], [2], [3], [4], [5]]);
  for (const c of calls.reverse()) serve.send({ type: 'reply', run: 'five', call: c.call, ok: true, value: c.args[0] * 10 });
  const result = await serve.result('five');
  assert.deepEqual(result.value, [10, 20, 30, 40, 50], JSON.stringify(result));
  assert.equal(await serve.close(), 0, serve.stderr);
});

test('lossy binding arguments are rejected inside the program', async () => {
  const { result } = await runProgram('try { await tools.echo({ f: () => 1 }); return "sent" } catch (e) { return e.name }');
  assert.equal(result.value, 'TypeError');
});

test('calls beyond maxPendingCalls reject inside the program', async () => {
  const { result } = await runProgram(`
    const calls = [1,2,3].map(() => tools.sleep({ ms: 200 }).then(() => "ok", (e) => e.name));
    return await Promise.all(calls)`, { runtime: { maxPendingCalls: 2 } });
  assert.equal(result.ok, true, JSON.stringify(result));
  assert.deepEqual(result.value.filter((v) => v === 'ok').length, 2);
});

test('client-declared bindings are answered by the client', async () => {
  const s = new Serve();
  s.send({ type: 'run', id: 'r', program: 'const v = await search.find({ q: "x" }); return v.hits + 1',
           bindings: [{ global: 'search', functions: ['find'] }] });
  const call = await s.next((e) => e.type === 'call');
  assert.equal(call.global, 'search');
  assert.equal(call.name, 'find');
  assert.deepEqual(call.args, [{ q: 'x' }]);
  s.send({ type: 'reply', run: call.run, call: call.call, ok: true, value: { hits: 41 } });
  const r = await s.result('r');
  assert.equal(r.value, 42);
  await s.close();
});

test('a client rejection uses the declared error class', async () => {
  const s = new Serve();
  s.send({ type: 'run', id: 'r', program: 'try { await db.q() } catch (e) { return [e.name, e.message, e instanceof DbError] }',
           bindings: [{ global: 'db', functions: ['q'], errorClass: 'DbError' }] });
  const call = await s.next((e) => e.type === 'call');
  s.send({ type: 'reply', run: call.run, call: call.call, ok: false, message: 'denied by policy' });
  const r = await s.result('r');
  assert.deepEqual(r.value, ['DbError', 'denied by policy', true]);
  await s.close();
});

test('a reply after the run ended is harmless', async () => {
  const s = new Serve();
  s.send({ type: 'run', id: 'r', program: 'search.find(); return "done early"', bindings: [{ global: 'search', functions: ['find'] }] });
  const call = await s.next((e) => e.type === 'call');
  const r = await s.result('r');
  assert.equal(r.value, 'done early');
  s.send({ type: 'reply', run: call.run, call: call.call, ok: true, value: 1 });
  const r2 = await s.run('r2', 'return 2');
  assert.equal(r2.value, 2);
  await s.close();
});

test('concurrent runs in one host are independent', async () => {
  const s = new Serve();
  const ids = ['p1', 'p2', 'p3'];
  for (const id of ids) s.send({ type: 'run', id, program: `await tools.sleep({ ms: 200 }); inspect("${id}"); return "${id}"` });
  const results = await Promise.all(ids.map((id) => s.result(id)));
  results.forEach((r, i) => {
    assert.equal(r.value, ids[i]);
    assert.equal(text(r), `${ids[i]}\n`);
  });
  await s.close();
});

// One binding declaration must be valid for JavaScript and Python programs alike, so resolve
// refuses names either language or runtime reserves, naming the binding.
test('names reserved by either program language are caller misuse naming the binding', async () => {
  const s = new Serve();
  try {
    const cases = [
      [{ global: 'lambda', functions: ['f'] }, 'bindings[0].global "lambda" is a reserved word in JavaScript or Python'],
      [{ global: '__builtins__', functions: ['f'] }, 'bindings[0].global "__builtins__" is a global the runtime defines'],
      [{ global: 'h', functions: ['ok', 'message'] }, 'bindings[0].functions[1] "message" is a member of error objects'],
      [{ global: 'h', functions: ['__init__'] }, 'bindings[0].functions[0] "__init__" is a __dunder__ name, reserved by Python'],
      [{ global: 'h', functions: ['f'], errorClass: 'None' }, 'bindings[0].errorClass "None" is a reserved word in JavaScript or Python'],
      [{ global: 'h$', functions: ['f'] }, 'bindings[0].global "h$" is not an identifier (ASCII letters, digits and _, not starting with a digit)'],
    ];
    for (const [i, [binding, message]] of cases.entries()) {
      s.send({ type: 'run', id: `n${i}`, program: 'return 1', bindings: [binding] });
      const event = await s.next((e) => e.id === `n${i}`);
      assert.equal(event.type, 'error', JSON.stringify(event));
      assert.ok(event.message.includes(message), `${event.message} should say ${message}`);
    }
    // Control: the same declarations with ordinary names run.
    const ok = await s.run('fine', 'return typeof h.ok', { bindings: [{ global: 'h', functions: ['ok', 'messages'], errorClass: 'HError' }] });
    assert.equal(ok.value, 'function');
  } finally {
    await s.close();
  }
});

// The process is one principal (bootstrap/PROTOCOL.md): code left by an earlier run of a retained
// environment can read the control channel and write frames on fd 3, and the host attributes
// such a call frame to the current run, reaching every binding that run declares.
test('a retained run\'s leftover code can call a binding declared only for a later run', async () => {
  const s = new Serve({ runtime: { executionMode: 'persistent-in-memory' } });
  const planted = await s.run('r1', `var fs = await import("node:fs");
var mainJSON = setTimeout.constructor("return JSON")();
var parse = mainJSON.parse;
mainJSON.parse = function (text, reviver) {
  const frame = parse(text, reviver);
  if (frame && frame.type === "run" && frame.program.includes("second run")) {
    setImmediate(() => fs.writeSync(3, JSON.stringify({ type: "call", run: frame.run, call: 1000, global: "secret", name: "get", args: ["planted by r1"] }) + "\\n"));
  }
  return frame;
};
1`, { stateOwner: 'o' });
  assert.equal(planted.ok, true, JSON.stringify(planted));
  const bindings = [{ global: 'secret', functions: ['get'] }, { global: 'gate', functions: ['wait'] }];
  s.send({ type: 'run', id: 'r2', stateOwner: 'o', bindings, program: '// second run: it never calls secret.get\nawait gate.wait(); 2' });
  const forged = await s.next((e) => e.type === 'call' && e.name === 'get');
  assert.deepEqual(forged, { type: 'call', run: 'r2', call: 1000, global: 'secret', name: 'get', args: ['planted by r1'] });
  s.send({ type: 'reply', run: 'r2', call: 1000, ok: true, value: 'the secret' });
  const gate = await s.next((e) => e.type === 'call' && e.name === 'wait');
  s.send({ type: 'reply', run: 'r2', call: gate.call, ok: true });
  const second = await s.result('r2');
  assert.equal(second.ok, true, JSON.stringify(second));
  assert.equal(second.value, 2);
  await s.close();
});
