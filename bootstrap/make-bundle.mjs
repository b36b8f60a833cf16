// Generates the child's bundle: the ESM module graph of process.js as one CommonJS file
// (child-bundle.cjs), so a child starts without Node's ESM loader and loads each module (and each
// builtin, through process.getBuiltinModule) only when the program first uses one of its
// bindings; V8's code cache of it (child-bundle.cache); and the entry the host starts
// (child.cjs, see loader()). The sources stay the truth; the build runs this script on every
// `meson compile`, which rewrites the files only when they changed. Runners (runner.js) keep
// loading the ESM sources.
//
//   node make-bundle.mjs [--out FILE] [--stamp FILE] [--check]
//     --out: the entry (default child.cjs next to this script; the bundle and cache go beside it);
//     --stamp: a file written after them (the build's ordering output); --check: exit 1 if the
//     entry or bundle differs from the sources or the cache was not made from this bundle.
//
// What the transform supports is what the sources use; anything else stops the build with the
// file and line, so a new construct is noticed, never mistranslated:
//   import d from 'node:x' / 'pkg'; import { a, b as c } from '...'; import * as ns from '...'
//   export function|async function|class|const|let ...
//   import.meta.url; createRequire(import.meta.url) and its require('./relative.js') (bundled;
//   a relative '.cjs' file is not bundled but loaded by Node: parser-bundle.cjs, below);
//   import('./relative.js') with a literal
//   top-level await only in the entry module
// Each reference to an imported binding becomes a call of a per-import loader (`__i3().name`);
// references inside a scope that declares the same name are the local's and stay.

import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import * as acorn from 'acorn';
import * as walk from 'acorn-walk';

const ROOT = path.dirname(fileURLToPath(import.meta.url));
const ENTRY = 'process.js';

class BundleError extends Error {}

function fail(id, node, message) {
  const where = node?.loc ? `:${node.loc.start.line}:${node.loc.start.column + 1}` : '';
  throw new BundleError(`${id}${where}: ${message}`);
}

// A module id is its path relative to ROOT, with '/' separators.
function resolveRelative(fromId, specifier) {
  return path.posix.normalize(path.posix.join(path.posix.dirname(fromId), specifier));
}

const isRelative = (specifier) => specifier.startsWith('./') || specifier.startsWith('../');

function loaderFor(fromId, specifier, pending) {
  if (specifier.startsWith('node:')) return `process.getBuiltinModule(${JSON.stringify(specifier)})`;
  if (isRelative(specifier)) {
    const id = resolveRelative(fromId, specifier);
    pending.push(id);
    return `__load(${JSON.stringify(id)})`;
  }
  return `__meta.require(${JSON.stringify(specifier)})`;
}

const isFunction = (node) => /Function/.test(node.type);
const BLOCK_SCOPES = new Set(['BlockStatement', 'StaticBlock', 'ForStatement', 'ForInStatement', 'ForOfStatement', 'SwitchStatement', 'Program']);

// The scope node that declares the binding identifier at the end of `ancestors`.
function declaringScope(ancestors) {
  const node = ancestors[ancestors.length - 1];
  for (let i = ancestors.length - 2; i >= 0; i--) {
    const a = ancestors[i];
    if (a.type === 'VariableDeclaration') {
      for (let j = i - 1; j >= 0; j--) {
        if (a.kind === 'var' ? isFunction(ancestors[j]) || ancestors[j].type === 'Program' : BLOCK_SCOPES.has(ancestors[j].type)) return ancestors[j];
      }
      return ancestors[0];
    }
    if (isFunction(a)) return a.type === 'FunctionDeclaration' && a.id === node ? ancestors[i - 1] : a;
    if (a.type === 'CatchClause' || (a.type === 'ClassExpression' && a.id === node)) return a;
    if (a.type === 'ClassDeclaration' && a.id === node) return ancestors[i - 1];
  }
  return ancestors[0];
}

