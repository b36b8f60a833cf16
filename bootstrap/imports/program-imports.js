// Applies the ProgramImportHandler to the dynamic imports of VM Script and scoped REPL programs
// (the Script's `importModuleDynamically`; decisions may be asynchronous) and to the imports of
// VM-loaded ESM (vm-esm.js). Without a handler Node's default loader is used unchanged.
//
// default / redirect: the (replacement) specifier is imported by Node's loader relative to the
// importing file, with the original attributes; the replacement does not reenter the handler.
// module: a vm.SyntheticModule exposing the exports object's own enumerable string properties,
// one module per exports object and context; names and values are captured once, and a capture
// failure (a throwing getter) stays cached for that exports object.
// Every handled import goes through guardImport (ended.js): imports of ended evaluations.

import { fileURLToPath } from 'node:url';
import vm from 'node:vm';
import { guardImport } from './ended.js';
import { checkDecision, getProgramImportHandler } from './handler.js';
import { evaluateEntry, namespaceModule, sourcePhaseError, vmEsmEntry, vmEsmUrl } from './vm-esm.js';

const nativeImporters = new Map(); // filename -> (specifier, options) => Promise<namespace>
const synthetic = new WeakMap(); // context -> WeakMap(exports -> { module } | { error })

// An import() compiled under `filename`, so Node resolves relative to that file.
function nativeImport(filename, specifier, attributes) {
  let importer = nativeImporters.get(filename);
  if (importer === undefined) {
    importer = new vm.Script('(specifier, options) => import(specifier, options)', {
      filename,
      importModuleDynamically: vm.constants.USE_MAIN_CONTEXT_DEFAULT_LOADER,
    }).runInThisContext();
    nativeImporters.set(filename, importer);
  }
  const hasAttributes = attributes != null && Object.keys(attributes).length > 0;
  return importer(specifier, hasAttributes ? { with: attributes } : undefined);
}

function syntheticModule(exports, context) {
  let cache = synthetic.get(context);
  if (cache === undefined) {
    cache = new WeakMap();
    synthetic.set(context, cache);
  }
  let entry = cache.get(exports);
  if (entry === undefined) {
    try {
      const names = Object.keys(exports);
      const values = names.map((name) => exports[name]);
      const module = new vm.SyntheticModule(names, function init() {
        names.forEach((name, i) => this.setExport(name, values[i]));
      }, { identifier: 'ptc:import-handler-module', context });
      // link() of a SyntheticModule may return undefined (Node 24): chain through a Promise.
      entry = { module, ready: Promise.resolve().then(() => module.link(() => {})).then(() => module.evaluate()) };
    } catch (error) {
      entry = { error };
    }
    cache.set(exports, entry);
  }
  if (entry.error !== undefined) return Promise.reject(entry.error);
  return entry.ready.then(() => entry.module);
}

// VM Script and scoped REPL: one importer per context serving the program's import() calls and
// the static and dynamic imports of VM-loaded ESM (vm-esm.js).
const vmImporters = new WeakMap(); // context -> { dynamicFrom(filename), linker }

function vmImporter(context) {
  let importer = vmImporters.get(context);
  if (importer !== undefined) return importer;
  // Decides one request and returns the target: { module } (VM module entry or synthetic) or
  // { namespace } (Node's loader).
  async function decide(specifier, attributes, filename) {
    const handler = getProgramImportHandler();
    const request = Object.freeze({ specifier, attributes: Object.freeze({ ...attributes }), referrer: filename });
    const decision = handler === null ? { type: 'default' } : checkDecision(await handler(request));
    if (decision.type === 'module') return { module: await syntheticModule(decision.exports, context) };
    const target = decision.type === 'redirect' ? decision.specifier : specifier;
    const url = vmEsmUrl(target, filename);
    if (url !== null) {
      if (Object.keys(attributes ?? {}).length > 0) {
        throw new TypeError(`import attributes are not supported for VM-loaded ESM (${target})`);
      }
      return { entry: vmEsmEntry(url, context, importer.dynamicFrom) };
    }
    return { namespace: await nativeImport(filename, target, attributes) };
  }
  importer = {
    dynamicFrom: (filename) => (specifier, attributes) => guardImport(async () => {
      const target = await decide(specifier, attributes, filename);
      if (target.entry) return evaluateEntry(target.entry, importer.linker);
      return target.module ?? target.namespace;
    }),
    // Static requests of VM-loaded modules: bound once per request by Node's linking.
    linker: async (specifier, referencing, extra) => {
      const target = await guardImport(() => decide(specifier, extra?.attributes ?? {}, fileURLToPath(referencing.identifier)));
      if (target.entry) {
        if (target.entry.error !== undefined) throw target.entry.error;
        return target.entry.module;
      }
      return target.module ?? namespaceModule(target.namespace, context);
    },
  };
  vmImporters.set(context, importer);
  return importer;
}

// The `importModuleDynamically` option for a compilation named `filename` run in `context` (VM
// Script, scoped REPL): Node's default loader without a handler; with one, the context's importer,
// which also serves VM-loaded ESM. Source-phase imports reject before the handler is asked.
export function programImportOption({ filename, context }) {
  if (getProgramImportHandler() === null) return vm.constants.USE_MAIN_CONTEXT_DEFAULT_LOADER;
  const dynamicImport = vmImporter(context).dynamicFrom(filename);
  return (specifier, _referrer, attributes, phase) =>
    phase === 'source' ? Promise.reject(sourcePhaseError(specifier)) : dynamicImport(specifier, attributes);
}
