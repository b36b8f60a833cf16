// Globals of the REPL formats' own vm contexts: Node's globals copied from the main realm once,
// and each evaluation's globals (binding namespaces, error classes, `inspect`) defined again
// before every evaluation, so retained functions reach the current evaluation's bindings.

import vm from 'node:vm';
import { registerPlainRealm } from '../lossless-json.js';

// Main-realm global names as the bootstrap loads, before any run puts binding namespaces, their
// error classes or `inspect` there (those are installed per evaluation instead).
const NODE_GLOBALS = Object.getOwnPropertyNames(globalThis).filter((name) => !['global', 'globalThis'].includes(name));

// Copies the Node globals a fresh context lacks (process, Buffer, timers, fetch, ...), as Node's
// REPL does; the context keeps its own JavaScript builtins. `console` is the main one, whose
// writes are captured; the context's V8 console would print nowhere. Node's lazy accessors
// expect the main global as `this`, so reads are forwarded there and assignment shadows them.
export function copyNodeGlobals(context) {
  const own = new Set(Object.getOwnPropertyNames(vm.runInContext('globalThis', context)));
  for (const name of NODE_GLOBALS) {
    if (own.has(name)) continue;
    const descriptor = Object.getOwnPropertyDescriptor(globalThis, name);
    if (descriptor === undefined) continue;
    if (!('get' in descriptor)) {
      Object.defineProperty(context, name, descriptor);
      continue;
    }
    Object.defineProperty(context, name, {
      configurable: true,
      enumerable: descriptor.enumerable,
      get: () => globalThis[name],
      set: (value) => defineGlobal(context, name, value, true),
    });
  }
  defineGlobal(context, 'console', console, false);
  defineGlobal(context, 'global', context, false);
}

function defineGlobal(target, name, value, enumerable) {
  Object.defineProperty(target, name, { value, writable: true, configurable: true, enumerable });
}

// Literals made in the context are plain data for the result encoder. Called right after the
// context is created, before any program could replace its intrinsics.
export function registerContextRealm(context) {
  const [objectPrototype, arrayPrototype] = vm.runInContext('[Object.prototype, Array.prototype]', context);
  registerPlainRealm({ objectPrototype, arrayPrototype });
}

// Returns install(globals): defines this evaluation's globals on the context and removes those
// of the previous evaluation that are gone, unless the program replaced them meanwhile.
export function createGlobalsInstaller(context) {
  let installed = new Map();
  return function install(globals) {
    const current = globals instanceof Map ? globals : new Map();
    for (const [name, value] of installed) {
      if (!current.has(name) && Object.getOwnPropertyDescriptor(context, name)?.value === value) delete context[name];
    }
    for (const [name, value] of current) defineGlobal(context, name, value, true);
    installed = new Map(current);
  };
}
