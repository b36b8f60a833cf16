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
// Asynchronous failures follow Node's REPL: every evaluation runs in its own domain, so an
// exception thrown by one of its callbacks, or a rejection it leaves unhandled, fails that
// evaluation while it is active and is discarded afterwards. As in Node's REPL, a callback that
// throws a frozen or non-extensible object still ends the process (the domain cannot tag it).

import { createRequire } from 'node:module';
import path from 'node:path';
import vm from 'node:vm';
import { settledCompletion } from './repl-completion.js';
import { copyNodeGlobals, createGlobalsInstaller, registerContextRealm } from './repl-globals.js';
import { ScopeChain } from './scoped-repl.js';

const require = createRequire(import.meta.url);
// node:domain loads on the first evaluation; a require() per evaluation costs more than its run.
let domains = null;

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

  function environmentFor(run, retain, cwd) {
    if (retain) {
      retained ??= createEnvironment(options, cwd);
      return retained;
    }
    let environment = perRun.get(run);
    if (environment === undefined) {
      environment = createEnvironment(options, cwd);
      perRun.set(run, environment);
    }
    return environment;
  }

  return {
    format: 'scoped-repl',
    options,
    evaluate({ program, cwd, run, retain = false, name = PROGRAM_NAME, globals, discardCompletion = false, stripped }) {
      process.chdir(cwd);
      const environment = environmentFor(run, retain, process.cwd());
      environment.installGlobals(globals);
      const filename = path.join(environment.importBase, name);
      const call = environment.chain.prepare(program, { filename, context: environment.context, stripped });
      const { programFunction, args } = call.start();
      domains ??= require('node:domain');
      const domain = domains.create();
      return new Promise((resolve, reject) => {
        let active = true;
        const fail = (thrown) => {
          if (!active) return; // a callback of an ended evaluation: discarded
          active = false;
          reject(thrown);
        };
        domain.on('error', fail);
        // From the microtask queue through Reflect.apply, so no bootstrap frame sits under the
        // program's frames; entered inside the domain, so its callbacks belong to it.
        const callProgram = Reflect.apply.bind(undefined, programFunction, undefined, args);
        const finished = domain.run(() => Promise.resolve().then(callProgram));
        finished.then(() => {
          if (!active) return;
          active = false;
          // A Promise completion is not awaited.
          resolve(settledCompletion(call.completion(), discardCompletion));
        }, fail);
      });
    },
  };
}
