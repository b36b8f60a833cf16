// Scoped REPL scope chain (format scoped-repl): every call is its own strict VM Script whose
// body runs inside an async arrow, so top-level `await` works and each call has a private scope.
//
// A call starts with *copies* of the top-level bindings the previous call left (read through
// getters that call registered when it started), so functions and still-running code of earlier
// calls keep their own bindings, and assigning to an earlier name only changes this call's copy.
// Generated shape (lines 1-2 precede the program, so lineOffset -2 keeps its line numbers):
//
//   (async (__$binding_in, __$binding_out) => {'use strict';
//   var a = __$binding_in[0], ...; let __$binding_value; __$binding_out([() => a, ...], () => __$binding_value);
//   <program, with "__$binding_value=" inserted before the final top-level expression>
//   })
//
// Copies are `var`s: a program `var` of the same name merges with the copy (so
// `var count = count + 1` reads the earlier value), while program let/const/class/function
// declarations of a name get no copy (their own TDZ or hoisted value applies).

import vm from 'node:vm';
import { FUNCTION_BODY_WRAP } from '../strip-wraps.js';
import { formatCompileError, formatSyntaxError, ProgramSyntaxError, rejectSourceAt, stripProgramTypes } from '../typescript.js';
import { programImportOption } from '../imports/program-imports.js';
import { mayRunUnstripped } from '../plain-javascript.js';
import { loadParser } from '../parser.js'; // acorn is loaded on first use: per-call formats never need it

// Every generated identifier starts with this prefix, and programs may not contain it.
export const RESERVED_PREFIX = '__$binding_';
const INPUT = `${RESERVED_PREFIX}in`;
const OUTPUT = `${RESERVED_PREFIX}out`;
const VALUE = `${RESERVED_PREFIX}value`;
// Inserted before the final expression; everything after it on that line shifts by its length.
export const COMPLETION_PREFIX = `${VALUE}=`;
export const COMPLETION_SHIFT = COMPLETION_PREFIX.length; // 17

// Type stripping sees the program inside an async function so top-level `await` parses.
const HEADER_LINES = 2;


// `#!` only works at the very start of a Script, and `__$binding_` names the generated code.
function checkReserved(source, filename) {
  if (source.startsWith('#!')) {
    rejectSourceAt('scoped REPL programs cannot start with #!', { source, filename, index: 0, width: 2 });
  }
  const reserved = source.indexOf(RESERVED_PREFIX);
  if (reserved !== -1) {
    const message = `scoped REPL programs cannot contain ${RESERVED_PREFIX}`;
    rejectSourceAt(message, { source, filename, index: reserved, width: RESERVED_PREFIX.length });
  }
}

function patternNames(pattern, into) {
  switch (pattern?.type) {
    case 'Identifier':
      into.add(pattern.name);
      break;
    case 'ObjectPattern':
      for (const property of pattern.properties) patternNames(property.type === 'RestElement' ? property : property.value, into);
      break;
    case 'ArrayPattern':
      for (const element of pattern.elements) patternNames(element, into);
      break;
    case 'AssignmentPattern':
      patternNames(pattern.left, into);
      break;
    case 'RestElement':
      patternNames(pattern.argument, into);
      break;
    default:
      break;
  }
}

// The walk of scanDeclarations: made once, so every scan walks with the same visitor object.
// Function and class bodies are their own scopes: nothing inside is a top-level name.
let scanVisitor = null;

function declarationVisitor(walk) {
  scanVisitor ??= walk.make({
    Function() {},
    Class() {},
    FunctionDeclaration(node, scan) {
      // Sloppy code also gives a block-level function a var binding (Annex B).
      if (!scan.strict && !scan.topLevel.has(node)) scan.vars.add(node.id.name);
    },
    VariableDeclaration(node, scan) {
      if (node.kind === 'var') for (const declarator of node.declarations) patternNames(declarator.id, scan.vars);
    },
    ReturnStatement(node, scan) {
      scan.topLevelReturn ??= node;
    },
  });
  return scanVisitor;
}

