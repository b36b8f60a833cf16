// The one place that maps a run's program `format` to its evaluator.
//
// Evaluator interface (every format; extend only backwards-compatibly):
//
//   factory() -> evaluator   Called once per format per process (selectEvaluator caches the
//                            result), so an evaluator may keep state between runs of a process.
//   evaluator.format         The format name.
//   evaluator.evaluate(request) -> completion | Promise<completion>
//       Returns (a promise of) the completion value, or throws/rejects with what the program
//       threw; syntax problems throw a ProgramSyntaxError (typescript.js), already formatted.
//       It must call process.chdir(request.cwd) before running program code. The loop calls it
//       inside the run's AsyncLocalStorage context (run-state.js), so output and binding calls
//       of the program are attributed to the run; avoid `await` in evaluate itself (V8's async
//       stack traces would show the awaiting bootstrap frame in stacks the program prints).
//   request fields:
//     program            TypeScript source as the host sent it (strip it with typescript.js).
//     stripped           The program with its types blanked by the host's type stripper, or
//                        undefined: pass it on to stripProgramTypes, which then returns it
//                        instead of stripping; `program` stays the source messages quote.
//     syntaxError        The host's type stripper's message refusing the program, or undefined:
//                        pass it on to stripProgramTypes too, which then throws it (naming the
//                        program's file) instead of stripping.
//     cwd                Absolute working directory of the run.
//     run                The Run (run-state.js): `id`, `settled`, `revoked`.
//     retain             true: the host sends later runs of the same environment to this
//                        process; keep program state (context, declarations) for them.
//                        false/absent: the process serves this one program.
//     name               Compilation name inside cwd, '[program]' or '[initializer]'; use it as
//                        the filename so stacks read "<cwd>/[program]:<line>:<column>". Absent
//                        means '[program]'. The initializer is a separate compilation, so its
//                        lines never shift the user program's locations.
//     discardCompletion  true: the completion is not serialized (the initializer, or the run's
//                        discardCompletion). Evaluation still settles as usual.
//     globals            Map name -> value of this evaluation's globals: binding namespaces,
//                        their error classes and `inspect`. The loop has already defined them
//                        on the main globalThis; an evaluator that runs programs in its own vm
//                        context defines them on that context's global before each evaluation,
//                        so retained functions call the current evaluation's bindings.

import { createRequire } from 'node:module';

// Evaluator modules load on first use (synchronous require of ESM): a per-call process never pays
// for Acorn, node:repl or node:domain, which only the other formats need.
const require = createRequire(import.meta.url);
const FACTORIES = new Map([
  ['async-function', () => require('./async-function.js').createAsyncFunctionEvaluator()],
  ['vm-script', () => require('./vm-script.js').createVmScriptEvaluator()],
  ['scoped-repl', () => require('./scoped-repl-evaluator.js').createScopedReplEvaluator()],
  ['repl', () => require('./repl.js').createReplEvaluator()],
]);

export const PROGRAM_FORMATS = ['async-function', 'vm-script', 'scoped-repl', 'repl'];

export class UnsupportedFormatError extends Error {
  constructor(format) {
    super(`program format ${format} is not supported by this bootstrap yet`);
    this.name = 'UnsupportedFormatError';
  }
}

// Evaluators are created once per format and reused, so retained formats can keep their state.
const created = new Map();

export function selectEvaluator(format) {
  let evaluator = created.get(format);
  if (evaluator === undefined) {
    const factory = FACTORIES.get(format);
    if (factory === undefined) throw new UnsupportedFormatError(String(format));
    evaluator = factory();
    created.set(format, evaluator);
  }
  return evaluator;
}
