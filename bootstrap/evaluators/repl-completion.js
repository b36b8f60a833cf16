// Completions of the REPL formats, which do not await a Promise completion (Node's REPL only
// displays it). The loop adopts any thenable that `evaluate` resolves with, so such a value is
// replaced by an inert stand-in that cannot be adopted and that the result encoder still rejects
// as "result is a <Class> instance" (or "result is a function"), as it would the real value.

const standIns = new Map(); // class name -> prototype of its stand-ins

function isThenable(value) {
  if ((typeof value !== 'object' || value === null) && typeof value !== 'function') return false;
  try {
    return typeof value.then === 'function';
  } catch {
    return false; // the loop reads `then` again and fails the run with what it throws
  }
}

function className(value) {
  try {
    const name = Object.getPrototypeOf(value)?.constructor?.name;
    if (typeof name === 'string' && name !== '' && name !== 'Object') return name;
  } catch {
    // fall through
  }
  return 'thenable';
}

function standIn(value) {
  if (typeof value === 'function') return function thenable() {};
  const name = className(value);
  let prototype = standIns.get(name);
  if (prototype === undefined) {
    prototype = Object.create(null, { constructor: { value: { name } } });
    standIns.set(name, prototype);
  }
  return Object.create(prototype);
}

// The value `evaluate` may resolve with for completion `value`.
export function settledCompletion(value, discardCompletion) {
  if (discardCompletion === true) return undefined; // never serialized: nothing to inspect
  return isThenable(value) ? standIn(value) : value;
}
