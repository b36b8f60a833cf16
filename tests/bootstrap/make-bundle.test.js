// bootstrap/make-bundle.mjs: the ESM-to-CommonJS transform behind child.cjs. The whole bootstrap
// suite also runs against the bundle (PTC_BOOTSTRAP_ENTRY=child.cjs); these cases pin the
// transform's own rules: lazy imports, live exports, scopes, `new`, and refused constructs.
import { spawnSync } from 'node:child_process';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { createRequire } from 'node:module';
import { BUNDLE_FILE, CACHE_FILE, PARSER_CACHE_FILE, PARSER_FILE, bundle, lazyUnicodeTables, squeeze, transformModule } from '../../bootstrap/make-bundle.mjs';
import { loadParser } from '../../bootstrap/parser.js';

const BOOTSTRAP = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', '..', 'bootstrap');

// Evaluates one transformed module with stub loaders; returns its exports and the load log.
function evaluate(source, modules = {}) {
  const loaded = [];
  const code = transformModule('dir/m.js', source);
  const factory = new Function('__lazy', '__load', '__export', `return (${code});`);
  const lazy = (load) => { let done = false; let v; return () => (done ? v : ((v = load()), (done = true), v)); };
  const load = (id) => { loaded.push(id); return modules[id]; };
  const exportAll = (target, getters) => {
    for (const [name, get] of Object.entries(getters)) Object.defineProperty(target, name, { get, enumerable: true });
  };
  const exports = {};
  const meta = { url: 'file:///b/dir/m.js', require: (s) => { loaded.push(`require:${s}`); return modules[s]; } };
  factory(lazy, load, exportAll)(exports, meta);
  return { exports, loaded };
}

test('an import loads on first use of its binding, not before', () => {
  const { exports, loaded } = evaluate(
    "import { twice } from './lib.js';\nexport function f(x) { return twice(x); }",
    { 'dir/lib.js': { twice: (x) => 2 * x } },
  );
  assert.deepEqual(loaded, []);
  assert.equal(exports.f(21), 42);
  assert.deepEqual(loaded, ['dir/lib.js']);
});

test('exports are live bindings, in the temporal dead zone until initialized', () => {
  const { exports } = evaluate('export let n = 1;\nexport function bump() { n += 1; }\nexport class C {}');
  exports.bump();
  assert.equal(exports.n, 2);
  assert.equal(typeof exports.C, 'function');
  assert.throws(() => evaluate('export const early = read();\nfunction read() { return later; }\nexport const later = 1;'), ReferenceError);
});

test('a local of the same name shadows the import in its scope only', () => {
  const { exports } = evaluate(
    "import { v } from '../v.js';\nexport function inner() { const v = 'local'; return v; }\nexport function outer() { return v; }\nexport function param(v) { return v; }",
    { 'v.js': { v: 'imported' } },
  );
  assert.equal(exports.inner(), 'local');
  assert.equal(exports.outer(), 'imported');
  assert.equal(exports.param('arg'), 'arg');
});

test('default, namespace and shorthand uses; `new` of an imported member keeps its meaning', () => {
  class Socket { constructor(o) { this.o = o; } }
  const { exports } = evaluate(
    "import net from 'pkg';\nimport * as ns from './ns.js';\nexport const s = new net.Socket({ fd: 3 });\nexport const o = { ns };",
    { pkg: { Socket }, 'dir/ns.js': { a: 1 } },
  );
  assert.ok(exports.s instanceof Socket);
  assert.deepEqual(exports.s.o, { fd: 3 });
  assert.deepEqual(exports.o, { ns: { a: 1 } });
});

test('a relative require of a .cjs file stays a require: Node loads that file', () => {
  const { exports, loaded } = evaluate(
    "import { createRequire } from 'node:module';\nconst require = createRequire(import.meta.url);\nexport const load = () => require('../generated.cjs');",
    { '../generated.cjs': { generated: true } },
  );
  assert.deepEqual(exports.load(), { generated: true });
  assert.deepEqual(loaded, ['require:../generated.cjs']);
});

test('squeezing drops comments and spaces between tokens, keeps every token and each line break', () => {
  const source = "/* head */ var a = 1 // one\n\n  var b = a\n  ++b; /* a\n break */ b =\tb   /x/g; var r = /re  g/g; `t ${ a  }  u`";
  assert.equal(squeeze('s.js', source), " var a = 1\nvar b = a\n++b;\nb = b /x/g; var r = /re  g/g; `t ${ a }  u`");
  assert.throws(() => squeeze('s.js', 'var s = "\u00e9";'), /^Error: s\.js: a token at offset 8 is not ASCII: "\\"\u00e9\\""$/);
  assert.equal(squeeze('s.js', '// \u2014 only a comment\nx'), '\nx');
  assert.equal(squeeze('s.js', source, { keepLines: true }), " var a = 1\n\nvar b = a\n++b;\nb = b /x/g; var r = /re  g/g; `t ${ a }  u`");
});

