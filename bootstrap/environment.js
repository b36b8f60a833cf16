// Environment confinement, done once before any program runs. The native OS environment keeps
// only executable-search and temporary paths and the sandbox's HTTPS proxy (set by a network
// allow-list, for the processes the program starts; ELECTRON_RUN_AS_NODE, HOME, LANG, ... are
// deleted), the program-visible process.env becomes an empty plain object, and the builtin ESM
// exports are refreshed so `import("node:process")` (default and named `env`) sees it too.

import module from 'node:module';
import { installChildEnvironment } from './child-env.js';

export const KEPT_NATIVE_VARIABLES = ['PATH', 'TMPDIR', 'TEMP', 'TMP', 'HTTPS_PROXY', 'https_proxy'];

export function confineEnvironment() {
  const native = process.env;
  const kept = {};
  for (const key of Object.keys(native)) {
    if (KEPT_NATIVE_VARIABLES.includes(key)) kept[key] = native[key];
    else delete native[key]; // unsetenv: also gone for native code and os.* lookups
  }
  delete native.ELECTRON_RUN_AS_NODE;
  process.env = {};
  installChildEnvironment(kept);
  module.syncBuiltinESMExports();
}
