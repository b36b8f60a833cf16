// vm-script format: erasable TypeScript evaluated as a node:vm Script in its own context (see
// vm-script-context.js). Script semantics: non-strict unless the program says "use strict",
// top-level declarations become globals of the context, and the completion value of the last
// statement is the result, awaited. Programs that await at top level are lowered first
// (vm-script-await.js); all others compile natively and keep V8's syntax diagnostics.
//
// Retention: with `retain` the evaluator keeps one context for the process, so declarations,
// functions and object identities survive later runs. Without it every run gets a fresh
// context (the initializer and the program of one run share it).
//
// Relative dynamic import() resolves from the directory of the compiled Script, which is named
// "<cwd>/[program]", through Node's default loader (the Script's importModuleDynamically).

import path from 'node:path';
import util from 'node:util';
import vm from 'node:vm';
import { programImportOption } from '../imports/program-imports.js';
import { mayRunUnstripped } from '../plain-javascript.js';
import { VM_SCRIPT_WRAP } from '../strip-wraps.js';
import { formatCompileError, formatSyntaxError, ProgramSyntaxError, stripProgramTypes } from '../typescript.js';
import { lowerTopLevelAwait, unboxCompletion } from './vm-script-await.js';
import { createScriptContext, installGlobals } from './vm-script-context.js';
import { analyzeScript, locate, MESSAGES, ScriptProblem, topLevelDeclaration } from './vm-script-parse.js';

export const PROGRAM_NAME = '[program]';


const RUN_OPTIONS = { displayErrors: false };

function problemError(problem, code, source, filename) {
  const { line, column } = locate(code, problem.offset);
  return new ProgramSyntaxError(formatSyntaxError(problem.message, { source, filename, line, column }));
}

const CLASH = /^Identifier '(.+)' has already been declared$/;

// A top-level declaration clashing with a name the retained context already has is refused by
// V8 when the Script starts running, before any program code: the error's first frame, if it
// has one in the program at all, is the Script's start. Returns that refusal as a
// ProgramSyntaxError pointing at the program's declaration of the name, or null for any other
// error (a clash inside `eval` has a frame at the eval call).
function declarationClash(error, { analysis, code, source, filename }) {
  let match;
  let frame;
  try {
    if (!util.types.isNativeError(error)) return null;
    match = CLASH.exec(error.message);
    frame = error.stack.split('\n')[1] ?? '';
  } catch {
    return null;
  }
  const programFrame = frame.startsWith(`    at ${filename}`);
  if (match === null || (programFrame && frame !== `    at ${filename}` && frame !== `    at ${filename}:1:1`)) return null;
  const declaration = analysis.program ? topLevelDeclaration(analysis.program, match[1]) : null;
  if (declaration === null) return null;
  const { line, column } = locate(code, declaration.start);
  return new ProgramSyntaxError(formatSyntaxError(match[0], { source, filename, line, column, width: match[1].length }));
}

// Words without which a program needs no acorn analysis: it cannot await at top level nor hold
// a construct a Script cannot run (escaped keywords are no keywords, so a plain search is exact).
const ANALYZED_WORDS = /await|return|import|export|using/;

// The analysis of a program that needs none: no lowering, nothing forbidden; the acorn tree is
// parsed only if a declaration clash needs it.
function unanalyzed(code) {
  let program;
  return {
    awaits: false,
    vars: [],
    get program() {
      program ??= analyzeScript(code).program;
      return program;
    },
  };
}

function newScript(text, filename, lowered, context) {
  return new vm.Script(text, {
    filename,
    lineOffset: lowered ? -1 : 0,
    // A runner's ProgramImportHandler may decide asynchronously (Node's loader without one).
    importModuleDynamically: programImportOption({ filename, context }),
  });
}

// A program JavaScript can run as it is (plain-javascript.js), compiled without stripping or
// analysis; null when it is not one, or V8 refuses it (then the full path gives the diagnostic).
function compileUnstripped(program, filename, context) {
  if (!mayRunUnstripped(program) || ANALYZED_WORDS.test(program)) return null;
  try {
    return { script: newScript(program, filename, false, context), lowered: false, analysis: unanalyzed(program), code: program };
  } catch (error) {
    if (!(error instanceof SyntaxError)) throw error;
    return null;
  }
}

// Returns { script, lowered, analysis } or throws ProgramSyntaxError.
function compile(code, source, filename, context) {
  let analysis;
  try {
    analysis = analyzeScript(code);
  } catch (error) {
    if (error instanceof ScriptProblem) throw problemError(error, code, source, filename);
    throw error;
  }
  const lowered = analysis.awaits === true;
  const text = lowered ? lowerTopLevelAwait(code, analysis) : code;
  try {
    return { script: newScript(text, filename, lowered, context), lowered, analysis, code };
  } catch (error) {
    if (!(error instanceof SyntaxError)) throw error;
    // A program that mentions await and that acorn refused gets acorn's diagnostic: V8 would
    // misreport a top-level await as "await is only valid in async functions".
    if (analysis.parseError != null && /\bawait\b/.test(code)) {
      throw problemError(analysis.parseError, code, source, filename);
    }
    throw new ProgramSyntaxError(formatCompileError(error, { source, filename }));
  }
}

export function createVmScriptEvaluator() {
  let retained = null; // the context kept for the process when runs ask to retain
  const perRun = new WeakMap(); // run -> context of a run that does not retain

  function contextFor(run, retain) {
    if (retain) {
      retained ??= createScriptContext();
      return retained;
    }
    let context = perRun.get(run);
    if (context === undefined) {
      context = createScriptContext();
      perRun.set(run, context);
    }
    return context;
  }

  return {
    format: 'vm-script',
    evaluate({ program, cwd, run, retain = false, name = PROGRAM_NAME, globals, stripped, syntaxError }) {
      process.chdir(cwd);
      const filename = path.join(process.cwd(), name);
      const context = contextFor(run, retain);
      const { script, lowered, analysis, code } = (stripped === undefined ? compileUnstripped(program, filename, context) : null) ??
        compile(stripProgramTypes(program, { ...VM_SCRIPT_WRAP, filename, preStripped: stripped, syntaxError }), program, filename, context);
      installGlobals(context, globals);
      const clash = (error) => {
        throw declarationClash(error, { analysis, code, source: program, filename }) ?? error;
      };
      // Program code runs from the microtask queue so no bootstrap frame sits under its frames;
      // the completion (a Promise or thenable included) is adopted, i.e. awaited, by then().
      if (!lowered) return Promise.resolve().then(script.runInContext.bind(script, context, RUN_OPTIONS)).then(undefined, clash);
      // A lowered Script only declares its names and yields the async wrapper to call.
      let wrapper;
      try {
        wrapper = script.runInContext(context, RUN_OPTIONS);
      } catch (error) {
        clash(error);
      }
      return Promise.resolve().then(Reflect.apply.bind(undefined, wrapper, undefined, [])).then(unboxCompletion);
    },
  };
}
