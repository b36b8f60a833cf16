// Acorn analysis of a vm-script program (type-stripped JavaScript): whether it awaits at top
// level, which constructs a Script cannot run, and which `var` declarations belong to the
// top-level scope (so that await lowering can turn them into retained globals).
//
// "Top level" means outside every function: the walk does not enter function bodies, class
// methods, field initializers or static blocks (each is its own scope), but does enter computed
// class keys, which the enclosing code evaluates.

import { loadParser } from '../parser.js';
import { VM_SCRIPT_RETURN_MESSAGE } from '../strip-wraps.js';

const PARSE_OPTIONS = {
  ecmaVersion: 'latest',
  sourceType: 'script',
  // Parsed permissively so these constructs get the clear messages below instead of acorn's.
  allowAwaitOutsideFunction: true,
  allowReturnOutsideFunction: true,
  allowImportExportEverywhere: true,
  allowHashBang: true,
};

export const MESSAGES = {
  return: VM_SCRIPT_RETURN_MESSAGE,
  import: 'static import is not supported in vm-script programs; use `await import(...)`',
  export: 'export is not supported in vm-script programs',
  using: 'top-level `using` declarations are not supported in vm-script programs; put disposable bindings inside a block',
};

const TOP_LEVEL_USING = /^Using declaration cannot appear in the top level/;

// A problem found by acorn: `message` without acorn's "(line:col)" suffix, `offset` into the code.
export class ScriptProblem extends Error {
  constructor(message, offset) {
    super(message);
    this.name = 'ScriptProblem';
    this.offset = offset;
  }
}

const FORBIDDEN = {
  ReturnStatement: MESSAGES.return,
  ImportDeclaration: MESSAGES.import,
  ExportNamedDeclaration: MESSAGES.export,
  ExportDefaultDeclaration: MESSAGES.export,
  ExportAllDeclaration: MESSAGES.export,
};

function scan(program) {
  const { walk } = loadParser();
  const found = { awaits: false, forbidden: null, vars: [] };
  const heads = new Map(); // VariableDeclaration -> 'for-init' | 'for-left'
  const forbid = (node) => {
    found.forbidden ??= new ScriptProblem(FORBIDDEN[node.type], node.start);
  };
  const forHead = (declaration, position) => {
    if (declaration?.type === 'VariableDeclaration') heads.set(declaration, position);
  };
  const visitors = {
    Function() {},
    StaticBlock() {},
    PropertyDefinition(node, state, c) {
      if (node.computed) c(node.key, state, 'Expression');
    },
    AwaitExpression(node, state, c) {
      found.awaits = true;
      c(node.argument, state, 'Expression');
    },
    ForStatement(node, state, c) {
      forHead(node.init, 'for-init');
      walk.base.ForStatement(node, state, c);
    },
    ForInStatement(node, state, c) {
      forHead(node.left, 'for-left');
      walk.base.ForInStatement(node, state, c);
    },
    ForOfStatement(node, state, c) {
      if (node.await) found.awaits = true;
      forHead(node.left, 'for-left');
      walk.base.ForOfStatement(node, state, c);
    },
    VariableDeclaration(node, state, c) {
      if (node.kind === 'await using') found.awaits = true;
      if (node.kind === 'var') found.vars.push({ node, position: heads.get(node) ?? 'statement' });
      walk.base.VariableDeclaration(node, state, c);
    },
  };
  for (const type of Object.keys(FORBIDDEN)) visitors[type] = forbid;
  walk.recursive(program, null, visitors);
  return found;
}

// Returns { program, awaits, vars } for code acorn accepts, or { parseError } (a ScriptProblem,
// or undefined when acorn ran out of stack) when it does not; the caller decides whether native
// compilation gets the final word.
// Throws ScriptProblem for constructs a vm-script program may not contain.
export function analyzeScript(code) {
  let program;
  let found;
  try {
    program = loadParser().acorn.parse(code, PARSE_OPTIONS);
    found = scan(program);
  } catch (error) {
    // Nesting too deep for acorn's recursion: leave the program to V8 unanalyzed.
    if (error instanceof RangeError) return { parseError: undefined };
    if (!(error instanceof SyntaxError) || typeof error.pos !== 'number') throw error;
    if (TOP_LEVEL_USING.test(error.message)) throw new ScriptProblem(MESSAGES.using, error.pos);
    return { parseError: new ScriptProblem(error.message.replace(/ \(\d+:\d+\)$/, ''), error.pos) };
  }
  if (found.forbidden !== null) throw found.forbidden;
  return { program, awaits: found.awaits, vars: found.vars };
}

// 1-based line and column of a UTF-16 offset, the way V8 and the syntax-error format count.
export function locate(code, offset) {
  let line = 1;
  let lineStart = 0;
  for (let i = code.indexOf('\n'); i !== -1 && i < offset; i = code.indexOf('\n', i + 1)) {
    line++;
    lineStart = i + 1;
  }
  return { line, column: offset - lineStart + 1 };
}

function bindingNamed(pattern, name) {
  switch (pattern?.type) {
    case 'Identifier':
      return pattern.name === name ? pattern : null;
    case 'ObjectPattern':
      for (const property of pattern.properties) {
        const found = bindingNamed(property.type === 'RestElement' ? property.argument : property.value, name);
        if (found !== null) return found;
      }
      return null;
    case 'ArrayPattern':
      for (const element of pattern.elements) {
        const found = bindingNamed(element, name);
        if (found !== null) return found;
      }
      return null;
    case 'RestElement':
      return bindingNamed(pattern.argument, name);
    case 'AssignmentPattern':
      return bindingNamed(pattern.left, name);
    default:
      return null;
  }
}

// The identifier node that declares `name` at the top level of an analyzed program, or null.
export function topLevelDeclaration(program, name) {
  for (const statement of program.body) {
    if (statement.type === 'VariableDeclaration') {
      for (const declarator of statement.declarations) {
        const found = bindingNamed(declarator.id, name);
        if (found !== null) return found;
      }
    } else if ((statement.type === 'FunctionDeclaration' || statement.type === 'ClassDeclaration') && statement.id?.name === name) {
      return statement.id;
    }
  }
  return null;
}
