// Imports of ended evaluations (bootstrap/imports/ended.js): in a retained environment an import
// started or settling after its evaluation ended rejects, while a saved function called by a later
// evaluation imports normally; a temporary evaluation's late import stays pending. VM-loaded
// modules that failed only because of such an import are reloaded by a later evaluation, while
// evaluated modules keep their identity.
// Also VM Script's resolution of bare specifiers through Node's ESM resolver (last test).

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, mkdtempSync, writeFileSync, realpathSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { BOOTSTRAP_DIR, withRetainedChild, runProgram } from './fake-host.js';

const dir = realpathSync(mkdtempSync(path.join(os.tmpdir(), 'ptc-imports-ended-')));
writeFileSync(path.join(dir, 'a.mjs'), 'import "./b.mjs"; export const a = "A";');
writeFileSync(path.join(dir, 'b.mjs'), 'export const b = 1;');
writeFileSync(path.join(dir, 'c.mjs'), 'export const c = {};');
writeFileSync(path.join(dir, 'slow.mjs'), 'await new Promise((r) => setTimeout(r, 150));\nexport const x = "slow";');
writeFileSync(path.join(dir, 'd.mjs'), 'await new Promise((r) => setTimeout(r, 100));\nexport const d = (await import("./c.mjs")).c;');
const preload = path.join(dir, 'preload.mjs');
// The first decision for ./b.mjs arrives late, after the evaluation that asked for it ended.
writeFileSync(preload, `
import { setProgramImportHandler } from ${JSON.stringify(pathToFileURL(path.join(BOOTSTRAP_DIR, 'imports/handler.js')).href)};
let slowB = true;
const mod = { x: 'mod' };
setProgramImportHandler((request) => {
  if (request.specifier === 'sync:mod') return { type: 'module', exports: mod };
  if (request.specifier === 'slow:mod') return new Promise((r) => setTimeout(() => r({ type: 'module', exports: mod }), 150));
  if (request.specifier === './b.mjs' && slowB) {
    slowB = false;
    return new Promise((r) => setTimeout(() => r({ type: 'default' }), 150));
  }
  return { type: 'default' };
});
`);
const nodeArgs = ['--experimental-vm-modules', `--import=${pathToFileURL(preload).href}`];

const withChild = (format, body) => withRetainedChild({ format, cwd: dir, nodeArgs }, body);

const SETTLE = "(p) => p.then(() => 'loaded', (e) => e.message)";
const ENDED = 'import after the evaluation ended';

// AsyncFunction decisions are synchronous: its late-resolving import is a module evaluating slowly.
for (const [format, save, slow] of [['vm-script', '', 'slow:mod'], ['scoped-repl', '', 'slow:mod'], ['async-function', 'return ', './slow.mjs']]) {
  test(`${format}: a retained evaluation's late imports reject; saved functions import for the current one`, () =>
    withChild(format, async (child) => {
      await child.value(`globalThis.settle = ${SETTLE};
globalThis.later = () => import("sync:mod");
globalThis.resolvedLate = settle(import("${slow}"));
setTimeout(() => { globalThis.startedLate = settle(import("sync:mod")); }, 50);
${save}1`, { settleMs: 300 });
      assert.equal(await child.value(`${save}await globalThis.startedLate`), ENDED);
      assert.equal(await child.value(`${save}await globalThis.resolvedLate`), ENDED);
      assert.equal(await child.value(`${save}(await globalThis.later()).x`), 'mod');
    }));
}