// The child's bundle keeps V8's line numbers of every function (a stack through the bootstrap
// names the lines of the unsqueezed bundle) and about 40% less source per process.
test('child-bundle.cjs is the bundle squeezed line for line', () => {
  const text = fs.readFileSync(path.join(BOOTSTRAP, BUNDLE_FILE), 'latin1');
  const unsqueezed = bundle();
  assert.equal(text.split('\n').length, unsqueezed.split('\n').length + 1, 'one line more: the wrapper closes on its own');
  assert.ok(text.length < unsqueezed.length * 0.7, `${text.length} of ${unsqueezed.length}`);
  assert.equal(text.includes('// ---- '), false, 'no module marker comment is left');
});

// The parser the child loads (bootstrap/parser.js) is npm's acorn and acorn-walk, squeezed.
test('parser-bundle.cjs is ASCII and parses and walks as the npm packages do', () => {
  const text = fs.readFileSync(path.join(BOOTSTRAP, PARSER_FILE), 'latin1');
  assert.equal(/[^\x00-\x7f]/.test(text), false);
  const require = createRequire(path.join(BOOTSTRAP, 'make-bundle.mjs'));
  const bundled = loadParser();
  const npm = { acorn: require('acorn'), walk: require('acorn-walk') };
  assert.equal(bundled.acorn.version, npm.acorn.version);
  const program = fs.readFileSync(path.join(BOOTSTRAP, 'evaluators/scoped-repl.js'), 'utf8');
  const options = { ecmaVersion: 'latest', sourceType: 'module', locations: true };
  assert.deepEqual(JSON.parse(JSON.stringify(bundled.acorn.parse(program, options))), JSON.parse(JSON.stringify(npm.acorn.parse(program, options))));
  const types = (walk, ast) => { const seen = []; walk.full(ast, (node) => seen.push(node.type)); return seen; };
  assert.deepEqual(types(bundled.walk, bundled.acorn.parse(program, options)), types(npm.walk, npm.acorn.parse(program, options)));
  assert.throws(() => bundled.acorn.parse('let let = 1', { ecmaVersion: 'latest' }), { name: 'SyntaxError', pos: 4 });
});

// acorn's Unicode property tables are built on first use (make-bundle.mjs, lazyUnicodeTables):
// each ECMAScript version still accepts and refuses the \p{...} escapes npm's acorn does.
test("the bundled acorn checks Unicode property escapes as npm's does, in every version", () => {
  const require = createRequire(path.join(BOOTSTRAP, 'make-bundle.mjs'));
  const bundled = loadParser().acorn;
  const npm = require('acorn');
  const outcome = (acorn, source, ecmaVersion) => {
    try {
      return JSON.stringify(acorn.parse(source, { ecmaVersion }).body[0].expression.regex);
    } catch (error) {
      return `${error.name}: ${error.message}`;
    }
  };
  const escapes = ['Script=Greek', 'sc=Kawi', 'Script_Extensions=Latin', 'gc=Lu', 'Lu', 'ASCII', 'Extended_Pictographic',
    'RGI_Emoji', 'Basic_Emoji', 'Script=Nag_Mundari', 'Script=Unknown_Script', 'General_Category=Nope', 'NotAProperty'];
  const seen = new Set();
  for (const ecmaVersion of [6, 9, 11, 12, 13, 14, 'latest']) {
    for (const escape of escapes) {
      for (const flags of ['u', 'v']) {
        const source = `/\\p{${escape}}/${flags}`;
        const expected = outcome(npm, source, ecmaVersion);
        assert.equal(outcome(bundled, source, ecmaVersion), expected, `${source} at ${ecmaVersion}`);
        seen.add(expected.startsWith('SyntaxError') ? 'refused' : 'accepted');
      }
    }
  }
  assert.deepEqual([...seen].sort(), ['accepted', 'refused']); // the cases cover both outcomes
  // Loading the bundle builds no table: it allocates about 240 KB fewer young-generation objects
  // than npm's acorn, which builds them all (the pinned Node, a fresh process each).
  // The bundle compiles without its cache here, as npm's file does; a young generation of 16 MiB
  // keeps a scavenge from emptying it in between.
  const youngBytes = (load) => {
    const code = `const v8 = require('v8');
      const used = () => v8.getHeapSpaceStatistics().find((s) => s.space_name === 'new_space').space_used_size;
      const before = used(); ${load}; process.stdout.write(String(used() - before));`;
    return Number(spawnSync(process.execPath, ['--min-semi-space-size=16', '-e', code], { encoding: 'utf8' }).stdout);
  };
  const bundle = JSON.stringify(path.join(BOOTSTRAP, PARSER_FILE));
  const npmBytes = youngBytes(`require(${JSON.stringify(require.resolve('acorn'))})`);
  assert.ok(npmBytes - youngBytes(`require('vm').runInThisContext(require('fs').readFileSync(${bundle}, 'utf8'))({}, require, {})`) > 200_000);
  assert.throws(() => lazyUnicodeTables('acorn.js', 'var data = {};'), /^Error: acorn\.js: the loop that builds the Unicode property tables is not there once$/);
});

