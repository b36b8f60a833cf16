// ProgramImportHandler in the child: installed by a preload (`--import`) the way a runner would,
// then applied to program imports per evaluator: synchronous-only in AsyncFunction and Node REPL,
// asynchronous decisions in VM Script and the scoped REPL, request fields, no reentry for redirects, module
// identity per exports object and Promise assimilation of a callable `then` export.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, writeFileSync, realpathSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { BOOTSTRAP_DIR, runProgram, withRetainedChild } from './fake-host.js';

const dir = realpathSync(mkdtempSync(path.join(os.tmpdir(), 'ptc-imports-')));
writeFileSync(path.join(dir, 'data.json'), '{"n": 7}');
writeFileSync(path.join(dir, 'target.mjs'), 'export const who = "target";');
const preload = path.join(dir, 'preload.mjs');
writeFileSync(preload, `
import { setProgramImportHandler } from ${JSON.stringify(pathToFileURL(path.join(BOOTSTRAP_DIR, 'imports/handler.js')).href)};
const shared = { value: 1 };
const requests = [];
globalThis.__requests = requests;
setProgramImportHandler((request) => {
  requests.push({ ...request, attributes: { ...request.attributes } });
  switch (request.specifier) {
    case 'async:mod': return Promise.resolve({ type: 'module', exports: { default: 'async' } });
    case 'async:reject': return Promise.reject(new Error('rejected decision'));
    case 'sync:shared': return { type: 'module', exports: shared };
    case 'sync:fresh': return { type: 'module', exports: { value: 1 } };
    case 'sync:then': return { type: 'module', exports: { then(resolve) { resolve(5); } } };
    case 'redirect:me': return { type: 'redirect', specifier: './target.mjs' };
    case 'bad:decision': return { type: 'nope' };
    default: return { type: 'default' };
  }
});
`);

const run = (program, format) => runProgram(program, { format, cwd: dir, nodeArgs: ['--experimental-vm-modules', `--import=${pathToFileURL(preload).href}`] });

const PROGRAM = `
var out = [];
var a = await import("sync:shared"), b = await import("sync:shared"), c = await import("sync:fresh"), d = await import("sync:fresh");
out.push(a === b, c === d);
out.push((await import("redirect:me")).who);
out.push((await import("./data.json", { with: { type: "json" } })).default.n);
try { await import("bad:decision") } catch (e) { out.push(e.message) }
var reqs = globalThis.__requests;
out.push(reqs.some((r) => r.specifier === "./target.mjs"));
var json = reqs.find((r) => r.specifier === "./data.json");
out.push(json.attributes.type, json.referrer);
`;

for (const format of ['async-function', 'vm-script', 'scoped-repl', 'repl']) {
  test(`${format}: identity, redirect without reentry, attributes, referrer, invalid decisions`, async () => {
    const { result, text } = await run(`${PROGRAM}\ninspect(JSON.stringify(out));`, format);
    assert.equal(result.ok, true, JSON.stringify(result));
    const out = JSON.parse(text);
    // One exports object is one module; each fresh exports object is another module.
    assert.deepEqual(out.slice(0, 2), [true, false]);
    assert.deepEqual(out.slice(2, 4), ['target', 7]);
    assert.match(out[4], /unknown import decision type: nope/);
    // Node's REPL imports from <cwd>/repl; the other evaluators name the compilation.
    assert.deepEqual(out.slice(5), [false, 'json', path.join(dir, format === 'repl' ? 'repl' : '[program]')]);
  });
}

test('AsyncFunction and Node REPL reject a Promise decision; VM Script and the scoped REPL accept it', async () => {
  const af = await run('try { await import("async:mod"); return "loaded" } catch (e) { return e.message }', 'async-function');
  assert.match(af.result.value, /requires a synchronous import decision/);
  const repl = await run('var m; try { await import("async:mod"); m = "loaded" } catch (e) { m = e.message }; m', 'repl');
  assert.match(repl.result.value, /requires a synchronous import decision/);
  for (const format of ['vm-script', 'scoped-repl']) {
    const { result, text } = await run('inspect((await import("async:mod")).default)', format);
    assert.equal(result.ok, true, JSON.stringify(result));
    assert.equal(text, 'async\n');
  }
});