// Whether the identifier at the end of ancestors starts the callee of a `new` (`new a.b.C()`):
// its replacement, a call, needs parentheses there.
function inNewCallee(ancestors) {
  let i = ancestors.length - 1;
  while (i > 0 && ancestors[i - 1].type === 'MemberExpression' && ancestors[i - 1].object === ancestors[i]) i--;
  return i > 0 && ancestors[i - 1].type === 'NewExpression' && ancestors[i - 1].callee === ancestors[i];
}

function isTopLevelAwait(ancestors) {
  return !ancestors.some((a) => /Function/.test(a.type) || a.type === 'StaticBlock' || a.type === 'PropertyDefinition');
}

export function transformModule(id, source, pending = []) {
  const ast = acorn.parse(source, { ecmaVersion: 'latest', sourceType: 'module', locations: true });
  const edits = []; // [start, end, text]
  const holders = [];
  const imported = new Map(); // local name -> replacement expression
  const exported = [];
  let topLevelAwait = false;

  for (const node of ast.body) {
    if (node.type === 'ImportDeclaration') {
      const holder = `__i${holders.length}`;
      const specifier = node.source.value;
      holders.push(`const ${holder} = __lazy(() => ${loaderFor(id, specifier, pending)});`);
      const foreign = !specifier.startsWith('node:') && !isRelative(specifier);
      for (const spec of node.specifiers) {
        if (spec.type === 'ImportSpecifier') imported.set(spec.local.name, `${holder}().${spec.imported.name}`);
        else if (spec.type === 'ImportNamespaceSpecifier') imported.set(spec.local.name, `${holder}()`);
        else imported.set(spec.local.name, specifier.startsWith('node:') || foreign ? `${holder}()` : `${holder}().default`);
      }
      edits.push([node.start, node.end, '']);
    } else if (node.type === 'ExportNamedDeclaration' && node.declaration && !node.source) {
      const decl = node.declaration;
      if (decl.type === 'VariableDeclaration') {
        for (const d of decl.declarations) {
          if (d.id.type !== 'Identifier') fail(id, d, 'only `export const name = ...` is supported');
          exported.push(d.id.name);
        }
      } else {
        exported.push(decl.id.name);
      }
      edits.push([node.start, decl.start, '']);
    } else if (/^Export/.test(node.type)) {
      fail(id, node, `${node.type} is not supported by the bundler`);
    }
  }

  const shadows = new Map(); // scope node -> names it declares that are also imports
  walk.fullAncestor(ast, (node, _state, ancestors, type) => {
    if (type !== 'VariablePattern' || !imported.has(node.name)) return;
    const scope = declaringScope(ancestors);
    if (!shadows.has(scope)) shadows.set(scope, new Set());
    shadows.get(scope).add(node.name);
  });
  const shadowed = (name, ancestors) => ancestors.some((a) => shadows.get(a)?.has(name));

  walk.fullAncestor(ast, (node, _state, ancestors, type) => {
    const parent = ancestors[ancestors.length - 2];
    if (type === 'Identifier' && imported.has(node.name) && !shadowed(node.name, ancestors)) {
      const replacement = imported.get(node.name);
      if (parent?.type === 'Property' && parent.shorthand && parent.value === node) {
        edits.push([parent.start, parent.end, `${node.name}: ${replacement}`]);
      } else {
        edits.push([node.start, node.end, inNewCallee(ancestors) ? `(${replacement})` : replacement]);
      }
    } else if (type === 'MetaProperty') {
      const member = parent?.type === 'MemberExpression' && parent.object === node ? parent : null;
      if (!member || member.computed || !['url', 'resolve'].includes(member.property.name)) {
        fail(id, node, 'only import.meta.url and import.meta.resolve are supported');
      }
      const call = ancestors[ancestors.length - 3];
      const isCreateRequire = call?.type === 'CallExpression' && call.arguments.length === 1 && call.arguments[0] === member &&
        call.callee.type === 'Identifier' && call.callee.name === 'createRequire';
      if (isCreateRequire) edits.push([call.start, call.end, '__meta.require']);
      else edits.push([member.start, member.end, `__meta.${member.property.name}`]);
    } else if (type === 'ImportExpression') {
      if (node.source.type === 'Literal' && isRelative(node.source.value)) {
        const target = resolveRelative(id, node.source.value);
        pending.push(target);
        edits.push([node.start, node.end, `Promise.resolve().then(() => __load(${JSON.stringify(target)}))`]);
      }
    } else if (type === 'CallExpression' && node.callee.type === 'Identifier' && node.callee.name === 'require' &&
      node.arguments[0]?.type === 'Literal' && isRelative(String(node.arguments[0].value)) &&
      !String(node.arguments[0].value).endsWith('.cjs')) {
      pending.push(resolveRelative(id, node.arguments[0].value)); // a module loaded on first use
    } else if (type === 'AwaitExpression' || (type === 'ForOfStatement' && node.await)) {
      if (isTopLevelAwait(ancestors.slice(0, -1))) topLevelAwait = true;
    }
  });
  if (topLevelAwait && id !== ENTRY) fail(id, null, 'top-level await outside the entry module');

  // A `createRequire(...)` edit contains the import.meta edit: keep the outer one.
  edits.sort((a, b) => b[0] - a[0] || (b[1] - b[0]) - (a[1] - a[0]));
  let out = source;
  let lastStart = Infinity;
  for (const [start, end, text] of edits) {
    if (end > lastStart) continue; // nested inside an edit already applied
    out = out.slice(0, start) + text + out.slice(end);
    lastStart = start;
  }
  const getters = exported.map((name) => `${name}: () => ${name}`).join(', ');
  const header = [`__export(__exports, { ${getters} });`, ...holders].join(' ');
  // The header shares the module's first line so every line number stays the source's.
  return `${topLevelAwait ? 'async ' : ''}function (__exports, __meta) { ${header}${out}\n}`;
}

