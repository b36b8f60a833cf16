// ProgramImportHandler for the AsyncFunction and Node REPL evaluators, through synchronous
// `module.registerHooks` (no VM flag needed); decisions must be synchronous.
//
// Each program's `import(...)` expressions call an importer instead (import-rewrite.js): one per
// evaluator global and referrer, whose own `import()` uses Node's default loader from that
// referrer (`<cwd>/[program]` for AsyncFunction, `<cwd>/repl` like Node's REPL) and which checks
// the outcome when it settles, so an import still loading when a retained evaluation ends
// rejects (ended.js). The resolve hook applies decisions to imports from an importer's referrer
// made inside an evaluation (AsyncLocalStorage), which also covers code compiled at run time
// (`eval`) there; imports of the loaded modules themselves keep Node's rules.
//
// A module decision resolves to `ptc-import-module:<n>`, one URL per exports object, whose source
// reads its values through a symbol-keyed bridge on the main global: Node's loader then caches
// the module (and an evaluation failure such as a throwing getter) by that URL. Export names are
// captured when the module loads, values when it evaluates. Node keeps these modules, and the
// bridge its exports objects, until the process exits.

import { AsyncLocalStorage } from 'node:async_hooks';
import module, { createRequire } from 'node:module';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { types } from 'node:util';
import vm from 'node:vm';
import { endedImportError, settledForCaller } from './ended.js';
import { checkDecision, getProgramImportHandler, isThenable } from './handler.js';

const SCHEME = 'ptc-import-module:';
// A module that never finishes evaluating: late imports of temporary evaluations (ended.js).
const PENDING = 'ptc-import-pending:';
const BRIDGE = Symbol.for('ptc.importBridge');
const evaluationScope = new AsyncLocalStorage();
const ids = new WeakMap(); // exports -> id
const exportsById = new Map(); // id -> exports
let installed = false;
const importerReferrers = new Set(); // file URLs importers import from
const MAIN = {}; // key of the main global
const importerNames = new WeakMap(); // vm context or MAIN -> Map(referrer -> importer name)
// The rewrite (and acorn) load on first use: runs without a handler never need them.
const require = createRequire(import.meta.url);
const NAME_CHARACTERS = '0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ_$';

function moduleUrl(exports) {
  let id = ids.get(exports);
  if (id === undefined) {
    id = exportsById.size + 1;
    ids.set(exports, id);
    exportsById.set(id, exports);
  }
  return `${SCHEME}${id}`;
}

function moduleSource(id) {
  const names = Object.keys(exportsById.get(id));
  const locals = names.map((_, i) => `v${i}`);
  return [
    `const [${locals.join(', ')}] = globalThis[Symbol.for('ptc.importBridge')](${id}, ${JSON.stringify(names)});`,
    `export { ${names.map((name, i) => `${locals[i]} as ${JSON.stringify(name)}`).join(', ')} };`,
  ].join('\n');
}

function install() {
  if (installed) return;
  installed = true;
  Object.defineProperty(globalThis, BRIDGE, {
    value: (id, names) => names.map((name) => exportsById.get(id)[name]),
  });
  module.registerHooks({
    resolve(specifier, context, nextResolve) {
      const handler = getProgramImportHandler();
      const parent = context.parentURL;
      if (handler === null || evaluationScope.getStore() === undefined || !importerReferrers.has(parent)) {
        return nextResolve(specifier, context);
      }
      // An import started after its evaluation ended (one settling late: the importer).
      const ended = endedImportError();
      if (ended === 'pending') return { url: PENDING, format: 'module', shortCircuit: true };
      if (ended !== null) throw ended;
      const request = Object.freeze({
        specifier,
        attributes: Object.freeze({ ...context.importAttributes }),
        referrer: fileURLToPath(parent),
      });
      const raw = handler(request);
      if (isThenable(raw)) throw new TypeError('this evaluator requires a synchronous import decision; the handler returned a Promise');
      const decision = checkDecision(raw);
      if (decision.type === 'default') return nextResolve(specifier, context);
      if (decision.type === 'redirect') return nextResolve(decision.specifier, context);
      return { url: moduleUrl(decision.exports), format: 'module', shortCircuit: true };
    },
    load(url, context, nextLoad) {
      if (url === PENDING) return { format: 'module', source: 'await new Promise(() => {});', shortCircuit: true };
      if (!url.startsWith(SCHEME)) return nextLoad(url, context);
      return { format: 'module', source: moduleSource(Number(url.slice(SCHEME.length))), shortCircuit: true };
    },
  });
}

// Runs fn (an evaluation) so that its imports consult the handler, when one is installed.
export function inHookedImportScope(fn) {
  if (getProgramImportHandler() === null) return fn();
  install();
  return evaluationScope.run(true, fn);
}

// A module namespace, as Node's REPL requires of its imports: a callable `then` export makes the
// import resolve to something else, which is rejected.
function requireNamespace(value) {
  if (types.isModuleNamespaceObject(value)) return value;
  const error = new Error('Provided module is not an instance of Module');
  error.code = 'ERR_VM_MODULE_NOT_MODULE';
  throw error;
}

// The name of the importer importing from `referrer` (a path) in `context` (a vm context, or
// undefined for the main global), created on first use as a non-writable global there. Its
// `import()` is compiled in that global's realm, so the Promise is that realm's.
function importerName(context, referrer, { requireModule, prefix }) {
  const key = context ?? MAIN;
  let names = importerNames.get(key);
  if (names === undefined) {
    names = new Map();
    importerNames.set(key, names);
  }
  let name = names.get(referrer);
  if (name !== undefined) return name;
  const index = names.size;
  if (index >= NAME_CHARACTERS.length ** 2) throw new Error('too many working directories in one environment with an import handler');
  name = prefix + NAME_CHARACTERS[Math.floor(index / NAME_CHARACTERS.length)] + NAME_CHARACTERS[index % NAME_CHARACTERS.length];
  const check = requireModule ? '.then(check)' : '';
  const script = new vm.Script(`(settle, check) => (specifier, options) => settle(import(specifier, options)${check})`, {
    filename: referrer,
    importModuleDynamically: vm.constants.USE_MAIN_CONTEXT_DEFAULT_LOADER,
  });
  const factory = context === undefined ? script.runInThisContext() : script.runInContext(context);
  Object.defineProperty(context ?? globalThis, name, { value: factory(settledForCaller, requireNamespace) });
  importerReferrers.add(pathToFileURL(referrer).href);
  names.set(referrer, name);
  return name;
}

// `code` whose import() expressions call the importer from `referrer` in `context` (undefined:
// the main global). `requireModule`: reject non-module results, as Node's REPL does. `wrap`
// ({prefix, suffix}) makes the code parse, e.g. as a function body; `source` and `filename`
// locate errors for the model.
export function withImporter(code, { context, referrer, requireModule = false, wrap, source, filename }) {
  const { IMPORTER_PREFIX, rewriteDynamicImports } = require('./import-rewrite.js');
  const importer = importerName(context, referrer, { requireModule, prefix: IMPORTER_PREFIX });
  return rewriteDynamicImports(code, { importer, wrap, source, filename });
}
