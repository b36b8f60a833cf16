// ProgramImportHandler for the Node REPL evaluator. Node's REPL compiles its input itself and
// imports through Node's loader with the parent `file://<cwd>/repl`, so decisions are applied by
// synchronous `module.registerHooks` (no VM flag needed), limited to imports started inside a REPL
// evaluation (AsyncLocalStorage) from that parent. Decisions must be synchronous.
//
// A module decision resolves to `ptc-import-module:<n>`, one URL per exports object, whose source
// reads its values through a symbol-keyed bridge on the main global: Node's loader then caches
// the module (and an evaluation failure such as a throwing getter) by that URL. Export names are
// captured when the module loads, values when it evaluates. Node keeps these modules, and the
// bridge its exports objects, until the process exits.

import { AsyncLocalStorage } from 'node:async_hooks';
import module from 'node:module';
import { fileURLToPath } from 'node:url';
import { endedImportError } from './ended.js';
import { checkDecision, getProgramImportHandler, isThenable } from './handler.js';

const SCHEME = 'ptc-import-module:';
// A module that never finishes evaluating: late imports of temporary evaluations (ended.js).
const PENDING = 'ptc-import-pending:';
const BRIDGE = Symbol.for('ptc.importBridge');
const replScope = new AsyncLocalStorage();
const ids = new WeakMap(); // exports -> id
const exportsById = new Map(); // id -> exports
let installed = false;

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
      // An import started after its evaluation ended; the hook is synchronous, so imports already
      // resolving when the evaluation ends complete normally.
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
