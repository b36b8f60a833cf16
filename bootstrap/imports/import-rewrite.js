// AsyncFunction and Node REPL programs with a ProgramImportHandler: their `import()` expressions
// resolve through Node's loader, whose result no module hook can see, so an import still loading
// when a retained evaluation ends would complete. To check imports when they settle (ended.js),
// the `import` keyword of each dynamic import expression is replaced by the name of an importer
// of the same length (hooked-imports.js): lines and columns in stacks and errors stay the
// program's own.
//
// Names starting with the importer prefix are reserved. Source-phase imports (`import.source`)
// and input acorn cannot parse are left as they are; V8 reports the syntax errors.

import { loadParser } from '../parser.js';
import { rejectSourceAt } from '../typescript.js';

export const IMPORTER_PREFIX = '__$i';
const KEYWORD = 'import';

function parseProgram(text) {
  try {
    return loadParser().acorn.parse(text, { ecmaVersion: 'latest', sourceType: 'script', allowAwaitOutsideFunction: true });
  } catch {
    return null;
  }
}

// Returns `code` with each `import(...)` calling `importer` (a name as long as `import`) instead.
// `wrap` ({prefix, suffix}, optional) surrounds the code for parsing, e.g. as a function body.
// `source` and `filename` locate errors for the model.
export function rewriteDynamicImports(code, { importer, wrap = { prefix: '', suffix: '' }, source, filename }) {
  if (importer.length !== KEYWORD.length) throw new Error(`importer name must have ${KEYWORD.length} characters`);
  if (!code.includes(KEYWORD) && !code.includes(IMPORTER_PREFIX)) return code;
  const ast = parseProgram(`${wrap.prefix}${code}${wrap.suffix}`);
  if (ast === null) return code;
  const offset = wrap.prefix.length;
  const starts = [];
  loadParser().walk.full(ast, (node) => {
    if (node.start < offset || node.start >= offset + code.length) return;
    // Declarations and references; property names never resolve to the importer.
    if (node.type === 'Identifier' && node.name.startsWith(IMPORTER_PREFIX)) {
      const message = `names starting with ${IMPORTER_PREFIX} are reserved in programs with an import handler`;
      rejectSourceAt(message, { source, filename, index: node.start - offset, width: node.name.length });
    }
    if (node.type === 'ImportExpression' && node.phase === undefined) starts.push(node.start - offset);
  });
  if (starts.length === 0) return code;
  starts.sort((a, b) => a - b);
  let rewritten = '';
  let from = 0;
  for (const start of starts) {
    rewritten += code.slice(from, start) + importer;
    from = start + KEYWORD.length;
  }
  return rewritten + code.slice(from);
}