test('line numbers stay those of the source', () => {
  const code = transformModule('m.js', "import a from 'node:fs';\n\nexport const x = 1;\nthrow new Error('here');");
  assert.equal(code.split('\n').findIndex((l) => l.includes("'here'")), 3);
});

test('unsupported constructs stop the build with the file and line', () => {
  assert.throws(() => transformModule('m.js', "export { a as b };\nconst a = 1;"), /^Error: m\.js:1:1: ExportNamedDeclaration is not supported/);
  assert.throws(() => transformModule('m.js', 'export default 1;'), /ExportDefaultDeclaration is not supported/);
  assert.throws(() => transformModule('m.js', 'const x = import.meta.dirname;'), /m\.js:1:11: only import\.meta\.url and import\.meta\.resolve/);
  assert.throws(() => transformModule('m.js', 'await 1;'), /top-level await outside the entry module/);
});

// The bundle's start-up promise (bootstrap/README.md): a trivial per-call program gets its result
// before the child loads net, the stream modules or child_process. The control shows the probe
// sees those modules once something loads them.
test('the bundled child answers a trivial program without loading net, streams or child_process', async () => {
  process.env.PTC_BOOTSTRAP_ENTRY = 'child.cjs';
  const { runProgram } = await import('./fake-host.js');
  const probe = 'process.moduleLoadList.filter((m) => /^NativeModule (net|stream|child_process)$/.test(m))';
  const loaded = async (program) => {
    const { result } = await runProgram(program);
    assert.equal(result.ok, true, JSON.stringify(result));
    return result.value;
  };
  assert.deepEqual(await loaded(`return ${probe}`), []);
  assert.deepEqual((await loaded(`await import("node:child_process"); return ${probe}`)).sort(), [
    'NativeModule child_process',
    'NativeModule net',
    'NativeModule stream',
  ]);
});

// Binding calls of a process's first run are read through libuv's pipe handle
// (bootstrap/control-reader.js), not a net.Socket, whose modules cost the first call about 8 ms.
// The control shows the probe sees net once a program loads it.
test('the first run of the bundled child reads its binding replies without loading net or streams', async () => {
  process.env.PTC_BOOTSTRAP_ENTRY = 'child.cjs';
  const { runProgram } = await import('./fake-host.js');
  const probe = 'process.moduleLoadList.filter((m) => /^NativeModule (net|stream)$/.test(m))';
  const bindings = [{ global: 'tools', functions: ['echo'] }];
  const loaded = async (program) => {
    const { result, calls } = await runProgram(program, { bindings, reply: () => ({ ok: true, value: 2 }) });
    assert.equal(result.ok, true, JSON.stringify(result));
    assert.equal(calls.length, 3);
    return result.value;
  };
  const threeCalls = 'let sum = 0; for (let i = 0; i < 3; i++) sum += await tools.echo(i);';
  assert.deepEqual(await loaded(`${threeCalls} return [sum, ${probe}]`), [6, []]);
  assert.deepEqual(await loaded(`${threeCalls} await import("node:net"); return [sum, ${probe}.sort()]`), [
    6,
    ['NativeModule net', 'NativeModule stream'],
  ]);
});

