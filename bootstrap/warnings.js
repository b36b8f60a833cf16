// Drops the experimental-feature warnings that the runtime itself triggers (type stripping, the
// vm default loader, vm modules) so they never enter program output. Node emits them through
// the public process.emitWarning; every other warning, including the program's own, passes on.

const RUNTIME_WARNINGS = [
  /^stripTypeScriptTypes is an experimental feature/,
  /^vm\.USE_MAIN_CONTEXT_DEFAULT_LOADER is an experimental feature/,
  /^VM Modules is an experimental feature/,
];

function isRuntimeWarning(warning, typeOrOptions) {
  const type = typeof typeOrOptions === 'string' ? typeOrOptions : (typeOrOptions?.type ?? warning?.name);
  if (type !== 'ExperimentalWarning') return false;
  const message = typeof warning === 'string' ? warning : warning?.message;
  return typeof message === 'string' && RUNTIME_WARNINGS.some((pattern) => pattern.test(message));
}

export function dropRuntimeWarnings() {
  const original = process.emitWarning;
  process.emitWarning = function emitWarning(warning, ...rest) {
    if (isRuntimeWarning(warning, rest[0])) return undefined;
    return Reflect.apply(original, this, [warning, ...rest]);
  };
}
