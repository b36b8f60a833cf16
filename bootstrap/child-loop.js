// The child's control loop: takes `run`, `reply` and `revoke` frames, evaluates one program at a
// time and sends exactly one terminal frame per run (`result`, or `revoked` after a revoke).
// Once that frame is selected the run is settled: its later output and binding calls are
// dropped, and uncaught errors from its leftover callbacks no longer report anything.

import { Bindings } from './bindings.js';
import { selectEvaluator, UnsupportedFormatError } from './evaluators/index.js';
import { formatThrown } from './exceptions.js';
import { createInspect } from './inspect.js';
import { buildResultFrame } from './result-frame.js';
import { getActiveRun, Run, runStorage, setActiveRun } from './run-state.js';
import { isProgramSyntaxError } from './typescript.js';

function isPositiveInteger(value) {
  return Number.isSafeInteger(value) && value > 0;
}

// Returns a description of what is wrong with a `run` frame, or null when it is usable.
function checkRunFrame(frame) {
  if (!isPositiveInteger(frame.run)) return 'run frame needs a positive integer `run`';
  if (typeof frame.format !== 'string') return 'run frame needs a string `format`';
  if (typeof frame.program !== 'string') return 'run frame needs a string `program`';
  if (typeof frame.cwd !== 'string') return 'run frame needs a string `cwd`';
  const bindings = frame.bindings ?? [];
  if (!Array.isArray(bindings)) return 'run frame `bindings` must be an array';
  for (const binding of bindings) {
    if (binding === null || typeof binding !== 'object') return 'binding entries must be objects';
    if (typeof binding.global !== 'string' || binding.global === '') return 'binding `global` must be a string';
    if (!Array.isArray(binding.functions) || !binding.functions.every((name) => typeof name === 'string')) {
      return 'binding `functions` must be an array of strings';
    }
    if (binding.errorClass != null && typeof binding.errorClass !== 'string') {
      return 'binding `errorClass` must be a string';
    }
  }
  return null;
}

export class ChildLoop {
  #writer;
  #output;
  #bindings;
  #onProtocolError;
  #queue = [];

  constructor({ writer, output, options, onProtocolError }) {
    this.#writer = writer;
    this.#output = output;
    this.#bindings = new Bindings(writer, options);
    this.#onProtocolError = onProtocolError;
    globalThis.inspect = createInspect((text) => output.emit(text));
  }

  handleFrame(frame) {
    switch (frame.type) {
      case 'run': {
        const problem = checkRunFrame(frame);
        if (problem !== null) {
          this.#onProtocolError(problem);
          return;
        }
        this.#queue.push(frame);
        if (getActiveRun() === null) this.#startNext();
        return;
      }
      case 'reply':
        this.#bindings.reply(getActiveRun(), frame);
        return;
      case 'revoke':
        this.#revoke(frame.run);
        return;
      default:
        // `init-ack` belongs to retained modes with initializers; unknown types are ignored.
        return;
    }
  }

  // An uncaught exception or unhandled rejection fails the active run, if any.
  failActive(thrown) {
    const run = getActiveRun();
    if (run !== null && !run.settled) this.#settle(run, { ok: false, kind: 'exception', message: formatThrown(thrown) });
  }

  #startNext() {
    if (getActiveRun() !== null) return;
    const frame = this.#queue.shift();
    if (frame === undefined) return;
    const run = new Run(frame.run);
    setActiveRun(run);
    runStorage.run(run, () => this.#execute(run, frame));
  }

  #execute(run, frame) {
    let evaluator;
    try {
      evaluator = selectEvaluator(frame.format);
    } catch (error) {
      if (!(error instanceof UnsupportedFormatError)) throw error;
      this.#settle(run, { ok: false, kind: 'exception', message: error.message });
      return;
    }
    this.#bindings.install(frame.bindings ?? []);
    const discard = frame.discardCompletion === true;
    // then() rather than await: V8's async stack traces follow awaits, and an awaiting frame
    // here would show up under every stack the program prints.
    Promise.resolve()
      .then(() => evaluator.evaluate({ program: frame.program, cwd: frame.cwd, run }))
      .then(
        (value) => this.#settle(run, { ok: true, value, discard }),
        (thrown) => {
          const message = isProgramSyntaxError(thrown) ? thrown.formatted : formatThrown(thrown);
          this.#settle(run, { ok: false, kind: 'exception', message });
        },
      );
  }

  #revoke(runId) {
    const run = getActiveRun();
    if (run === null || run.id !== runId || run.settled || run.revoked) return;
    run.revoked = true;
    this.#bindings.revokeAll(run);
  }

  #settle(run, outcome) {
    if (run.settled) return;
    this.#output.flush(run);
    // Settled before encoding: getters run by the encoder can no longer print or call bindings.
    run.settled = true;
    if (run.revoked) {
      this.#writer.send({ type: 'revoked', run: run.id });
    } else {
      this.#writer.sendJson(buildResultFrame(run.id, outcome, this.#writer.maxBytes));
    }
    setActiveRun(null);
    if (this.#queue.length > 0) setImmediate(() => this.#startNext());
  }
}