// The entry child.cjs compiles the bundle from the build's code cache (make-bundle.mjs, loader()),
// and parser.js the parser's bundle from its own; the child's V8 flags are those of the host.
test('the code caches the build made fit their bundles and this Node: V8 accepts them', async () => {
  const { NODE } = await import('./fake-host.js');
  for (const [cacheFile, bundleFile] of [[CACHE_FILE, BUNDLE_FILE], [PARSER_CACHE_FILE, PARSER_FILE]]) {
    const bytes = fs.readFileSync(path.join(BOOTSTRAP, cacheFile));
    const headerEnd = bytes.indexOf(0x0a) + 1;
    assert.match(bytes.toString('latin1', 0, headerEnd), new RegExp(`^ptc-code-cache [0-9a-f]{16} ${process.version.replace(/\./g, '\\.')}\n$`));
    // Each compile in a fresh process: V8 reuses a source it compiled before without reading data.
    const rejected = (data) => {
      const file = path.join(BOOTSTRAP, bundleFile);
      const code = `const s = new (require('vm').Script)(require('fs').readFileSync(${JSON.stringify(file)}, 'utf8'),
        { filename: ${JSON.stringify(file)}, cachedData: require('fs').readFileSync(0) }); process.stdout.write(String(s.cachedDataRejected));`;
      const flags = ['--max-old-space-size=512', '--experimental-vm-modules', '--no-concurrent-recompilation'];
      return spawnSync(NODE, [...flags, '-e', code], { input: data, encoding: 'utf8' }).stdout;
    };
    assert.equal(rejected(bytes.subarray(headerEnd)), 'false', cacheFile);
    // Control: the probe does report data that is not a code cache of this source.
    assert.equal(rejected(Buffer.from(bytes.subarray(headerEnd)).fill(7, 0, 64)), 'true', cacheFile);
  }
  // The parser's cache names the bundle whose first line names it.
  const parserId = /^[^\n]*\/\/ parser-bundle ([0-9a-f]{16})\n/.exec(fs.readFileSync(path.join(BOOTSTRAP, PARSER_FILE), 'utf8'))[1];
  assert.equal(fs.readFileSync(path.join(BOOTSTRAP, PARSER_CACHE_FILE), 'latin1').split(' ')[1], parserId);
});

// parser.js compiles the parser's bundle as any script when the cache is missing or names
// another bundle or Node (a copy of parser.js and the bundle in a directory of their own).
test('the parser loads without its code cache and ignores a cache made for another bundle', async () => {
  const { NODE } = await import('./fake-host.js');
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ptc-parser-cache-'));
  try {
    for (const name of ['parser.js', PARSER_FILE, PARSER_CACHE_FILE]) fs.copyFileSync(path.join(BOOTSTRAP, name), path.join(dir, name));
    fs.writeFileSync(path.join(dir, 'package.json'), '{"type":"module"}');
    const parse = () => {
      const code = `import { loadParser } from ${JSON.stringify(path.join(dir, 'parser.js'))};
        const { acorn, walk } = loadParser(); let n = 0; walk.full(acorn.parse('let y = 2; y * 3', { ecmaVersion: 'latest' }), () => n++);
        process.stdout.write(String(n));`;
      return spawnSync(NODE, ['--input-type=module', '-e', code], { encoding: 'utf8' }).stdout;
    };
    assert.equal(parse(), '9');
    const cache = fs.readFileSync(path.join(dir, PARSER_CACHE_FILE));
    fs.writeFileSync(path.join(dir, PARSER_CACHE_FILE), Buffer.concat([Buffer.from('ptc-code-cache 0000000000000000 v0.0.0\n'), cache.subarray(cache.indexOf(0x0a) + 1)]));
    assert.equal(parse(), '9');
    fs.rmSync(path.join(dir, PARSER_CACHE_FILE));
    assert.equal(parse(), '9');
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

// A cache that is missing, or whose header names another bundle or Node, is not used: the
// child then compiles the bundle as any script and runs programs the same.
test('the entry runs without its code cache and ignores a cache made for another bundle', async () => {
  const { NODE, runProgram } = await import('./fake-host.js');
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ptc-code-cache-'));
  try {
    for (const name of ['child.cjs', BUNDLE_FILE, CACHE_FILE]) fs.copyFileSync(path.join(BOOTSTRAP, name), path.join(dir, name));
    const run = async () => (await runProgram('return [1, "two"]', { command: [NODE, path.join(dir, 'child.cjs')] })).result;
    assert.deepEqual(await run(), { type: 'result', run: 1, ok: true, value: [1, 'two'] });
    const cache = fs.readFileSync(path.join(dir, CACHE_FILE));
    fs.writeFileSync(path.join(dir, CACHE_FILE), Buffer.concat([Buffer.from('ptc-code-cache 0000000000000000 v0.0.0\n'), cache.subarray(cache.indexOf(0x0a) + 1)]));
    assert.deepEqual(await run(), { type: 'result', run: 1, ok: true, value: [1, 'two'] });
    fs.rmSync(path.join(dir, CACHE_FILE));
    assert.deepEqual(await run(), { type: 'result', run: 1, ok: true, value: [1, 'two'] });
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});
