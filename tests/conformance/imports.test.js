// Runner import handling: a runner-side ProgramImportHandler (here the reference module-map
// runner, bootstrap/runners/module-map-runner.js, started through launch {kind: node-script})
// decides program imports: default, redirect {specifier} and module {exports}, in every evaluator
// that supports it; failing handlers reject the import, module capture failures stay cached.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { NODE, ROOT, runProgram, Serve, tempDir, text } from './harness.js';

const RUNNER = join(ROOT, 'bootstrap/runners/module-map-runner.js');

function setup(map) {
  const runnerDir = tempDir('dsh-runner-');
  writeFileSync(join(runnerDir, 'runner.mjs'), `import ${JSON.stringify(pathToFileURL(RUNNER).href)};\n`);
  writeFileSync(join(runnerDir, 'module-map.json'), JSON.stringify(map));
  writeFileSync(join(runnerDir, 'other.mjs'), 'export const who = "other"; export default "other-default";\n');
  const ws = tempDir('dsh-ws-');
  writeFileSync(join(ws, 'real.mjs'), 'export const who = "real"; export default "real-default";\n');
  return { ws, launch: { kind: 'node-script', executable: NODE, bootstrapPath: join(runnerDir, 'runner.mjs') } };
}

const MAP = {
  './wanted.mjs': './other.mjs',
  'virtual:path': 'node:path',
  'virtual:config': { exports: { default: { answer: 42 }, name: 'cfg', then: 'not callable' } },
  'virtual:broken': { error: 'no module for you' },
  'virtual:bad': { exports: { ok: 1 }, failingExport: 'boom' },
};

const PROGRAM = `
var a = await import("./real.mjs");
var b = await import("./wanted.mjs");
var p = await import("virtual:path");
var c = await import("virtual:config");
var c2 = await import("virtual:config");
var failures = [];
try { await import("virtual:broken") } catch (e) { failures.push(e.message) }
try { await import("virtual:bad") } catch (e) { failures.push(e.message) }
try { await import("virtual:bad") } catch (e) { failures.push(e.message) }
inspect(a.who, b.who, b.default, typeof p.join, c.default.answer, c.name, c === c2, Object.keys(c).sort().join(","));
inspect(failures.join(" | "));
`;

const EXPECTED = 'real other other-default function 42 cfg true default,name,then\n' +
  'no module for you | export boom of virtual:bad failed (capture 1) | export boom of virtual:bad failed (capture 1)\n';

for (const [label, mode] of [
  ['AsyncFunction', {}],
  ['VM Script', { executionMode: 'vm-script' }],
  ['retained VM Script', { executionMode: 'vm-script', scriptPersistence: true }],
  ['scoped REPL', { executionMode: 'persistent-in-memory' }],
  ['Node REPL', { executionMode: 'persistent-in-memory', replScoped: false }],
]) {
  test(`${label}: default, redirect, module, failing handler and cached module failure`, async () => {
    const { ws, launch } = setup(MAP);
    const { result } = await runProgram(PROGRAM, { ws, runtime: { ...mode, launch } });
    assert.equal(result.ok, true, JSON.stringify(result));
    assert.equal(text(result), EXPECTED);
  });
}

test('without a map file the runner uses Node\'s loader unchanged', async () => {
  const { ws, launch } = setup({});
  const { result } = await runProgram('const a = await import("./real.mjs"); try { await import("./wanted.mjs") } catch (e) { return [a.who, e.code] }', { ws, runtime: { launch } });
  assert.deepEqual(result.value, ['real', 'ERR_MODULE_NOT_FOUND']);
});

// VM Script (and the scoped REPL, which uses its import handling) loads explicit file ESM itself,
// so the handler also decides the static and dynamic imports of those modules.
const DEP = `
import cfg from "virtual:config";
import { who } from "./wanted.mjs";
import path from "node:path";
export { who };
export const answer = cfg.answer;
export const sep = path.sep;
export const meta = [import.meta.url, import.meta.filename, import.meta.dirname, import.meta.main, import.meta.resolve("./x.mjs")];
export async function later() { return (await import("virtual:config")).name; }
`;

for (const [label, mode] of [
  ['VM Script', { executionMode: 'vm-script' }],
  ['scoped REPL', { executionMode: 'persistent-in-memory' }],
]) {
  test(`${label}: static and dynamic imports of VM-loaded ESM consult the handler`, async () => {
    const { ws, launch } = setup(MAP);
    writeFileSync(join(ws, 'dep.mjs'), DEP);
    writeFileSync(join(ws, 'bad-dep.mjs'), 'import "virtual:broken";\nexport const x = 1;\n');
    writeFileSync(join(ws, 'pkg.json'), '{}');
    const program = `
var d = await import("./dep.mjs"), d2 = await import("./dep.mjs");
var errors = [];
try { await import("./bad-dep.mjs") } catch (e) { errors.push(e.message) }
try { await import("./bad-dep.mjs") } catch (e) { errors.push(e.message) }
try { await import("./dep.mjs", { with: { type: "json" } }) } catch (e) { errors.push(e.message) }
inspect(d.who, d.answer, d.sep, d === d2, await d.later());
inspect(JSON.stringify(d.meta));
inspect(errors.join(" | "));
`;
    const { result } = await runProgram(program, { ws, runtime: { ...mode, launch } });
    assert.equal(result.ok, true, JSON.stringify(result));
    const file = join(ws, 'dep.mjs');
    assert.equal(text(result), 'other 42 / true cfg\n' +
      `${JSON.stringify([pathToFileURL(file).href, file, ws, false, pathToFileURL(join(ws, 'x.mjs')).href])}\n` +
      'no module for you | no module for you | import attributes are not supported for VM-loaded ESM (./dep.mjs)\n');
  });
}

