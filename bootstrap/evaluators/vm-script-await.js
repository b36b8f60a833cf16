// Top-level-await lowering for vm-script programs. A Script cannot await at top level, so a
// program that does is rewritten into
//
//   var <top-level names>;(async () => {
//   <program with declarations turned into assignments>
//   })
//
// The Script only declares the names and yields the async arrow; the evaluator calls it from the
// microtask queue, so no wrapper or bootstrap frame sits under the program's own frames.
// compiled with lineOffset -1, so every program line keeps its number and most columns stay put.
//   - top-level let/const/class and every var outside functions become `var` names in the
//     prologue (retained globals of the context); their declarations become assignments, which
//     is why the native TDZ and const-ness do not apply ("await lowering relaxes declaration
//     semantics"); a declarator without initializer assigns undefined;
//   - a top-level function declaration stays (hoisted inside the wrapper) and is copied to the
//     global when execution reaches it;
//   - a final expression statement is boxed as `return { value: (...) }`; the evaluator
//     unwraps and awaits it. Nothing else is returned (top-level return is rejected earlier).
// Edits are character-position splices on the original text, so untouched code is kept
// byte for byte.

const PREFIX_END = '(async () => {\n';
const SUFFIX = '\n})';

class Edits {
  #list = [];

  replace(start, end, text) {
    this.#list.push({ start, end, text, order: this.#list.length });
  }

  insert(at, text) {
    this.replace(at, at, text);
  }

  apply(code) {
    const sorted = [...this.#list].sort((a, b) => a.start - b.start || a.order - b.order);
    let out = '';
    let at = 0;
    for (const edit of sorted) {
      out += code.slice(at, edit.start) + edit.text;
      at = Math.max(at, edit.end);
    }
    return out + code.slice(at);
  }
}

function collectNames(pattern, names) {
  switch (pattern.type) {
    case 'Identifier':
      names.add(pattern.name);
      break;
    case 'ObjectPattern':
      for (const property of pattern.properties) {
        collectNames(property.type === 'RestElement' ? property.argument : property.value, names);
      }
      break;
    case 'ArrayPattern':
      for (const element of pattern.elements) if (element !== null) collectNames(element, names);
      break;
    case 'RestElement':
      collectNames(pattern.argument, names);
      break;
    case 'AssignmentPattern':
      collectNames(pattern.left, names);
      break;
    default:
      break;
  }
}

// Names that cannot start a for-in/of target without parentheses (`for (async of xs)`).
const AMBIGUOUS_FOR_TARGETS = new Set(['async', 'let']);

// Turns a var/let/const declaration into assignments to the hoisted names.
//   statement: `let a = 1, {b} = o`  ->  `    a = 1, ({b} = o);`
//   for-init:  `for (var i = 0, j;;)` ->  `for (    i = 0, j = undefined;;)`
//   for-left:  `for (var k in o)`      ->  `for (    k in o)`
function lowerDeclaration(code, declaration, position, edits, names) {
  const { kind, start, end, declarations } = declaration;
  for (const declarator of declarations) collectNames(declarator.id, names);
  const firstIsName = declarations[0].id.type === 'Identifier';
  // Keeping the keyword's width keeps columns; `void` keeps a leading pattern from reading as a block.
  const keyword = position === 'statement' && !firstIsName ? 'void ' : ' '.repeat(kind.length);
  edits.replace(start, start + kind.length, keyword);
  for (const { id, init } of declarations) {
    const isPattern = id.type !== 'Identifier';
    if (position === 'for-left') {
      if (!isPattern && AMBIGUOUS_FOR_TARGETS.has(id.name)) {
        edits.insert(id.start, '(');
        edits.insert(id.end, ')');
      }
      continue;
    }
    if (isPattern) edits.insert(id.start, '(');
    if (init === null) edits.insert(id.end, ' = undefined');
    if (isPattern) edits.insert((init ?? id).end, ')');
  }
  if (position === 'statement' && code[end - 1] !== ';') edits.insert(end, ';');
}

// `analysis` comes from analyzeScript: { program, vars }. Returns the Script source.
export function lowerTopLevelAwait(code, { program, vars }) {
  const edits = new Edits();
  const names = new Set();
  for (const statement of program.body) {
    if (statement.type === 'VariableDeclaration' && statement.kind !== 'var') {
      lowerDeclaration(code, statement, 'statement', edits, names);
    } else if (statement.type === 'ClassDeclaration') {
      names.add(statement.id.name);
      edits.insert(statement.start, `${statement.id.name} = `);
      edits.insert(statement.end, ';');
    } else if (statement.type === 'FunctionDeclaration') {
      // The arrow wrapper's `this` is the Script's: the context's global object.
      names.add(statement.id.name);
      edits.insert(statement.end, `this.${statement.id.name} = ${statement.id.name};`);
    }
  }
  for (const { node, position } of vars) lowerDeclaration(code, node, position, edits, names);
  const last = program.body.at(-1);
  if (last?.type === 'ExpressionStatement' && last.directive === undefined) {
    // The statement's own range: its expression's range omits enclosing parentheses.
    edits.insert(last.start, 'return { value: (');
    edits.insert(code[last.end - 1] === ';' ? last.end - 1 : last.end, ') }');
  }
  // A hashbang is only legal at the very start of the source, which is now inside the wrapper.
  if (code.startsWith('#!')) edits.replace(0, 2, '//');
  const prologue = names.size > 0 ? `var ${[...names].join(', ')};` : '';
  return `${prologue}${PREFIX_END}${edits.apply(code)}${SUFFIX}`;
}

// The lowered program's promise resolves to the box (or undefined without a final expression);
// this unwraps it. The caller awaits the result.
export function unboxCompletion(box) {
  return box === undefined ? undefined : box.value;
}
