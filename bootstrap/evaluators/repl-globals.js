// Globals of the REPL formats' own vm contexts: Node's globals copied from the main realm once,
// and each evaluation's globals (binding namespaces, error classes, `inspect`) defined again
// before every evaluation, so retained functions reach the current evaluation's bindings.

import vm from 'node:vm';
import { registerPlainRealm } from '../lossless-json.js';
import { copyMainGlobal } from './main-globals.js';

// Main-realm global names as the bootstrap loads, before any run puts binding namespaces, their
// error classes or `inspect` there (those are installed per evaluation instead).
const NODE_GLOBALS = Object.getOwnPropertyNames(globalThis).filter((name) => !['global', 'globalThis'].includes(name));

// Copies the Node globals a fresh context lacks (process, Buffer, timers, fetch, ...), as Node's
// REPL does, each on first use (main-globals.js); the context keeps its own JavaScript builtins.
// `console` is the main one, whose writes are captured; the context's V8 console would print
// nowhere.
export function copyNodeGlobals(context) {
  const own = new Set(Object.getOwnPropertyNames(vm.runInContext('globalThis', context)));
  for (const name of NODE_GLOBALS) {
    if (!own.has(name)) copyMainGlobal(context, name);
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
