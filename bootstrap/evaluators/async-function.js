// async-function format (per-call mode): the program is the body of a strict async function, so
// top-level `await` and `return` work and the returned value is the completion.
//
// The body is compiled as a vm.Script in the main context whose filename lies in the run's cwd
// and whose dynamic imports use Node's default loader: relative `import()` then resolves from
// cwd, and stack frames read "<cwd>/[program]:<line>:<column>" with the program's own lines.
// Nothing is passed as a parameter, so the body may declare `process`, `require`, ... itself.
// A runner's ProgramImportHandler decides synchronously through module hooks (hooked-imports.js),
// which need no VM startup flag.

import path from 'node:path';
import vm from 'node:vm';
import { getProgramImportHandler } from '../imports/handler.js';
import { inHookedImportScope, withImporter } from '../imports/hooked-imports.js';
import { FUNCTION_BODY_WRAP } from '../strip-wraps.js';
import { mayRunUnstripped } from '../plain-javascript.js';
import { formatCompileError, formatSyntaxError, ProgramSyntaxError, stripProgramTypes } from '../typescript.js';

export const PROGRAM_NAME = '[program]';

// V8 compiles the body on its own line after the directive; lineOffset -1 restores its numbering.
const SCRIPT_PREFIX = "(async function () {'use strict';\n";
const SCRIPT_SUFFIX = '\n})';

const AsyncFunction = (async () => {}).constructor;

// The body compiled as it is when it may mean the same unstripped (plain-javascript.js), or null
// when it may not or JavaScript refuses it: then it is stripped, and the stripper's diagnostics
// apply. A prewarmed process gets no pre-stripped text, and amaro's strip of a small program
// cost about 0.3 ms of its run there.
function compileUnstripped(program, filename) {
  if (!mayRunUnstripped(program)) return null;
  try {
    return compile(withImports(program, program, filename), filename, program);
  } catch (error) {
    if (!(error instanceof ProgramSyntaxError)) throw error;
    return null;
  }
}

function withImports(body, program, filename) {
  if (getProgramImportHandler() === null) return body;
  return withImporter(body, { referrer: filename, wrap: FUNCTION_BODY_WRAP, source: program, filename });
}

function compile(body, filename, source) {
  let script;
  try {
    script = new vm.Script(`${SCRIPT_PREFIX}${body}${SCRIPT_SUFFIX}`, {
      filename,
      lineOffset: -1,
      importModuleDynamically: vm.constants.USE_MAIN_CONTEXT_DEFAULT_LOADER,
    });
  } catch (error) {
    if (error instanceof SyntaxError) throw new ProgramSyntaxError(formatCompileError(error, { source, filename }));
    throw error;
  }
  try {
    // The wrapper could be closed early by the body ("}); (async function () {"); the
    // AsyncFunction constructor parses the body alone and refuses that.
    new AsyncFunction(body);
  } catch (error) {
    if (error instanceof SyntaxError) throw new ProgramSyntaxError(formatSyntaxError(error.message, { source, filename }));
    throw error;
  }
  return script.runInThisContext({ displayErrors: false });
}

export function createAsyncFunctionEvaluator() {
  return {
    format: 'async-function',
    async evaluate({ program, cwd, stripped, syntaxError }) {
      process.chdir(cwd);
      const filename = path.join(process.cwd(), PROGRAM_NAME);
      const programFunction = (stripped === undefined ? compileUnstripped(program, filename) : null) ??
        compile(withImports(stripProgramTypes(program, { ...FUNCTION_BODY_WRAP, filename, preStripped: stripped, syntaxError }), program, filename), filename, program);
      // Called from the microtask queue through Reflect.apply (which adds no stack frame and
      // drops the reaction's argument), so no bootstrap frame sits under the program's frames
      // in stacks the program prints, and `arguments` is empty. The reaction is registered
      // inside the import scope, so the program runs in it.
      return inHookedImportScope(() => Promise.resolve().then(Reflect.apply.bind(undefined, programFunction, undefined, [])));
    },
  };
}
