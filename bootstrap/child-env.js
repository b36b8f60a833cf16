// Environment of processes the program starts. Node's child_process defaults `env` to
// process.env, which the program sees as an empty object; with an empty environment libuv and
// /bin/sh fall back to built-in search paths and children lose the sandbox's private temp dir.
// So when a call omits `env`, the child gets the kept native paths (PATH, TMPDIR, TEMP, TMP)
// overlaid with whatever the program put into process.env. An explicit `env` is used as given.
// Secrets never reach children: the native environment was reduced before this runs.
//
// node:child_process (with net and the stream modules it loads) costs a cold child more than
// evaluating a trivial program, so it is wrapped when a program first reaches for it: through
// process.getBuiltinModule, or an import or require, whose resolution a module hook observes.
// The ways a program reaches the module (getBuiltinModule, import(), a require made with
// createRequire) each pass one of the two before the exports are seen.

import module from 'node:module';
import { promisify } from 'node:util';

const CHILD_PROCESS = new Set(['child_process', 'node:child_process']);

// Where each function takes its options when the caller gives none: after `args` if present.
const TAKES_ARGS = new Set(['spawn', 'spawnSync', 'execFile', 'execFileSync', 'fork']);
const TAKES_COMMAND = new Set(['exec', 'execSync']);
const WITH_CALLBACK = new Set(['exec', 'execFile']);

function isOptions(value) {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

function withDefaultEnv(name, args, inheritedPaths) {
  const env = () => ({ ...inheritedPaths, ...process.env });
  for (let i = 1; i < args.length; i++) {
    if (isOptions(args[i])) {
      if (args[i].env != null) return args;
      const copy = [...args];
      copy[i] = { ...args[i], env: env() };
      return copy;
    }
    if (typeof args[i] === 'function') break;
  }
  // No options object: it goes after `args` (when given) and before any callback.
  const at = TAKES_ARGS.has(name) && Array.isArray(args[1]) ? 2 : 1;
  const copy = [...args];
  if (copy[at] == null) copy[at] = { env: env() };
  else copy.splice(at, 0, { env: env() });
  return copy;
}

// child_process attaches a custom promisify to exec/execFile; rebuild it on the wrapper so
// util.promisify(exec) also receives the default environment.
function promisifiedWithChild(wrapped) {
  return function (...args) {
    let child;
    const promise = new Promise((resolve, reject) => {
      child = wrapped(...args, (error, stdout, stderr) => {
        if (error !== null) {
          error.stdout = stdout;
          error.stderr = stderr;
          reject(error);
        } else {
          resolve({ stdout, stderr });
        }
      });
    });
    promise.child = child;
    return promise;
  };
}

function wrapChildProcess(childProcess, inheritedPaths) {
  for (const name of [...TAKES_ARGS, ...TAKES_COMMAND]) {
    const original = childProcess[name];
    const wrapped = {
      [name](...args) {
        return Reflect.apply(original, this, withDefaultEnv(name, args, inheritedPaths));
      },
    }[name];
    if (WITH_CALLBACK.has(name)) {
      Object.defineProperty(wrapped, promisify.custom, { value: promisifiedWithChild(wrapped), enumerable: false });
    }
    childProcess[name] = wrapped;
  }
  module.syncBuiltinESMExports();
}

export function installChildEnvironment(inheritedPaths) {
  const getBuiltinModule = process.getBuiltinModule;
  let wrapped = false;
  const wrapOnce = () => {
    if (wrapped) return;
    wrapped = true;
    wrapChildProcess(Reflect.apply(getBuiltinModule, process, ['node:child_process']), inheritedPaths);
  };
  process.getBuiltinModule = {
    getBuiltinModule(id) {
      if (CHILD_PROCESS.has(id)) wrapOnce();
      return Reflect.apply(getBuiltinModule, this, [id]);
    },
  }.getBuiltinModule;
  module.registerHooks({
    resolve(specifier, context, nextResolve) {
      if (CHILD_PROCESS.has(specifier)) wrapOnce();
      return nextResolve(specifier, context);
    },
  });
}
