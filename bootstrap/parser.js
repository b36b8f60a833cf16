// acorn and acorn-walk for the child's analyses of program text (the scoped REPL, vm-script's
// await lowering, import rewriting), loaded when a program first needs one, from the
// parser-bundle.cjs that make-bundle.mjs writes: both npm files in one, without comments and
// with the space between tokens squeezed, every token as it was (the build checks) and ASCII
// only. A retained owner keeps what it loaded, and V8 keeps a script's source: the npm files'
// comments hold characters beyond Latin-1, which made it keep all 236 KiB of acorn as UTF-16.
//
// The bundle compiles from V8's code cache of it (parser-bundle.cache), made by the build after a
// small warm-up, when the cache's header names this bundle and this Node; otherwise as any
// script. Compiling acorn's source took a scoped-REPL owner's first evaluation about 10 ms and
// left about 0.5 MiB of the compiler's memory in the C heap (bootstrap/README.md).

import fs from 'node:fs';
import { createRequire } from 'node:module';
import vm from 'node:vm';
import { fileURLToPath } from 'node:url';

const require = createRequire(import.meta.url);
export const PARSER_PATH = fileURLToPath(new URL('./parser-bundle.cjs', import.meta.url));
const CACHE_PATH = fileURLToPath(new URL('./parser-bundle.cache', import.meta.url));
// The bundle's first line names it: `(function (...) {// parser-bundle <id>`.
const BUNDLE_ID = /^[^\n]*\/\/ parser-bundle ([0-9a-f]{16})\n/;
let parser = null;

/** The code cache for `source`, or undefined when there is none made from it by this Node. */
function cacheFor(source) {
  const id = BUNDLE_ID.exec(source)?.[1];
  if (!id) return undefined;
  const header = `ptc-code-cache ${id} ${process.version}\n`;
  try {
    const bytes = fs.readFileSync(CACHE_PATH);
    return bytes.toString('latin1', 0, header.length) === header ? bytes.subarray(header.length) : undefined;
  } catch {
    return undefined; // no cache: the bundle compiles as any script
  }
}

/**
 * Compiles and runs the bundle (a wrapped function expression, so V8 keeps the string read as its
 * only source): { script, exports }. `cachedData` is the cache's bytes without their header, or
 * undefined; `filename` the name to compile under (the build's warm-up names no build tree).
 */
export function compileParser(source, cachedData, filename = PARSER_PATH) {
  const script = new vm.Script(source, { filename, cachedData });
  const module = { exports: {} };
  script.runInThisContext()(module.exports, require, module, PARSER_PATH, fileURLToPath(new URL('.', import.meta.url)));
  return { script, exports: module.exports };
}

/** { acorn, walk }: the acorn and acorn-walk modules. */
export function loadParser() {
  if (!parser) {
    const source = fs.readFileSync(PARSER_PATH, 'utf8');
    parser = compileParser(source, cacheFor(source)).exports;
  }
  return parser;
}
