// Environment of processes the program starts. Node's child_process defaults `env` to
// process.env, which the program sees as an empty object; with an empty environment libuv and
// /bin/sh fall back to built-in search paths and children lose the sandbox's private temp dir.
// So when a call omits `env`, the child gets the kept native paths (PATH, TMPDIR, TEMP, TMP)
// overlaid with whatever the program put into process.env. An explicit `env` is used as given.
// Secrets never reach children: the native environment was reduced before this runs.

import childProcess from 'node:child_process';
import { promisify } from 'node:util';

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

export function installChildEnvironment(inheritedPaths) {
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
}
