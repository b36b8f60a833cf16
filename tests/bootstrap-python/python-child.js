// The fake host of tests/bootstrap (fake-host.js) pointed at the Python child runtime: Debian's
// python3 on bootstrap-python/process.py, started with the flags the provider uses.
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { ChildSession, DEFAULT_ENV, runProgram as runNodeProgram } from '../bootstrap/fake-host.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
export const PYTHON = process.env.DSH_TEST_PYTHON ?? '/usr/bin/python3';
export const PROCESS_PY = path.join(ROOT, 'bootstrap-python', 'process.py');
export const BOOTSTRAP_DIR = path.join(ROOT, 'bootstrap-python');
export const COMMAND = [PYTHON, '-I', '-S', '-B', PROCESS_PY];
export { ChildSession, DEFAULT_ENV };

export function runProgram(program, options = {}) {
  return runNodeProgram(program, { command: COMMAND, ...options });
}

// The value of a successful run, or a failure naming what came back instead.
export async function valueOf(program, options) {
  const { result } = await runProgram(program, options);
  if (!result.ok) throw new Error(`run failed: ${JSON.stringify(result)}`);
  return result.value;
}