export function bundle() {
  const factories = new Map();
  const pending = [ENTRY];
  while (pending.length) {
    const id = pending.shift();
    if (factories.has(id)) continue;
    const file = path.join(ROOT, id);
    if (!fs.existsSync(file)) throw new BundleError(`${id}: imported but missing`);
    factories.set(id, transformModule(id, fs.readFileSync(file, 'utf8'), pending));
  }
  const modules = [...factories].sort(([a], [b]) => a.localeCompare(b));
  return `'use strict';
// Generated by make-bundle.mjs from the ESM sources next to it (entry ${ENTRY}); do not edit.
function __lazy(load) {
  let loaded = false;
  let value;
  return () => {
    if (!loaded) {
      value = load();
      loaded = true;
    }
    return value;
  };
}
const __root = __lazy(() => process.getBuiltinModule('node:url').pathToFileURL(__dirname + '/').href);
const __createRequire = process.getBuiltinModule('node:module').createRequire;
const __cache = new Map();
function __export(target, getters) {
  for (const name of Object.keys(getters)) Object.defineProperty(target, name, { get: getters[name], enumerable: true });
}
// import.meta of a module: its source URL, and a require that loads bundled modules itself. Both
// are made on first use: a Node require per module costs more than the module's evaluation.
function __metaFor(id) {
  const url = __lazy(() => new URL(id, __root()).href);
  const external = __lazy(() => __createRequire(url()));
  const dir = id.includes('/') ? id.slice(0, id.lastIndexOf('/') + 1) : '';
  return {
    get url() {
      return url();
    },
    resolve() {
      throw new Error('import.meta.resolve is not available in the bundled bootstrap (runners load the ESM sources)');
    },
    require(specifier) {
      if (specifier.startsWith('./') || specifier.startsWith('../')) {
        const target = new URL(specifier, new URL(dir, 'file:///')).pathname.slice(1);
        if (__factories[target]) return __load(target);
      }
      if (specifier.startsWith('node:')) return process.getBuiltinModule(specifier);
      return external()(specifier);
    },
  };
}
function __load(id) {
  let exports = __cache.get(id);
  if (exports === undefined) {
    exports = Object.create(null);
    __cache.set(id, exports);
    const done = __factories[id](exports, __metaFor(id));
    if (done instanceof Promise) done.catch((error) => { throw error; });
  }
  return exports;
}
const __factories = {
${modules.map(([id, code]) => `// ---- ${id}\n${JSON.stringify(id)}: ${code},`).join('\n')}
};
__load(${JSON.stringify(ENTRY)});
`;
}

// The entry the host starts (child.cjs): it compiles the bundle (child-bundle.cjs) from V8's code
// cache of it (child-bundle.cache) when the cache was made from this bundle by this Node, and as
// any script otherwise. The cache is made after a warm-up run, so it holds every function a
// trivial per-call run compiles, which a cold child would otherwise compile on its way to its
// result. The header line guards the bytes: V8 checks only a source's length, so a cache of an
// edited bundle of the same length would run the old code.
export const BUNDLE_FILE = 'child-bundle.cjs';
export const CACHE_FILE = 'child-bundle.cache';
const WRAP_PREFIX = '(function (exports, require, module, __filename, __dirname) {';
const WRAP_SUFFIX = '\n})';
export const cacheHeader = (bundleId, nodeVersion) => `ptc-code-cache ${bundleId} ${nodeVersion}\n`;

export function loader(bundleId) {
  return `'use strict';
