// repl format: Node's REPL semantics through node:repl's own evaluation. A REPLServer without a
// terminal (input never written, prompt output discarded) supplies its default eval: sloppy
// code in the server's retained context, undeclared assignments creating globals, Node REPL's
// declaration rules (redeclaring an existing let/const/class throws), top-level await through
// Node's REPL rewrite, `require`, `module` and built-in module globals. Only the evaluation is
// borrowed: results and errors come back here instead of being printed.
//
// Differences from the interactive REPL, by design: `_` and `_error` are ordinary globals (the
// result setters are removed), a leading `{ ... }` is a statement block (Node would try it as
// an object literal first; parenthesize an object to return it), `console` is the captured one.
//
// Failures: the server evaluates inside its domain, which receives the program's synchronous and
// top-level-await errors and the uncaught exceptions and unhandled rejections of callbacks it
// created. Each fails the evaluation of the run that created the code (AsyncLocalStorage) while
// that evaluation is active and is discarded otherwise. A callback that throws a frozen object
// ends the process, as in Node's REPL.

import { createRequire } from 'node:module';
import path from 'node:path';
import { PassThrough } from 'node:stream';
import { getProgramImportHandler } from '../imports/handler.js';
import { inHookedImportScope, withImporter } from '../imports/hooked-imports.js';
import { callerRun } from '../run-state.js';
import { FUNCTION_BODY_WRAP } from '../strip-wraps.js';
import { formatCompileError, ProgramSyntaxError, stripProgramTypes } from '../typescript.js';
import { settledCompletion } from './repl-completion.js';
import { createGlobalsInstaller, registerContextRealm } from './repl-globals.js';

const require = createRequire(import.meta.url);

export const PROGRAM_NAME = '[program]';

// Type stripping sees the program inside an async function (FUNCTION_BODY_WRAP); a top-level
// `return` gets through and Node's REPL reports "Illegal return statement".

// Frames from here down belong to the REPL machinery (vm, repl, domain) and the bootstrap.
const MACHINERY_FRAME = /^\s+at (?:ContextifyScript\.runInContext|makeContextifyScript|REPLServer\.defaultEval) \(node:/;
// The async frame of the REPL's await wrapper, left under the program's frames once a
// top-level await has resumed (`at async node:repl:612:29`).
const REPL_AWAIT_FRAME = /^\s+at async (?:\S+ \()?node:repl:\d+:\d+\)?$/;

function trimMachineryFrames(error) {
  try {
    if (typeof error?.stack !== 'string') return;
    let lines = error.stack.split('\n');
    const cut = lines.findIndex((line) => MACHINERY_FRAME.test(line));
    if (cut !== -1) lines = lines.slice(0, cut);
    error.stack = lines.filter((line) => !REPL_AWAIT_FRAME.test(line)).join('\n');
  } catch {
    // A frozen or exotic error keeps its stack.
  }
}

// Node's REPL tries code that starts with `{` and does not end with `;` as an object literal.
// A `;` on a line of its own ends the last statement (or is an empty statement after a block),
// which keeps the program's meaning and completion and every location.
function asStatements(code) {
  return /^\s*{/.test(code) && !/;\s*$/.test(code) ? `${code}\n;` : code;
}

function createServer() {
  const repl = require('node:repl');
  const domain = require('node:domain').create();
  const output = new PassThrough();
  output.resume(); // prompts and the like go nowhere
  const server = repl.start({
    input: new PassThrough(),
    output,
    prompt: '',
    terminal: false,
    useColors: false,
    preview: false,
    useGlobal: false,
    domain,
  });
  domain.removeAllListeners('error'); // the server's listener prints "Uncaught ..." to `output`
  const { context } = server;
  registerContextRealm(context);
  // Plain retained globals instead of the interactive result accessors (which also print).
  for (const name of ['_', '_error']) {
    Object.defineProperty(context, name, { value: undefined, writable: true, configurable: true, enumerable: false });
  }
  Object.defineProperty(context, 'console', { value: console, writable: true, configurable: true, enumerable: false });

  let pending = null; // { run, fail } of the active evaluation
  domain.on('error', (thrown) => {
    if (pending !== null && callerRun() === pending.run) pending.fail(thrown);
  });
  return {
    server,
    context,
    Recoverable: repl.Recoverable,
    installGlobals: createGlobalsInstaller(context),
    begin(evaluation) {
      pending = evaluation;
    },
    end(evaluation) {
      if (pending === evaluation) pending = null;
    },
  };
}

export function createReplEvaluator() {
  let retained = null;
  const perRun = new WeakMap();

  function serverFor(run, retain) {
    if (retain) {
      retained ??= createServer();
      return retained;
    }
    let server = perRun.get(run);
    if (server === undefined) {
      server = createServer();
      perRun.set(run, server);
    }
    return server;
  }

  return {
    format: 'repl',
    evaluate({ program, cwd, run, retain = false, name = PROGRAM_NAME, globals, discardCompletion = false, stripped, syntaxError }) {
      process.chdir(cwd);
      const filename = path.join(process.cwd(), name);
      let code = asStatements(stripProgramTypes(program, { ...FUNCTION_BODY_WRAP, filename, preStripped: stripped, syntaxError }));
      const repl = serverFor(run, retain);
      if (getProgramImportHandler() !== null) {
        // Node's REPL imports from `<cwd>/repl` and requires a module namespace.
        const referrer = path.join(process.cwd(), 'repl');
        code = withImporter(code, { context: repl.context, referrer, requireModule: true, source: program, filename });
      }
      repl.installGlobals(globals);
      return new Promise((resolve, reject) => {
        let done = false;
        const finish = (settle, value) => {
          if (done) return;
          done = true;
          repl.end(evaluation);
          settle(value);
        };
        const evaluation = {
          run,
          fail(thrown) {
            trimMachineryFrames(thrown);
            finish(reject, thrown);
          },
        };
        const onResult = (error, value) => {
          if (error == null) {
            finish(resolve, settledCompletion(value, discardCompletion));
          } else if (error instanceof SyntaxError) {
            // Compile errors come here; a Recoverable wraps the one of an incomplete program.
            const syntax = error instanceof repl.Recoverable && error.err != null ? error.err : error;
            finish(reject, new ProgramSyntaxError(formatCompileError(syntax, { source: program, filename })));
          } else {
            evaluation.fail(error);
          }
        };
        repl.begin(evaluation);
        // From the microtask queue through Reflect.apply, so only the REPL's own frames (no
        // bootstrap frame) sit under the program's frames in stacks it prints.
        // With a runner's ProgramImportHandler, inside the REPL import scope so it sees the imports.
        const evaluate = Reflect.apply.bind(undefined, repl.server.eval, repl.server, [code, repl.context, filename, onResult]);
        Promise.resolve()
          .then(getProgramImportHandler() === null ? evaluate : () => inHookedImportScope(evaluate))
          .then(undefined, (thrown) => evaluation.fail(thrown));
      });
    },
  };
}
