// The one place that maps a run's program `format` to its evaluator. Each evaluator lives in a
// sibling module and exposes `evaluate({ program, cwd, run })`, which returns (a promise of) the
// completion value or throws/rejects with what the program threw. vm-script, scoped-repl and
// repl are added here as they are implemented.

import { createAsyncFunctionEvaluator } from './async-function.js';

const FACTORIES = new Map([['async-function', createAsyncFunctionEvaluator]]);

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
