// ProgramImportHandler for the Node REPL evaluator. Node's REPL compiles its input itself and
// imports through Node's loader with the parent `file://<cwd>/repl`, so decisions are applied by
// synchronous `module.registerHooks` (no VM flag needed), limited to imports started inside a REPL
// evaluation (AsyncLocalStorage) from that parent. Decisions must be synchronous.
//
// The import promise itself comes from Node's REPL, out of the hooks' reach. So that an import
// still loading when a retained evaluation ends rejects, each input's `import(...)` expressions
// call an importer of the REPL context instead (repl-import-rewrite.js): one per working directory,
// importing from `<cwd>/repl` like Node's REPL, and checking the outcome when it settles.
//
// A module decision resolves to `ptc-import-module:<n>`, one URL per exports object, whose source
// reads its values through a symbol-keyed bridge on the main global: Node's loader then caches
// the module (and an evaluation failure such as a throwing getter) by that URL. Export names are
// captured when the module loads, values when it evaluates. Node keeps these modules, and the
// bridge its exports objects, until the process exits.

import { AsyncLocalStorage } from 'node:async_hooks';
import module from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { types } from 'node:util';
import vm from 'node:vm';
import { endedImportError, settledForCaller } from './ended.js';
import { checkDecision, getProgramImportHandler, isThenable } from './handler.js';
import { IMPORTER_PREFIX, rewriteDynamicImports } from './repl-import-rewrite.js';

const SCHEME = 'ptc-import-module:';
// A module that never finishes evaluating: late imports of temporary evaluations (ended.js).
const PENDING = 'ptc-import-pending:';
const BRIDGE = Symbol.for('ptc.importBridge');
const replScope = new AsyncLocalStorage();
const ids = new WeakMap(); // exports -> id
const exportsById = new Map(); // id -> exports
let installed = false;
const importerNames = new WeakMap(); // REPL context -> Map(cwd -> importer name)
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
      if (handler === null || replScope.getStore() === undefined || typeof parent !== 'string' || !parent.endsWith('/repl')) {
        return nextResolve(specifier, context);
      }
      // An import started after its evaluation ended (one that settles late: the importer).
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

// Runs fn (a REPL evaluation) so that its imports consult the handler, when one is installed.
export function inReplImportScope(fn) {
  if (getProgramImportHandler() === null) return fn();
  install();
  return replScope.run(true, fn);
}

// A module namespace, as Node's REPL requires of its imports: a callable `then` export makes the
// import resolve to something else, which is rejected.
function requireNamespace(value) {
  if (types.isModuleNamespaceObject(value)) return value;
  const error = new Error('Provided module is not an instance of Module');
  error.code = 'ERR_VM_MODULE_NOT_MODULE';
  throw error;
}

// The name of the context's importer for `cwd`, created on first use: a non-writable global of
// the REPL context whose `import()` is compiled in that context with `<cwd>/repl` as referrer, so
// its Promise is the context's and the import hooks see a REPL import.
function importerName(context, cwd) {
  let names = importerNames.get(context);
  if (names === undefined) {
    names = new Map();
    importerNames.set(context, names);
  }
  let name = names.get(cwd);
  if (name !== undefined) return name;
  const index = names.size;
  if (index >= NAME_CHARACTERS.length ** 2) throw new Error('too many working directories in one REPL environment with an import handler');
  name = IMPORTER_PREFIX + NAME_CHARACTERS[Math.floor(index / NAME_CHARACTERS.length)] + NAME_CHARACTERS[index % NAME_CHARACTERS.length];
  const factory = new vm.Script('(settle, check) => (specifier, options) => settle(import(specifier, options).then(check))', {
    filename: path.join(cwd, 'repl'),
    importModuleDynamically: vm.constants.USE_MAIN_CONTEXT_DEFAULT_LOADER,
  }).runInContext(context);
  Object.defineProperty(context, name, { value: factory(settledForCaller, requireNamespace) });
  names.set(cwd, name);
  return name;
}

// REPL input whose imports go through the context's importer for the current directory.
export function withReplImporter(code, context, { source, filename }) {
  return rewriteDynamicImports(code, { importer: importerName(context, process.cwd()), source, filename });
}