// Generated by make-bundle.mjs; do not edit. Starts ${BUNDLE_FILE} (bundle ${bundleId}) from V8's
// code cache ${CACHE_FILE} when that cache was made from this bundle by this Node.
const fs = process.getBuiltinModule('node:fs');
const vm = process.getBuiltinModule('node:vm');
const file = \`\${__dirname}/${BUNDLE_FILE}\`;
const header = \`ptc-code-cache ${bundleId} \${process.version}\\n\`;
let cachedData;
try {
  const bytes = fs.readFileSync(\`\${__dirname}/${CACHE_FILE}\`);
  if (bytes.toString('latin1', 0, header.length) === header) cachedData = bytes.subarray(header.length);
} catch {
  // No cache: the bundle compiles as any script.
}
// Build only (make-bundle.mjs): after the warm-up run, write the cache. The host's allow-listed
// environment never carries it, and the bootstrap's own environment confinement removes it.
// The cache records the name it was compiled under, so that compile names no build tree; V8
// takes a script's name from the compile that uses a cache, not from the cache.
const cacheOut = process.env.PTC_CODE_CACHE_OUT;
// The file is the wrapped function expression already: V8 keeps the string read as the source,
// where wrapping it here made a second copy (and a first one left as garbage).
const source = fs.readFileSync(file, 'utf8');
const script = new vm.Script(source, { filename: cacheOut ? '${BUNDLE_FILE}' : file, cachedData });
if (cacheOut) process.on('exit', () => fs.writeFileSync(cacheOut, Buffer.concat([Buffer.from(header, 'latin1'), script.createCachedData()])));
script.runInThisContext()(exports, require, module, file, __dirname);
`;
}

export function bundleId(text) {
  return createHash('sha256').update(text).digest('hex').slice(0, 16);
}

