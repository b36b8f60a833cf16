// acorn and acorn-walk for the child's analyses of program text (the scoped REPL, vm-script's
// await lowering, import rewriting), loaded when a program first needs one, from the
// parser-bundle.cjs that make-bundle.mjs writes: both npm files in one, without comments and
// with the space between tokens squeezed, every token as it was (the build checks) and ASCII
// only. A retained owner keeps what it loaded, and V8 keeps a script's source: the npm files'
// comments hold characters beyond Latin-1, which made it keep all 236 KiB of acorn as UTF-16.

import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);
let parser = null;

/** { acorn, walk }: the acorn and acorn-walk modules. */
export function loadParser() {
  parser ??= require('./parser-bundle.cjs');
  return parser;
}
