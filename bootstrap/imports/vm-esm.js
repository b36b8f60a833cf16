// VM Script's own ESM loading (with a ProgramImportHandler only): file modules that Node would
// load as ESM (resolved by Node's ESM resolver, bare package specifiers included, to format
// `module`: `.mjs`, or `.js` under a package.json with "type": "module") are compiled as
// vm.SourceTextModule in the Script's context, so their static imports, re-exports and later
// dynamic imports consult the same (async-capable) handler. One cache per context, by resolved
// URL; a module whose loading, linking or evaluation failed stays failed in that cache, unless
// the failure came from an import of an ended evaluation (ended.js). Other
// targets (node: builtins, CommonJS, JSON, inferred ESM, ...) use Node's loader; a
// static import of one gets a synthetic module whose exports are captured at evaluation.
// Import attributes on VM-loaded ESM are rejected, and so are source-phase imports, before the
// handler is called.

import fs from 'node:fs';
import module from 'node:module';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import vm from 'node:vm';
import { isEndedImportError } from './ended.js';

const caches = new WeakMap(); // context -> Map(url -> Promise<vm.Module>)

// Node's ESM resolution of a specifier from a file, with the runner's active conditions and
// flags: import.meta.resolve() of a probe specifier that a synchronous resolve hook answers by
// resolving the real specifier from the real parent (import.meta.resolve takes no parent).
const PROBE = 'ptc-resolve-probe:';
let probed = null; // the format the hook saw for the probe in progress

function installProbe() {
  if (probed !== null) return;
  probed = {};
  module.registerHooks({
    resolve(specifier, context, nextResolve) {
      if (!specifier.startsWith(PROBE)) return nextResolve(specifier, context);
      const request = JSON.parse(decodeURIComponent(specifier.slice(PROBE.length)));
      const result = nextResolve(request.specifier, { ...context, parentURL: request.parent });
      probed.format = result.format;
      return result;
    },
  });
}

// Node's ESM resolution of specifier imported from referrer (a path): its URL and format.
// Throws Node's resolution error.
function nodeResolve(specifier, referrer) {
  installProbe();
  probed.format = undefined;
  const url = import.meta.resolve(PROBE + encodeURIComponent(JSON.stringify({ specifier, parent: pathToFileURL(referrer).href })));
  return { url, format: probed.format };
}

// The URL of the file module Node would load as ESM (format `module`: `.mjs`, `.js` of a
// "type": "module" package) for specifier imported from referrer, or null for other formats
// and for failed resolutions (Node's loader then reports them).
export function vmEsmUrl(specifier, referrer) {
  let resolved;
  try {
    resolved = nodeResolve(specifier, referrer);
  } catch {
    return null;
  }
  return resolved.format === 'module' && resolved.url.startsWith('file:') ? resolved.url : null;
}

export function sourcePhaseError(specifier) {
  return new SyntaxError(`source-phase imports are not supported by VM Script import handling (${specifier})`);
}

function cacheFor(context) {
  let cache = caches.get(context);
  if (cache === undefined) {
    cache = new Map();
    caches.set(context, cache);
  }
  return cache;
}

// A synthetic module of context exposing a namespace's exports (captured at evaluation).
export function namespaceModule(namespace, context) {
  const names = Object.keys(namespace);
  return new vm.SyntheticModule(names, function init() {
    for (const name of names) this.setExport(name, namespace[name]);
  }, { context, identifier: 'ptc:native-namespace' });
}

// The cached entry { module } | { error } of the ESM file at url in context (compiled on first
// use, not linked). `linker(specifier, referencingModule, extra)` serves every static request;
// `dynamicFrom(filename)` gives the importer for a module's own import() calls.
export function vmEsmEntry(url, context, dynamicFrom) {
  const cache = cacheFor(context);
  let entry = cache.get(url);
  // A module that failed only because an earlier evaluation ended (its linking or evaluation
  // met an ended import) is loaded afresh; evaluated modules and their own failures are kept.
  const ended = entry?.module?.status === 'errored' && isEndedImportError(entry.module.error);
  if (entry !== undefined && !ended) return entry;
  const filename = fileURLToPath(url);
  try {
    const source = fs.readFileSync(filename, 'utf8');
    const dynamicImport = dynamicFrom(filename);
    entry = {
      module: new vm.SourceTextModule(source, {
        context,
        identifier: url,
        initializeImportMeta(meta) {
          meta.url = url;
          meta.filename = filename;
          meta.dirname = path.dirname(filename);
          meta.main = false;
          meta.resolve = (specifier) => nodeResolve(specifier, filename).url;
        },
        importModuleDynamically: (specifier, _referrer, attributes, phase) =>
          phase === 'source' ? Promise.reject(sourcePhaseError(specifier)) : dynamicImport(specifier, attributes),
      }),
    };
    const sourcePhase = entry.module.moduleRequests.find((request) => request.phase === 'source');
    if (sourcePhase !== undefined) entry = { error: sourcePhaseError(sourcePhase.specifier) };
  } catch (error) {
    entry = { error };
  }
  cache.set(url, entry);
  return entry;
}

// Links (once) and evaluates an entry's module; failures stay with the module (Node keeps an
// errored module errored), so a later import rejects the same way.
export async function evaluateEntry(entry, linker) {
  if (entry.error !== undefined) throw entry.error;
  const { module } = entry;
  if (module.status === 'unlinked') {
    entry.linking = module.link(linker);
  }
  await entry.linking;
  await module.evaluate();
  return module;
}