test('a callable then export follows dynamic-import Promise assimilation', async () => {
  const { result } = await run('return await import("sync:then")', 'async-function');
  assert.equal(result.value, 5);
  for (const format of ['vm-script', 'scoped-repl']) {
    const { text } = await run('inspect(await import("sync:then"))', format);
    assert.equal(text, '5\n', format);
  }
});

for (const format of ['vm-script', 'scoped-repl']) {
  test(`${format}: every dynamic import asks the handler; a rejected decision rejects only that import`, async () => {
    const { result, text } = await run(`var before = globalThis.__requests.length, out = [];
for (let i = 0; i < 3; i++) out.push((await import("sync:shared")).value);
try { await import("async:reject") } catch (e) { out.push(e.message) }
out.push((await import("./target.mjs")).who, globalThis.__requests.slice(before).filter((r) => r.specifier === "sync:shared").length);
inspect(JSON.stringify(out))`, format);
    assert.equal(result.ok, true, JSON.stringify(result));
    assert.deepEqual(JSON.parse(text), [1, 1, 1, 'rejected decision', 'target', 3]);
  });
}

test('repl: a callable then export makes the import a non-module value, which rejects', async () => {
  const { result } = await run('var m; try { m = await import("sync:then") } catch (e) { m = e.message }; m', 'repl');
  assert.equal(result.value, 'Provided module is not an instance of Module');
});

// With a handler, Node REPL input calls an importer in place of each `import(` (same length).
test('repl: imports through the importer keep locations, context Promises and the first directory', async () => {
  mkdirSync(path.join(dir, 'sub'), { recursive: true });
  writeFileSync(path.join(dir, 'sub', 'target.mjs'), 'export const who = "sub";');
  const throwing = 'var s; try { import("./target.mjs"); null.x } catch (e) { s = e.stack.split("\\n")[1] }; s';
  const stack = await run(throwing, 'repl');
  // V8 reports the column of the property read from null.
  assert.equal(stack.result.value, `    at ${path.join(dir, '[program]')}:1:${throwing.indexOf('null.x') + 6}`);
  const realm = await run('import("./target.mjs") instanceof Promise', 'repl');
  assert.equal(realm.result.value, true);
  // Text that only looks like an import stays as written.
  const text = await run('"import(\'./x\')" + /* import( */ `${"import"}(`', 'repl');
  assert.equal(text.result.value, "import('./x')import(");
  // Relative to the directory of the evaluation that compiled the import, as in Node's REPL.
  const saved = await run('var f = () => import("./target.mjs"); process.chdir("sub"); (await f()).who + " " + (await import("./target.mjs")).who', 'repl');
  assert.equal(saved.result.value, 'target target');
});

test('repl: names starting with the importer prefix are rejected with their location', async () => {
  const { result } = await run('var ok = 1;\nfunction f(__$i00) { return import("x") }', 'repl');
  assert.equal(result.ok, false);
  assert.match(result.error.message, /names starting with __\$i are reserved/);
  assert.match(result.error.message, /\[program\]:2:12\n/);
  // Property names never resolve to the importer and stay allowed.
  const property = await run('({ __$i00: 1 }).__$i00', 'repl');
  assert.equal(property.result.value, 1);
});

// VM Script import handling rejects source-phase imports before asking the handler: the
// program's `import.source()` and a static `import source` of a VM-loaded module.
for (const format of ['vm-script', 'scoped-repl']) {
  test(`${format}: source-phase imports reject before the handler is asked`, async () => {
    writeFileSync(path.join(dir, 'source-target.mjs'), 'export const t = 1;');
    writeFileSync(path.join(dir, 'source-static.mjs'), 'import source s from "./source-target.mjs"; export const x = 1;');
    const settle = (code) => `${code}.then(() => "loaded", (e) => e.message)`;
    // Acorn (the scoped REPL's parser) does not know `import.source`: only the static case there.
    const dynamic = format === 'vm-script' ? settle('import.source("./source-target.mjs")') : 'Promise.resolve("n/a")';
    // The scoped REPL does not await a Promise completion: the program awaits it.
    const { result, text } = await run(`${format === 'scoped-repl' ? 'await ' : ''}Promise.all([${dynamic}, ${settle('import("./source-static.mjs")')}]).then((out) =>
      inspect(JSON.stringify([...out, globalThis.__requests.filter((r) => r.specifier === "./source-target.mjs").length])))`, format);
    assert.equal(result.ok, true, JSON.stringify(result));
    const [fromProgram, fromModule, asked] = JSON.parse(text);
    if (format === 'vm-script') assert.match(fromProgram, /source-phase imports are not supported.*\.\/source-target\.mjs/);
    assert.match(fromModule, /source-phase imports are not supported.*\.\/source-target\.mjs/);
    assert.equal(asked, 0);
  });
}