// Top-level names of one program: `vars` (including `var` inside blocks, loops, try...),
// `functions` (top-level declarations), `lexical` (let/const/class/using). Also finds a
// top-level `return` and the final top-level expression statement.
function scanDeclarations(ast, { strict }) {
  const { walk } = loadParser();
  const functions = new Set();
  const lexical = new Set();
  for (const statement of ast.body) {
    if (statement.type === 'VariableDeclaration' && statement.kind !== 'var') {
      for (const declarator of statement.declarations) patternNames(declarator.id, lexical);
    } else if (statement.type === 'FunctionDeclaration') {
      functions.add(statement.id.name);
    } else if (statement.type === 'ClassDeclaration') {
      lexical.add(statement.id.name);
    }
  }
  const scan = { strict, topLevel: new Set(ast.body), vars: new Set(), topLevelReturn: null };
  walk.recursive(ast, scan, null, declarationVisitor(walk));
  let finalExpression = null;
  for (let i = ast.body.length - 1; i >= 0 && finalExpression === null; i--) {
    if (ast.body[i].type === 'ExpressionStatement') finalExpression = ast.body[i].expression;
  }
  const hasStrictDirective = ast.body.some((statement) => statement.directive === 'use strict');
  return { vars: scan.vars, functions, lexical, topLevelReturn: scan.topLevelReturn, finalExpression, hasStrictDirective };
}

// Where "__$binding_value=" goes: before the expression, or before the last element of a bare
// sequence (`a, b`), so the assignment captures exactly the statement's value without needing a
// closing parenthesis (which would shift the rest of the line once more).
function completionIndex(expression) {
  if (expression.type === 'SequenceExpression') return expression.expressions.at(-1).start;
  return expression.start;
}

export class ScopeChain {
  #strict;
  #finalExpression;
  #onRedeclaration;
  // The scope the next call copies from: { names, getters, inherited } of the latest call.
  #latest = null;

  constructor({ strict = true, finalExpression = true, onRedeclaration = () => {} } = {}) {
    this.#strict = strict;
    this.#finalExpression = finalExpression;
    this.#onRedeclaration = onRedeclaration;
  }

  // Current values of the bindings the latest call left, name -> value. A name whose own
  // declaration in that call never initialized (it threw first) keeps the value the call
  // started with, or is dropped when the call introduced it.
  snapshot() {
    const values = new Map();
    const latest = this.#latest;
    if (latest === null) return values;
    latest.names.forEach((name, index) => {
      try {
        values.set(name, latest.getters[index]());
      } catch {
        if (latest.inherited.has(name)) values.set(name, latest.inherited.get(name));
      }
    });
    return values;
  }

  // Names the next call will receive copies of.
  names() {
    return [...this.snapshot().keys()];
  }

