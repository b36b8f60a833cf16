// The runner-side ProgramImportHandler: a function of the child process (never a serialized host
// binding nor a plugin configuration field) that decides each import a program makes.
//
//   handler({ specifier, attributes, referrer }) ->
//     { type: 'default' }                  resolve and load the requested module
//     { type: 'redirect', specifier }      resolve and load the replacement (same attributes)
//     { type: 'module', exports }          own enumerable string properties become the exports
//
// `referrer` is the absolute filename of the importing compilation. VM Script and the scoped REPL
// accept a Promise of a decision; AsyncFunction requires a synchronous decision and rejects a
// returned Promise. A thrown or rejected handler value rejects the import without fallback.

let handler = null;

export function setProgramImportHandler(fn) {
  if (fn != null && typeof fn !== 'function') throw new TypeError('the ProgramImportHandler must be a function');
  handler = fn ?? null;
}

export function getProgramImportHandler() {
  return handler;
}

export function isThenable(value) {
  return value !== null && (typeof value === 'object' || typeof value === 'function') && typeof value.then === 'function';
}

// Validates a decision; returns a normalized copy (read once, so getters run once).
export function checkDecision(decision) {
  if (decision === null || typeof decision !== 'object') {
    throw new TypeError('the import handler must return a decision object');
  }
  const type = decision.type;
  if (type === 'default') return { type };
  if (type === 'redirect') {
    const specifier = decision.specifier;
    if (typeof specifier !== 'string') throw new TypeError('a redirect decision needs a string specifier');
    return { type, specifier };
  }
  if (type === 'module') {
    const exports = decision.exports;
    if (exports === null || (typeof exports !== 'object' && typeof exports !== 'function')) {
      throw new TypeError('a module decision needs an exports object');
    }
    return { type, exports };
  }
  throw new TypeError(`unknown import decision type: ${String(type)}`);
}
