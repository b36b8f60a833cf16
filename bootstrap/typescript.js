// Erasable-TypeScript stripping and syntax-error formatting shared by the evaluators.
// Node's strip mode replaces types with whitespace, so offsets, lines and columns of the stripped
// JavaScript equal those of the TypeScript source and stack locations need no source map.

import module from 'node:module';

// A program syntax error already formatted for the model: parser message plus location and caret.
export class ProgramSyntaxError extends Error {
  constructor(formatted) {
    super(formatted);
    this.name = 'ProgramSyntaxError';
    this.formatted = formatted;
    syntaxErrors.add(this);
  }
}

const syntaxErrors = new WeakSet();

// Unlike `instanceof`, never runs code of a thrown value (a Proxy could throw from its traps).
export function isProgramSyntaxError(value) {
  return syntaxErrors.has(value);
}

function sourceLine(source, line) {
  const lines = source.split('\n');
  if (line < 1) return { line: 1, text: lines[0] };
  if (line > lines.length) return { line: lines.length, text: lines[lines.length - 1], past: true };
  return { line, text: lines[line - 1] };
}

// Builds "SyntaxError: <message>\n    at <file>:<line>:<column>\n<source line>\n<caret>".
// `line` is 1-based in the program; `column` 1-based or undefined; `width` the caret length.
export function formatSyntaxError(message, { source, filename, line, column, width = 1 }) {
  if (line === undefined) return `SyntaxError: ${message}`;
  const at = sourceLine(source, line);
  let col = at.past ? at.text.length + 1 : column;
  if (col === undefined || col < 1) col = 1;
  col = Math.min(col, at.text.length + 1);
  const caretWidth = Math.max(1, Math.min(width, at.text.length - col + 1));
  return `SyntaxError: ${message}\n    at ${filename}:${at.line}:${col}\n${at.text}\n${' '.repeat(col - 1)}${'^'.repeat(caretWidth)}`;
}

// The stripper process formats its messages for the name the host gives it (STRIPPER_FILENAME);
// the same message here names `filename`. Only the location line of formatSyntaxError's layout
// (third from last, above the source line and the caret) is renamed: a message without a location
// names no file, and text of any other shape is kept as it came.
export const STRIPPER_FILENAME = '[program]';
export function renameSyntaxError(text, filename) {
  const lines = text.split('\n');
  const at = lines.length - 3;
  const named = `    at ${STRIPPER_FILENAME}`;
  const place = at >= 1 && lines[at].startsWith(named) ? lines[at].slice(named.length) : '';
  if (!/^:\d+:\d+$/.test(place) || !/^ *\^+$/.test(lines[lines.length - 1])) return text;
  lines[at] = `    at ${filename}${place}`;
  return lines.join('\n');
}

// Throws the ProgramSyntaxError for `message` at character `index` of `source` (caret `width`).
export function rejectSourceAt(message, { source, filename, index, width }) {
  const before = source.slice(0, index).split('\n');
  const line = before.length;
  const column = before[before.length - 1].length + 1;
  throw new ProgramSyntaxError(formatSyntaxError(message, { source, filename, line, column, width }));
}

// Node's TypeScript errors carry a code-frame in `stack`: ":<line>", context lines, and a caret
// line under the offending line. Returns { line, column, width } in wrapped-source coordinates.
function locateStripError(error) {
  const stack = typeof error.stack === 'string' ? error.stack : '';
  const header = /^:(\d+)\n/.exec(stack);
  if (!header) return undefined;
  const frame = stack.slice(header[0].length).split('\n');
  const caretIndex = frame.findIndex((text) => /^\s*\^+\s*$/.test(text));
  if (caretIndex === -1) return { line: Number(header[1]) };
  const caret = frame[caretIndex];
  const column = caret.indexOf('^') + 1;
  const width = caret.lastIndexOf('^') - column + 2;
  return { line: Number(header[1]), column, width };
}

// Strips erasable types from `source` parsed inside `prefix` + source + `suffix` (so a function
// body may use `return` and `await`). `prefix` must end with a newline; the returned JavaScript
// is the stripped source alone. Throws ProgramSyntaxError for syntax errors and non-erasable
// TypeScript (enum, namespaces with values, parameter properties...). `messages` optionally
// maps a parser message to the one the format wants to show instead (same location).
// `preStripped`: the source with its types already blanked by the host's type stripper (the run
// frame's `stripped`, checked by the host against the strip invariant); it is returned as it is,
// so this process never loads amaro, and messages keep quoting the source itself.
// `syntaxError`: the host's type stripper refused the source with this message (the run frame's
// `syntaxError`); it is thrown naming `filename`, so this process never loads amaro for it either.
export function stripProgramTypes(source, { prefix, suffix, filename, messages, preStripped, syntaxError }) {
  if (typeof preStripped === 'string') return preStripped;
  if (typeof syntaxError === 'string') throw new ProgramSyntaxError(renameSyntaxError(syntaxError, filename));
  const wrapped = `${prefix}${source}${suffix}`;
  let stripped;
  try {
    stripped = module.stripTypeScriptTypes(wrapped, { mode: 'strip' });
  } catch (error) {
    if (error?.code !== 'ERR_INVALID_TYPESCRIPT_SYNTAX' && error?.code !== 'ERR_UNSUPPORTED_TYPESCRIPT_SYNTAX') {
      throw error;
    }
    const prefixLines = prefix.split('\n').length - 1;
    const where = locateStripError(error);
    const line = where ? where.line - prefixLines : undefined;
    const message = messages?.get(error.message) ?? error.message;
    throw new ProgramSyntaxError(
      formatSyntaxError(message, { source, filename, line, column: where?.column, width: where?.width }),
    );
  }
  if (stripped.length !== wrapped.length || !stripped.startsWith(prefix) || !stripped.endsWith(suffix)) {
    // Strip mode preserves offsets; anything else means the wrapper was not respected.
    throw new ProgramSyntaxError('SyntaxError: the program could not be separated from its wrapper after type stripping');
  }
  return stripped.slice(prefix.length, stripped.length - suffix.length);
}

// Rewrites a V8 SyntaxError thrown while compiling a vm.Script whose filename is `filename`
// (Node decorates its stack with "<filename>:<line>\n<source line>\n<caret>").
export function formatCompileError(error, { source, filename }) {
  const stack = typeof error?.stack === 'string' ? error.stack : '';
  const message = typeof error?.message === 'string' ? error.message : String(error);
  const escaped = filename.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  const match = new RegExp(`^${escaped}:(\\d+)\\n[^\\n]*\\n(\\s*)(\\^+)`).exec(stack);
  if (!match) return formatSyntaxError(message, { source, filename });
  return formatSyntaxError(message, {
    source,
    filename,
    line: Number(match[1]),
    column: match[2].length + 1,
    width: match[3].length,
  });
}