// Runs the entry once with a trivial program through a real control socket, the way the host
// does (hello, one run with a binding call, then the channel closed), and lets it write its code
// cache: it then also holds the binding path and the asynchronous reader a first call starts.
async function makeCodeCache(entry, cachePath) {
  const tmp = `${cachePath}.tmp`;
  fs.rmSync(tmp, { force: true });
  const child = spawn(process.execPath, ['--max-old-space-size=512', '--experimental-vm-modules', entry, '--max-message-bytes=1048576', '--max-pending-calls=16'], {
    stdio: ['ignore', 'ignore', 'inherit', 'pipe'],
    cwd: path.dirname(entry),
    env: { PATH: process.env.PATH ?? '/usr/bin:/bin', PTC_CODE_CACHE_OUT: tmp },
  });
  const control = child.stdio[3];
  let buffered = '';
  control.setEncoding('utf8');
  control.on('data', (chunk) => {
    buffered += chunk;
    for (let newline; (newline = buffered.indexOf('\n')) !== -1; buffered = buffered.slice(newline + 1)) {
      const frame = JSON.parse(buffered.slice(0, newline));
      if (frame.type === 'hello') {
        const program = 'inspect("warm-up"); return { value: [1, "two", await tools.echo(null)] }';
        const bindings = [{ global: 'tools', functions: ['echo'] }];
        control.write(`${JSON.stringify({ type: 'run', run: 1, format: 'async-function', program, cwd: path.dirname(entry), discardCompletion: false, bindings })}\n`);
      } else if (frame.type === 'call') {
        control.write(`${JSON.stringify({ type: 'reply', call: frame.call, ok: true, value: frame.args[0] })}\n`);
      } else if (frame.type === 'result') {
        if (!frame.ok) throw new BundleError(`the code-cache warm-up run failed: ${JSON.stringify(frame)}`);
        control.end();
      }
    }
  });
  const status = await new Promise((resolve) => child.on('close', resolve));
  if (status !== 0 || !fs.existsSync(tmp)) throw new BundleError(`the code-cache warm-up exited with ${status} and wrote no cache`);
  fs.renameSync(tmp, cachePath);
}

// parser-bundle.cjs (parser.js says why): acorn's and acorn-walk's npm files as one CommonJS
// module exporting { acorn, walk }, wrapped as a function expression like the child's bundle, its
// first line naming it (`// parser-bundle <id>`, the id of the rest); each file without comments
// and with the space between two tokens squeezed to one newline (where it held a line break,
// which keeps automatic semicolon insertion as it was) or one space. Every token is kept as it is and must be ASCII; the result
// is parsed again and must give the same tokens. Then one change to acorn: its Unicode property
// tables are built on first use (lazyUnicodeTables).
export const PARSER_FILE = 'parser-bundle.cjs';
export const PARSER_CACHE_FILE = 'parser-bundle.cache';
const PARSER_PACKAGES = [['acorn', 'acorn'], ['walk', 'acorn-walk']];

const tokensOf = (tokens, source) => tokens.map((token) => [token.type.label, source.slice(token.start, token.end)]);

// `keepLines`: a gap keeps each of its line breaks, so every token stays on its line.
export function squeeze(file, source, { keepLines = false } = {}) {
  const tokens = [];
  acorn.parse(source, { ecmaVersion: 'latest', sourceType: 'script', onToken: tokens });
  let out = '';
  let end = 0;
  for (const token of tokens) {
    const gap = source.slice(end, token.start);
    const breaks = gap.match(/\r\n|[\n\r\u2028\u2029]/g)?.length ?? 0;
    out += breaks > 0 ? '\n'.repeat(keepLines ? breaks : 1) : gap === '' ? '' : ' ';
    const text = source.slice(token.start, token.end);
    if (/[^\x00-\x7f]/.test(text)) fail(file, null, `a token at offset ${token.start} is not ASCII: ${JSON.stringify(text.slice(0, 40))}`);
    out += text;
    end = token.end;
  }
  const again = [];
  acorn.parse(out, { ecmaVersion: 'latest', sourceType: 'script', onToken: again });
  const before = tokensOf(tokens, source);
  const after = tokensOf(again, out);
  if (before.length !== after.length || before.some(([type, text], i) => type !== after[i][0] || text !== after[i][1])) {
    fail(file, null, 'squeezing changed its tokens');
  }
  return out;
}

