// A ProgramImportHandler built from a JSON module map (the reference configuration):
//
//   { "<specifier>": "<replacement>",                       -> redirect (a ./ or ../ replacement
//                                                              is taken relative to the map file)
//     "<specifier>": { "exports": { ...JSON values } },     -> module (one exports object per entry)
//     "<specifier>": { "exports": {...}, "failingExport": "name" }
//                                                           -> module whose `name` getter throws
//                                                              when captured (a module failure)
//     "<specifier>": { "error": "message" } }               -> the handler throws
//
// Unmapped specifiers get the default decision. Replacements do not reenter the handler.

import path from 'node:path';
import { pathToFileURL } from 'node:url';

function checkEntry(specifier, entry) {
  if (typeof entry === 'string') return;
  if (entry === null || typeof entry !== 'object') throw new TypeError(`module map entry ${specifier} must be a string or an object`);
  if ('error' in entry ? typeof entry.error !== 'string' : entry.exports === null || typeof entry.exports !== 'object') {
    throw new TypeError(`module map entry ${specifier} needs "exports" (an object) or "error" (a string)`);
  }
}

export function moduleMapHandler(map, baseDir) {
  if (map === null || typeof map !== 'object' || Array.isArray(map)) throw new TypeError('the module map must be a JSON object');
  const decisions = new Map();
  for (const [specifier, entry] of Object.entries(map)) {
    checkEntry(specifier, entry);
    if (typeof entry === 'string') {
      const relative = entry.startsWith('./') || entry.startsWith('../');
      decisions.set(specifier, { type: 'redirect', specifier: relative ? pathToFileURL(path.resolve(baseDir, entry)).href : entry });
    } else if ('error' in entry) {
      decisions.set(specifier, { error: entry.error });
    } else {
      const exports = { ...entry.exports };
      if (typeof entry.failingExport === 'string') {
        let failures = 0;
        Object.defineProperty(exports, entry.failingExport, {
          enumerable: true,
          get() {
            failures += 1;
            throw new Error(`export ${entry.failingExport} of ${specifier} failed (capture ${failures})`);
          },
        });
      }
      decisions.set(specifier, { type: 'module', exports });
    }
  }
  return function moduleMap({ specifier }) {
    const decision = decisions.get(specifier);
    if (decision === undefined) return { type: 'default' };
    if (decision.error !== undefined) throw new Error(decision.error);
    return decision;
  };
}