  // Strips, checks and compiles `program` in `context`. Returns the prepared call; nothing of the
  // chain changes until `start()`. Throws ProgramSyntaxError for rejected programs.
  prepare(program, { filename, context, stripped, syntaxError }) {
    checkReserved(program, filename);
    // A program acorn accepts as it is needs no stripping (plain-javascript.js), and one the host's
    // stripper stripped comes with its text; any other is stripped and parsed as before, so
    // refused programs keep their diagnostics.
    let ast = stripped === undefined && mayRunUnstripped(program) ? parseBody(program) : null;
    const body = ast === null ? stripProgramTypes(program, { ...FUNCTION_BODY_WRAP, filename, preStripped: stripped, syntaxError }) : program;
    ast ??= this.#parse(body, { program, filename, context });
    const scan = scanDeclarations(ast, { strict: this.#strict });
    if (scan.topLevelReturn !== null) {
      const index = scan.topLevelReturn.start;
      rejectSourceAt('Illegal return statement', { source: program, filename, index, width: 'return'.length });
    }

    const earlier = this.names();
    const ownNames = new Set([...scan.vars, ...scan.functions, ...scan.lexical]);
    const redeclared = earlier.filter((name) => ownNames.has(name));
    // Earlier names get a `var` copy unless the program declares them as function or lexical.
    const copied = earlier.filter((name) => !scan.functions.has(name) && !scan.lexical.has(name));
    const known = new Set(earlier);
    const all = [...earlier, ...[...ownNames].filter((name) => !known.has(name))];

    const useStrict = this.#strict || scan.hasStrictDirective ? "'use strict';" : '';
    const header = `(async (${INPUT}, ${OUTPUT}) => {${useStrict}`;
    const copies = copied.length === 0 ? '' : `var ${copied.map((name, i) => `${name} = ${INPUT}[${i}]`).join(', ')}; `;
    const getters = all.map((name) => `() => ${name}`).join(', ');
    const bindings = `${copies}let ${VALUE}; ${OUTPUT}([${getters}], () => ${VALUE});`;

    let code = body;
    if (this.#finalExpression && scan.finalExpression !== null) {
      const at = completionIndex(scan.finalExpression);
      code = `${body.slice(0, at)}${COMPLETION_PREFIX}${body.slice(at)}`;
    }
    const source = `${header}\n${bindings}\n${code}\n})`;
    let programFunction;
    try {
      programFunction = compile(source, { filename, context });
    } catch (error) {
      if (!(error instanceof SyntaxError)) throw error;
      // Report strict-mode errors acorn let through at unshifted columns: recompile the plain body.
      throw this.#nativeSyntaxError(body, { program, filename, context }) ?? syntaxError(error, program, filename);
    }

    if (redeclared.length > 0) this.#onRedeclaration(redeclared);
    const chain = this;
    let readCompletion = () => undefined;
    return {
      // Copies the earlier values now (a call's copies are taken when it starts) and returns the
      // compiled function with its arguments; running it registers this call as the latest scope.
      start() {
        const inherited = chain.snapshot();
        const input = copied.map((name) => inherited.get(name));
        const output = (getters, completionGetter) => {
          chain.#latest = { names: all, getters, inherited };
          readCompletion = completionGetter;
        };
        return { programFunction, args: [input, output] };
      },
      completion: () => readCompletion(),
    };
  }

  #parse(body, { program, filename, context }) {
    const { acorn } = loadParser();
    try {
      return acorn.parse(body, PARSE_OPTIONS);
    } catch (error) {
      if (!(error instanceof SyntaxError)) throw error;
      // Prefer V8's wording and position; fall back to acorn's when V8 accepts the body.
      const native = this.#nativeSyntaxError(body, { program, filename, context });
      if (native !== null) throw native;
      const message = error.message.replace(/ \(\d+:\d+\)$/, '');
      const line = error.loc?.line;
      const column = error.loc === undefined ? undefined : error.loc.column + 1;
      throw new ProgramSyntaxError(formatSyntaxError(message, { source: program, filename, line, column }));
    }
  }

  // The ProgramSyntaxError V8 raises for the body in a plain wrapper, or null if it compiles.
  #nativeSyntaxError(body, { program, filename, context }) {
    const useStrict = this.#strict ? "'use strict';" : '';
    try {
      compile(`(async () => {${useStrict}\n\n${body}\n})`, { filename, context });
      return null;
    } catch (error) {
      if (!(error instanceof SyntaxError)) throw error;
      return syntaxError(error, program, filename);
    }
  }
}

const PARSE_OPTIONS = {
  ecmaVersion: 'latest',
  sourceType: 'script',
  allowAwaitOutsideFunction: true,
  allowReturnOutsideFunction: true,
  allowHashBang: false,
  preserveParens: true,
};

// The body's tree, or null when acorn refuses it.
function parseBody(body) {
  try {
    return loadParser().acorn.parse(body, PARSE_OPTIONS);
  } catch (error) {
    if (!(error instanceof SyntaxError)) throw error;
    return null;
  }
}

function syntaxError(error, program, filename) {
  return new ProgramSyntaxError(formatCompileError(error, { source: program, filename }));
}

function compile(source, { filename, context }) {
  const script = new vm.Script(source, {
    filename,
    lineOffset: -HEADER_LINES,
    // Scoped REPL programs use the VM Script import handling (asynchronous decisions allowed).
    importModuleDynamically: programImportOption({ filename, context }),
  });
  return script.runInContext(context, { displayErrors: false });
}
