// The vm context vm-script programs run in. It is a real global object of a new realm
// (DONT_CONTEXTIFY, so `var` and function declarations behave as on any global) with its own
// JavaScript builtins, plus Node's globals copied from the main realm: console, process, Buffer,
// timers, URL, fetch, crypto, ... exactly the names a Script in Node's main context would see,
// without `require`. Copied values keep their main-realm identity, which is why binding results
// and imported modules can fail `instanceof Array` inside the context (a documented limit).

import vm from 'node:vm';
import { registerPlainRealm } from '../lossless-json.js';
import { copyMainGlobal } from './main-globals.js';

// Snapshot taken when the bootstrap loads, before any run puts binding namespaces, their error
// classes or `inspect` on the main global: those are installed per evaluation instead.
const NODE_GLOBALS = Object.getOwnPropertyNames(globalThis);
const NOT_COPIED = new Set(['globalThis', 'global', 'inspect']);

export function createScriptContext() {
  const context = vm.createContext(vm.constants.DONT_CONTEXTIFY, {
    name: 'vm-script',
    // import() from code without a Script referrer (eval, new Function) still loads modules.
    importModuleDynamically: vm.constants.USE_MAIN_CONTEXT_DEFAULT_LOADER,
  });
  for (const key of NODE_GLOBALS) {
    if (NOT_COPIED.has(key)) continue;
    // The context has its own JavaScript builtins; V8's inspector-only console is replaced.
    if (Object.hasOwn(context, key) && key !== 'console') continue;
    copyMainGlobal(context, key);
  }
  Object.defineProperty(context, 'global', { value: context, writable: true, enumerable: true, configurable: true });
  const [objectPrototype, arrayPrototype] = vm.runInContext('[Object.prototype, Array.prototype]', context);
  registerPlainRealm({ objectPrototype, arrayPrototype });
  return context;
}

// Defines this evaluation's globals (binding namespaces, error classes, `inspect`) on the
// context, replacing whatever an earlier evaluation or the program left under those names.
export function installGlobals(context, globals) {
  if (globals == null) return;
  for (const [name, value] of globals) {
    Reflect.defineProperty(context, name, { value, writable: true, enumerable: true, configurable: true });
  }
}