// A retained evaluation's imports started after it ended, or resolving when it ends, reject (a
// saved function called by a later evaluation imports normally). In VM Script a VM-loaded module
// whose evaluation failed only because of such an import is loaded afresh by the next evaluation.
// Node REPL decisions are synchronous: its import resolving late is a module evaluating slowly.
for (const [label, runtime, slowName, slowValue] of [
  ['retained VM Script', { executionMode: 'vm-script', scriptPersistence: true }, '(await import("virtual:config")).name', 'cfg'],
  ['Node REPL', { executionMode: 'persistent-in-memory', replScoped: false }, '"slow"', 'slow'],
]) {
  test(`${label}: imports started or resolving after the evaluation ended reject`, async () => {
    const { ws, launch } = setup(MAP);
    writeFileSync(join(ws, 'slow.mjs'), `await new Promise((r) => setTimeout(r, 100));\nexport const name = ${slowName};\n`);
    const s = new Serve({ ws, runtime: { ...runtime, launch } });
    try {
      const first = await s.run('1', `var settle = (p) => p.then((m) => m.name, (e) => e.message);
var later = () => import("virtual:config");
var slow = settle(import("./slow.mjs"));
setTimeout(() => { globalThis.late = settle(import("virtual:config")); }, 50);
1`, { stateOwner: 'o' });
      assert.equal(first.ok, true, JSON.stringify(first));
      await new Promise((r) => setTimeout(r, 400));
      const second = await s.run('2', '[await late, await slow, (await later()).name, await settle(import("./slow.mjs"))]', { stateOwner: 'o' });
      const ended = 'import after the evaluation ended';
      assert.deepEqual(second.value, [ended, ended, 'cfg', slowValue]);
    } finally {
      await s.close();
    }
  });
}

// Bare specifiers go through Node's ESM resolver: an ESM package is VM-loaded, so its static
// import consults the handler; a CommonJS package stays with Node's loader.
test('VM Script: a bare ESM package is VM-loaded; a CommonJS package uses Node\'s loader', async () => {
  const { ws, launch } = setup(MAP);
  for (const [name, pkg, file, source] of [
    ['esm-pkg', '{"name":"esm-pkg","type":"module","exports":"./index.js"}', 'index.js', 'import cfg from "virtual:config"; export const answer = cfg.answer;'],
    ['cjs-pkg', '{"name":"cjs-pkg","main":"main.js"}', 'main.js', 'module.exports = { kind: "cjs" };'],
  ]) {
    mkdirSync(join(ws, 'node_modules', name), { recursive: true });
    writeFileSync(join(ws, 'node_modules', name, 'package.json'), pkg);
    writeFileSync(join(ws, 'node_modules', name, file), source);
  }
  const program = 'inspect((await import("esm-pkg")).answer, (await import("cjs-pkg")).default.kind)';
  const { result } = await runProgram(program, { ws, runtime: { executionMode: 'vm-script', launch } });
  assert.equal(result.ok, true, JSON.stringify(result));
  assert.equal(text(result), '42 cjs\n');
});

// The documented edge of the hooked evaluators (bootstrap/README.md): an import expression in
// code compiled at run time (`eval`) is not rewritten, and Node's module hooks see only its start,
// so one already resolving when its retained evaluation ends still completes, while the
// program's own import of the same kind rejects.
{
  const runtime = { executionMode: 'persistent-in-memory', replScoped: false };
  test('Node REPL: an eval\'d import resolving when the evaluation ends completes', async () => {
    const { ws, launch } = setup(MAP);
    const gated = (name) => `import { existsSync } from "node:fs";\nwhile (!existsSync(${JSON.stringify(join(ws, 'go'))})) await new Promise((r) => setTimeout(r, 5));\nexport const name = "${name}";\n`;
    writeFileSync(join(ws, 'own.mjs'), gated('own'));
    writeFileSync(join(ws, 'evald.mjs'), gated('evald'));
    const s = new Serve({ ws, runtime: { ...runtime, launch } });
    try {
      const first = await s.run('1', `var settle = (p) => p.then((m) => m.name, (e) => e.message);
var own = settle(import("./own.mjs"));
var evald = settle(eval('import("./evald.mjs")'));
1`, { stateOwner: 'o' });
      assert.equal(first.ok, true, JSON.stringify(first));
      writeFileSync(join(ws, 'go'), ''); // both imports resolve only after the evaluation ended
      const second = await s.run('2', '[await own, await evald]', { stateOwner: 'o' });
      assert.deepEqual(second.value, ['import after the evaluation ended', 'evald']);
    } finally {
      await s.close();
    }
  });
}
