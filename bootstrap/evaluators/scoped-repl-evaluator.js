// scoped-repl format: one retained vm context per environment in which every call is a separate
// strict Script (scope chain in scoped-repl.js). This file owns the context and its options,
// the globals (Node's, without `require`, `module` or built-in module globals, plus each
// evaluation's bindings), dynamic imports, completions and REPL-style asynchronous failures.
//
// Options (the runtime passes the defaults; the others are kept for later configurations):
//   strict          true: programs are strict code.
//   codeGeneration  false: eval, new Function and WebAssembly compilation in the context throw.
//   finalExpression true: the last top-level expression statement is the completion.
//   onRedeclaration hook(names) for a program that declares earlier names again; prints nothing.
//
// Asynchronous failures follow Node's REPL: an exception thrown by one of an evaluation's
// callbacks, or a rejection it leaves unhandled, fails that evaluation while it is active and is
// discarded afterwards. The child loop already attributes them so for every format (its
// `uncaughtException` and `unhandledRejection` handlers fail only the run a callback belongs to),
// so evaluations need no domain of their own; a domain would turn on async hooks for the whole
// process, which costs more than the rest of a small evaluation. As in Node's REPL, whose domain
// must tag the thrown value, a callback that throws a frozen or non-extensible object still ends
// the process (`endOnUntaggable`).

import { AsyncLocalStorage } from 'node:async_hooks';
import path from 'node:path';
import vm from 'node:vm';
import { settledCompletion } from './repl-completion.js';
import { copyNodeGlobals, createGlobalsInstaller, registerContextRealm } from './repl-globals.js';
import { ScopeChain } from './scoped-repl.js';

// Marks the code of scoped REPL evaluations, their callbacks included, for `endOnUntaggable`.
const evaluationCode = new AsyncLocalStorage();
let untaggableRuleInstalled = false;

// Runs before the loop's own handler: an uncaught exception it ends the process for never
// reaches a run (Node prints it and exits with status 7, as for Node's REPL).
function endOnUntaggable(thrown) {
  if (evaluationCode.getStore() !== true) return;
  const isObject = (typeof thrown === 'object' && thrown !== null) || typeof thrown === 'function';
  if (isObject && !Object.isExtensible(thrown)) {
    throw new TypeError('Cannot attribute the uncaught exception to its evaluation: object is not extensible');
  }
}

export const PROGRAM_NAME = '[program]';

export const DEFAULT_OPTIONS = Object.freeze({
  strict: true,
  codeGeneration: false,
  finalExpression: true,
  onRedeclaration: () => {},
});

// `cwd` is the environment's first working directory: compilations are named inside it, so
// relative import() keeps resolving from there (Node's default loader uses the Script's name).
function createEnvironment(options, cwd) {
  const context = vm.createContext(vm.constants.DONT_CONTEXTIFY, {
    name: 'scoped-repl',
    codeGeneration: { strings: options.codeGeneration, wasm: options.codeGeneration },
    importModuleDynamically: vm.constants.USE_MAIN_CONTEXT_DEFAULT_LOADER,
  });
  registerContextRealm(context);
  copyNodeGlobals(context);
  return {
    context,
    installGlobals: createGlobalsInstaller(context),
    chain: new ScopeChain(options),
    importBase: cwd,
  };
}

export function createScopedReplEvaluator(overrides = {}) {
  const options = { ...DEFAULT_OPTIONS, ...overrides };
  let retained = null; // the environment kept for the process when runs ask to retain
  const perRun = new WeakMap(); // run -> environment of a run that does not retain

  // A new environment is named in the directory the evaluation just changed to (resolved).
  function environmentFor(run, retain) {
    if (retain) {
      retained ??= createEnvironment(options, process.cwd());
      return retained;
    }
    let environment = perRun.get(run);
    if (environment === undefined) {
      environment = createEnvironment(options, process.cwd());
      perRun.set(run, environment);
    }
    return environment;
  }

  return {
    format: 'scoped-repl',
    options,
    evaluate({ program, cwd, run, retain = false, name = PROGRAM_NAME, globals, discardCompletion = false, stripped, syntaxError }) {
      process.chdir(cwd);
      const environment = environmentFor(run, retain);
      environment.installGlobals(globals);
      const filename = path.join(environment.importBase, name);
      const call = environment.chain.prepare(program, { filename, context: environment.context, stripped, syntaxError });
      const { programFunction, args } = call.start();
      if (!untaggableRuleInstalled) {
        process.prependListener('uncaughtException', endOnUntaggable);
        untaggableRuleInstalled = true;
      }
      // From the microtask queue through Reflect.apply, so no bootstrap frame sits under the
      // program's frames; entered inside evaluationCode, so its callbacks carry the mark.
      const callProgram = Reflect.apply.bind(undefined, programFunction, undefined, args);
      const finished = evaluationCode.run(true, () => Promise.resolve().then(callProgram));
      // A Promise completion is not awaited.
      return finished.then(() => settledCompletion(call.completion(), discardCompletion));
    },
  };
}
