// The conformance harness pointed at the experimental Python runtime: the ptc-runtime row names
// @deepseek-ai/dsh-ptc-runtime-python (as examples/profiles/python.yaml does) and the workflow
// row, which needs a Node runtime, is off.
import { runProgram as run, Serve as NodeServe, text, tempDir } from './harness.js';

export const PYTHON_PROVIDER = '@deepseek-ai/dsh-ptc-runtime-python';
/** Serve/runProgram options with the Python row (opts.runtime is its config). */
export const python = (opts = {}) => ({ ...opts, provider: PYTHON_PROVIDER, rows: [...(opts.rows ?? []), { id: 'workflow', disabled: true }] });

export const runPython = (program, opts) => run(program, python(opts));
export class PythonServe extends NodeServe {
  constructor(opts) {
    super(python(opts));
  }
}
export { text, tempDir };