test('vm-script: import.meta.resolve of a VM-loaded module resolves bare specifiers like Node', async () => {
  const pkg = path.join(dir, 'node_modules', 'meta-pkg');
  mkdirSync(pkg, { recursive: true });
  writeFileSync(path.join(pkg, 'package.json'), '{"name":"meta-pkg","type":"module","exports":"./main.js"}');
  writeFileSync(path.join(pkg, 'main.js'), 'export default 1;');
  writeFileSync(path.join(dir, 'meta-resolve.mjs'), 'export const r = [import.meta.resolve("meta-pkg"), import.meta.resolve("./x.mjs"), import.meta.resolve("node:fs")];');
  const { result, text } = await run('inspect(JSON.stringify((await import("./meta-resolve.mjs")).r))', 'vm-script');
  assert.equal(result.ok, true, JSON.stringify(result));
  assert.deepEqual(JSON.parse(text), [pathToFileURL(path.join(pkg, 'main.js')).href, pathToFileURL(path.join(dir, 'x.mjs')).href, 'node:fs']);
});

// AsyncFunction and Node REPL interception uses module hooks, so a runner started without
// --experimental-vm-modules still applies every decision.
for (const format of ['async-function', 'repl']) {
  test(`${format}: decisions apply without the VM startup flag`, async () => {
    const program = `var out = [];
out.push((await import("sync:shared")).value, (await import("redirect:me")).who, (await import("./target.mjs")).who);
try { await import("bad:decision") } catch (e) { out.push(e.message) }
inspect(JSON.stringify(out));`;
    const { result, text } = await runProgram(program, { format, cwd: dir, nodeArgs: [`--import=${pathToFileURL(preload).href}`] });
    assert.equal(result.ok, true, JSON.stringify(result));
    const out = JSON.parse(text);
    assert.deepEqual(out.slice(0, 3), [1, 'target', 'target']);
    assert.match(out[3], /unknown import decision type: nope/);
  });
}

test('async-function: imports keep their locations; names starting with the importer prefix are reserved', async () => {
  const throwing = 'try { import("./target.mjs"); null.x } catch (e) { return e.stack.split("\\n")[1] }';
  const { result } = await run(throwing, 'async-function');
  assert.equal(result.value, `    at ${path.join(dir, '[program]')}:1:${throwing.indexOf('null.x') + 6}`);
  const reserved = await run('const __$i00 = 1; return 2', 'async-function');
  assert.match(reserved.result.error.message, /names starting with __\$i are reserved[^]*\[program\]:1:7/);
});

// A saved function keeps the referrer of the compilation that made it after later evaluations
// run in another directory. The scoped REPL resolves every call's imports from the environment's
// first working directory.
for (const [format, referrer, firstDirectoryOnly] of [['vm-script', '[program]', false], ['scoped-repl', '[program]', true], ['repl', 'repl', false]]) {
  test(`${format}: saved functions keep their referrer after the working directory changes`, async () => {
    mkdirSync(path.join(dir, 'sub'), { recursive: true });
    writeFileSync(path.join(dir, 'sub', 'target.mjs'), 'export const who = "sub";');
    const options = { format, cwd: dir, nodeArgs: ['--experimental-vm-modules', `--import=${pathToFileURL(preload).href}`] };
    await withRetainedChild(options, async (child) => {
      await child.value('globalThis.saved = () => import("./target.mjs"); 1');
      const program = 'var before = globalThis.__requests.length; var who = [(await saved()).who, (await import("./target.mjs")).who]; ' +
        'inspect(JSON.stringify([who, globalThis.__requests.slice(before).map((r) => r.referrer)]))';
      const { text } = await child.run(program, { cwd: path.join(dir, 'sub') });
      const [who, referrers] = JSON.parse(text);
      const later = firstDirectoryOnly ? dir : path.join(dir, 'sub');
      assert.deepEqual(referrers, [path.join(dir, referrer), path.join(later, referrer)]);
      assert.deepEqual(who, ['target', firstDirectoryOnly ? 'target' : 'sub']);
    });
  });
}