// acorn builds, when it loads, the Unicode property tables of every ECMAScript version it knows
// (strings of thousands of names joined, and a RegExp of each), which only a regular expression
// literal with a \p{...} escape reads. That is about 270 KB of young-generation garbage per
// process, enough that a scoped-REPL owner's first evaluation made V8 scavenge and commit its
// young generation's second half (bootstrap/README.md). Each version's table is now a getter that
// builds it, as acorn would have, when a regular expression is first checked against it. The
// loop is matched exactly: a new acorn whose text differs stops the build.
const UNICODE_TABLES_LOOP = `for (var i = 0, list = [9, 10, 11, 12, 13, 14]; i < list.length; i += 1) {
var ecmaVersion = list[i];
buildUnicodeData(ecmaVersion);
}`;
const UNICODE_TABLES_ON_FIRST_USE = `for (var i = 0, list = [9, 10, 11, 12, 13, 14]; i < list.length; i += 1) {
buildUnicodeDataOnFirstUse(list[i]);
}
function buildUnicodeDataOnFirstUse(ecmaVersion) {
Object.defineProperty(data, ecmaVersion, { configurable: true, enumerable: true, get: function () {
delete data[ecmaVersion];
buildUnicodeData(ecmaVersion);
return data[ecmaVersion];
} });
}`;

export function lazyUnicodeTables(file, text) {
  const at = text.indexOf(UNICODE_TABLES_LOOP);
  if (at < 0 || text.indexOf(UNICODE_TABLES_LOOP, at + 1) >= 0) fail(file, null, 'the loop that builds the Unicode property tables is not there once');
  return text.slice(0, at) + UNICODE_TABLES_ON_FIRST_USE + text.slice(at + UNICODE_TABLES_LOOP.length);
}

/** { text, id } of parser-bundle.cjs. */
export function parserBundle() {
  const require = createRequire(import.meta.url);
  const parts = PARSER_PACKAGES.map(([name, pkg]) => {
    const file = require.resolve(pkg);
    const { version } = JSON.parse(fs.readFileSync(path.join(path.dirname(file), '..', 'package.json'), 'utf8'));
    const id = `${pkg}/${path.basename(file)}`;
    const text = squeeze(id, fs.readFileSync(file, 'utf8'));
    return { name, pkg, version, text: name === 'acorn' ? lazyUnicodeTables(id, text) : text };
  });
  const from = parts.map(({ pkg, version }) => `${pkg} ${version}`).join(' and ');
  const body = `// Generated by make-bundle.mjs from ${from} (comments dropped, space squeezed, acorn's Unicode tables built on first use); do not edit.
${parts.map(({ name, text }) => `const ${name} = {};\n((exports, module) => {\n${text}\n})(${name}, {});`).join('\n')}
module.exports = { ${parts.map(({ name }) => name).join(', ')} };`;
  const id = bundleId(body);
  return { text: `${WRAP_PREFIX}// parser-bundle ${id}\n${body}${WRAP_SUFFIX}\n`, id };
}

// The parser's code cache (parser.js): made by the pinned Node with the child's V8 flags, in a
// process that compiles the bundle as parser.js does and analyses one small program as a
// scoped-REPL evaluation does. The cache then holds what such an evaluation compiles, and no
// more: V8 deserializes every function a cache holds, and a cache warmed on a large program
// made an idle owner bigger than compiling did. Run as `make-bundle.mjs --parser-cache FILE ID`.
async function makeParserCache(cachePath, id) {
  const tmp = `${cachePath}.tmp`;
  fs.rmSync(tmp, { force: true });
  const child = spawn(process.execPath, ['--max-old-space-size=512', '--experimental-vm-modules', fileURLToPath(import.meta.url), '--parser-cache', tmp, id], {
    stdio: ['ignore', 'inherit', 'inherit'],
    env: { PATH: process.env.PATH ?? '/usr/bin:/bin' },
  });
  const status = await new Promise((resolve) => child.on('close', resolve));
  if (status !== 0 || !fs.existsSync(tmp)) throw new BundleError(`the parser's code-cache warm-up exited with ${status} and wrote no cache`);
  fs.renameSync(tmp, cachePath);
}

