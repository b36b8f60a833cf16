// Imports of ended evaluations. An import is attributed to the run whose code started it
// (run-state.js): a saved function called by a later active evaluation imports for that
// evaluation. An import started, or settling, after its evaluation ended must not load code
// for nobody: in a retained evaluation it rejects; in a temporary one it stays pending until the
// process exits (the design's rule; that process is discarded with its evaluation).
//
// Errors of those rejections are remembered so that VM module caches can tell a failure caused
// by an ended evaluation (reloaded by a later evaluation) from a module's own failure (cached).

import { callerRun, getActiveRun } from '../run-state.js';

const ENDED_MESSAGE = 'import after the evaluation ended';
const endedErrors = new WeakSet();

export function isEndedImportError(error) {
  return error !== null && typeof error === 'object' && endedErrors.has(error);
}

function hasEnded(run) {
  return run !== null && (!run.canTalk || run !== getActiveRun());
}

function endedImport(run) {
  if (run.retain !== true) return new Promise(() => {});
  const error = new Error(ENDED_MESSAGE);
  endedErrors.add(error);
  return Promise.reject(error);
}

// For synchronous hooks (Node REPL): null when the calling evaluation is active, else 'pending'
// (temporary evaluation) or the error to throw (retained evaluation).
export function endedImportError() {
  const run = callerRun();
  if (!hasEnded(run)) return null;
  if (run.retain !== true) return 'pending';
  const error = new Error(ENDED_MESSAGE);
  endedErrors.add(error);
  return error;
}

// `promise` (an import of `run`) with its outcome replaced when `run` ended before it settled.
// The check runs when the import settles, so the program's own reactions see the replacement.
function settledFor(run, promise) {
  return promise.then(
    (value) => (hasEnded(run) ? endedImport(run) : value),
    (error) => {
      if (hasEnded(run) && !isEndedImportError(error)) return endedImport(run);
      throw error;
    },
  );
}

// For an import the calling evaluation has already started (the importers of hooked-imports.js).
export function settledForCaller(promise) {
  return settledFor(callerRun(), promise);
}

// Runs start() (returning a Promise) for the calling evaluation, unless it already ended; the
// outcome is replaced when the evaluation ended while the import was in progress.
export function guardImport(start) {
  const run = callerRun();
  if (hasEnded(run)) return endedImport(run);
  return settledFor(run, Promise.resolve().then(start));
}