for (const format of ['async-function', 'vm-script', 'scoped-repl', 'repl']) test(`${format}: a temporary evaluation's late imports stay pending`, async () => {
  const marker = path.join(dir, `late-import-${format}`);
  const slowMarker = path.join(dir, `late-slow-import-${format}`);
  const timer = path.join(dir, `late-timer-${format}`);
  const program = `var fs = await import("node:fs");
import("./slow.mjs").then(() => fs.writeFileSync(${JSON.stringify(slowMarker)}, "loaded"), (e) => fs.writeFileSync(${JSON.stringify(slowMarker)}, e.message));
setTimeout(() => {
  import("sync:mod").then(() => fs.writeFileSync(${JSON.stringify(marker)}, "loaded"), (e) => fs.writeFileSync(${JSON.stringify(marker)}, e.message));
  setTimeout(() => fs.writeFileSync(${JSON.stringify(timer)}, "ran"), 100);
}, 50);
1`;
  const { result } = await runProgram(program, { format, cwd: dir, nodeArgs, settleMs: 400 });
  assert.equal(result.ok, true, JSON.stringify(result));
  assert.equal(existsSync(timer), true, 'the process kept running');
  assert.equal(existsSync(marker), false, 'the import started late neither loaded nor rejected');
  assert.equal(existsSync(slowMarker), false, 'the import resolving late neither loaded nor rejected');
});

test('vm-script: modules failed by an ended evaluation reload; evaluated modules keep identity', () =>
  withChild('vm-script', async (child) => {
    // a.mjs fails linking (its ./b.mjs decision arrives late); d.mjs fails evaluation (its
    // import() starts after the evaluation ended).
    await child.value(`globalThis.settle = ${SETTLE};
globalThis.first = settle(import("./a.mjs"));
globalThis.firstD = settle(import("./d.mjs"));
globalThis.c = await import("./c.mjs");
1`, { settleMs: 400 });
    assert.equal(await child.value('await first'), ENDED);
    assert.equal(await child.value('await firstD'), ENDED);
    assert.equal(await child.value('(await import("./a.mjs")).a'), 'A');
    assert.equal(await child.value('(await import("./d.mjs")).d === c.c'), true);
    assert.equal(await child.value('(await import("./c.mjs")) === c'), true);
  }));

// Node REPL decisions are synchronous: its import resolving late loads a module that evaluates
// slowly. Once loaded, the module imports normally in later evaluations.
test('repl: a retained evaluation\'s late imports reject; saved functions import normally', () =>
  withChild('repl', async (child) => {
    await child.value(`globalThis.settle = ${SETTLE};
globalThis.later = () => import("sync:mod");
globalThis.resolvedLate = settle(import("./slow.mjs"));
setTimeout(() => { globalThis.startedLate = settle(import("sync:mod")); }, 50);
1`, { settleMs: 300 });
    assert.equal(await child.value('await globalThis.startedLate'), ENDED);
    assert.equal(await child.value('await globalThis.resolvedLate'), ENDED);
    assert.equal(await child.value('(await globalThis.later()).x'), 'mod');
    assert.equal(await child.value('(await import("./slow.mjs")).x'), 'slow');
  }));

// Bare specifiers: Node's ESM resolver with the runner's conditions picks the file; format
// `module` is VM-loaded (its static import consults the handler), CommonJS stays with Node.
test('vm-script: bare specifiers resolve with active conditions; ESM results are VM-loaded', async () => {
  const pkg = path.join(dir, 'node_modules', 'pk');
  const cjs = path.join(dir, 'node_modules', 'cj');
  mkdirSync(pkg, { recursive: true });
  mkdirSync(cjs, { recursive: true });
  writeFileSync(path.join(pkg, 'package.json'), '{"name":"pk","type":"module","exports":{"custom":"./c.js","default":"./d.js"}}');
  writeFileSync(path.join(pkg, 'c.js'), 'import { x } from "sync:mod"; export const v = "custom:" + x;');
  writeFileSync(path.join(pkg, 'd.js'), 'import { x } from "sync:mod"; export const v = "default:" + x;');
  writeFileSync(path.join(cjs, 'package.json'), '{"name":"cj","main":"i.js"}');
  writeFileSync(path.join(cjs, 'i.js'), 'module.exports = { n: 3 };');
  const program = 'inspect((await import("pk")).v, (await import("cj")).default.n)';
  const plain = await runProgram(program, { format: 'vm-script', cwd: dir, nodeArgs });
  assert.equal(plain.text, 'default:mod 3\n', JSON.stringify(plain.result));
  const custom = await runProgram(program, { format: 'vm-script', cwd: dir, nodeArgs: ['--conditions=custom', ...nodeArgs] });
  assert.equal(custom.text, 'custom:mod 3\n', JSON.stringify(custom.result));
});