async function writeParserCache(out, id) {
  const { PARSER_PATH, compileParser } = await import('./parser.js');
  const { script, exports: { acorn, walk } } = compileParser(fs.readFileSync(PARSER_PATH, 'utf8'), undefined, PARSER_FILE);
  const options = { ecmaVersion: 'latest', sourceType: 'script', allowAwaitOutsideFunction: true, allowReturnOutsideFunction: true, preserveParens: true };
  walk.full(acorn.parse('var x = 1; x', options), () => {});
  fs.writeFileSync(out, Buffer.concat([Buffer.from(cacheHeader(id, process.version), 'latin1'), script.createCachedData()]));
}

function writeIfChanged(file, text) {
  if (fs.existsSync(file) && fs.readFileSync(file, 'utf8') === text) return false;
  fs.writeFileSync(`${file}.tmp`, text);
  fs.renameSync(`${file}.tmp`, file);
  return true;
}

function cacheIsCurrent(cachePath, id) {
  const header = cacheHeader(id, process.version);
  try {
    const fd = fs.openSync(cachePath, 'r');
    const bytes = Buffer.alloc(header.length);
    fs.readSync(fd, bytes, 0, header.length, 0);
    fs.closeSync(fd);
    return bytes.toString('latin1') === header;
  } catch {
    return false;
  }
}

async function main(argv) {
  let out = path.join(ROOT, 'child.cjs');
  let check = false;
  let stamp = null;
  if (argv[0] === '--parser-cache') return writeParserCache(argv[1], argv[2]);
  for (let i = 0; i < argv.length; i++) {
    if (argv[i] === '--out') out = path.resolve(argv[++i]);
    else if (argv[i] === '--stamp') stamp = path.resolve(argv[++i]);
    else if (argv[i] === '--check') check = true;
    else throw new BundleError(`unknown argument ${argv[i]}`);
  }
  const text = squeeze(BUNDLE_FILE, bundle(), { keepLines: true });
  const id = bundleId(text + loader('')); // a new entry makes a new cache too
  const parser = parserBundle();
  const files = [
    [path.join(path.dirname(out), BUNDLE_FILE), `${WRAP_PREFIX}${text}${WRAP_SUFFIX}`],
    [out, loader(id)],
    [path.join(path.dirname(out), PARSER_FILE), parser.text],
  ];
  const cachePath = path.join(path.dirname(out), CACHE_FILE);
  const parserCachePath = path.join(path.dirname(out), PARSER_CACHE_FILE);
  if (check) {
    for (const [file, expected] of files) {
      if (!fs.existsSync(file) || fs.readFileSync(file, 'utf8') !== expected) {
        process.stderr.write(`${file} does not match the sources; run \`meson compile -C build\`\n`);
        process.exit(1);
      }
    }
    for (const [file, bundleId] of [[cachePath, id], [parserCachePath, parser.id]]) {
      if (!cacheIsCurrent(file, bundleId)) {
        process.stderr.write(`${file} was not made from this bundle by ${process.version}; run \`meson compile -C build\`\n`);
        process.exit(1);
      }
    }
    return;
  }
  for (const [file, expected] of files) writeIfChanged(file, expected);
  if (!cacheIsCurrent(cachePath, id)) await makeCodeCache(out, cachePath);
  if (!cacheIsCurrent(parserCachePath, parser.id)) await makeParserCache(parserCachePath, parser.id);
  if (stamp) fs.writeFileSync(stamp, `${out}\n`);
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  main(process.argv.slice(2)).catch((error) => {
    if (!(error instanceof BundleError || error instanceof SyntaxError)) throw error;
    process.stderr.write(`make-bundle: ${error.message}\n`);
    process.exit(1);
  });
}
