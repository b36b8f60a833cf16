// The child's control loop: takes `run`, `reply`, `revoke`, `init-ack` and `image-register` frames
// (any other type gets an `error` reply), evaluates one
// program at a time and sends exactly one terminal frame per run (`result`, or `revoked` after a
// revoke). Once that frame is selected the run is settled: its later output and binding calls
// are dropped, and uncaught errors from its leftover callbacks no longer report anything, also
// while a later run of a retained process is active.
//
// A run frame may carry an environment `initializer`: it is evaluated first as a separate
// compilation (same evaluator, output and bindings, completion discarded), then the child sends
// `initialized` and starts the program only after the host's `init-ack`.

import { Bindings } from './bindings.js';
import { selectEvaluator, UnsupportedFormatError } from './evaluators/index.js';
import { formatThrown } from './exceptions.js';
import { checkImageDescriptor, Image, registerImage } from './images.js';
import { createInspect } from './inspect.js';
import { buildResultFrame } from './result-frame.js';
import { bindingKey, callerRun, getActiveRun, Run, runStorage, setActiveRun } from './run-state.js';
import { isProgramSyntaxError } from './typescript.js';

export const PROGRAM_NAME = '[program]';
export const INITIALIZER_NAME = '[initializer]';
export const INITIALIZATION_FAILED = 'environment initialization failed: ';

function isPositiveInteger(value) {
  return Number.isSafeInteger(value) && value > 0;
}

// Returns a description of what is wrong with a `run` frame, or null when it is usable.
function checkRunFrame(frame) {
  if (!isPositiveInteger(frame.run)) return 'run frame needs a positive integer `run`';
  if (typeof frame.format !== 'string') return 'run frame needs a string `format`';
  if (typeof frame.program !== 'string') return 'run frame needs a string `program`';
  if (typeof frame.cwd !== 'string') return 'run frame needs a string `cwd`';
  if (frame.retain != null && typeof frame.retain !== 'boolean') return 'run frame `retain` must be a boolean';
  if (frame.warmUp != null && typeof frame.warmUp !== 'boolean') return 'run frame `warmUp` must be a boolean';
  if (frame.stripped != null && (typeof frame.stripped !== 'string' || frame.stripped.length !== frame.program.length)) {
    return 'run frame `stripped` must be a string as long as `program`';
  }
  if (frame.syntaxError != null && (typeof frame.syntaxError !== 'string' || frame.stripped != null)) {
    return 'run frame `syntaxError` must be a string, and only without `stripped`';
  }
  if (frame.initializer != null && typeof frame.initializer !== 'string') {
    return 'run frame `initializer` must be a string';
  }
  if (frame.images != null) {
    if (!Array.isArray(frame.images)) return 'run frame `images` must be an array';
    for (const image of frame.images) {
      const problem = checkImageDescriptor(image);
      if (problem !== null) return problem;
    }
  }
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

function describeThrown(thrown) {
  return isProgramSyntaxError(thrown) ? thrown.formatted : formatThrown(thrown);
}

export class ChildLoop {
  #writer;
  #output;
  #bindings;
  #inspect;
  #onProtocolError;
  #queue = [];

  constructor({ writer, output, options, onProtocolError }) {
    this.#writer = writer;
    this.#output = output;
    this.#bindings = new Bindings(writer, options);
    this.#onProtocolError = onProtocolError;
    this.#inspect = createInspect((text) => output.emit(text), (image) => output.emitImage(image));
    globalThis.inspect = this.#inspect;
    globalThis.Image = Image;
  }

  handleFrame(frame) {
    switch (frame.type) {
      case 'run': {
        const problem = checkRunFrame(frame);
        if (problem !== null) {
          this.#onProtocolError(problem);
          return;
        }
        // Registered on arrival: they belong to the process, not to the run.
        for (const image of frame.images ?? []) registerImage(image);
        this.#queue.push(frame);
        if (getActiveRun() === null) this.#startNext();
        return;
      }
      case 'image-register': {
        // Sent by the host before the reply that may hand the id to the program.
        const problem = checkImageDescriptor(frame);
        if (problem !== null) {
          this.#onProtocolError(problem);
          return;
        }
        registerImage(frame);
        return;
      }
      case 'reply':
        this.#bindings.reply(getActiveRun(), frame);
        return;
      case 'revoke':
        this.#revoke(frame.run);
        return;
      case 'init-ack':
        this.#acknowledge(frame.run);
        return;
      default:
        // An error reply, so a host newer than this bootstrap learns its frame was not handled.
        this.#writer.send({
          type: 'error',
          frame: typeof frame.type === 'string' ? frame.type : null,
          message: typeof frame.type === 'string'
            ? `unsupported control frame type ${JSON.stringify(frame.type)}`
            : 'control frame without a string type',
        });
    }
  }

  // An uncaught exception or unhandled rejection fails the run whose code raised it, if that
  // run is still the active one; leftovers of ended evaluations are discarded.
  failActive(thrown) {
    const run = callerRun();
    if (run === null || run !== getActiveRun() || run.settled) return;
    const message = formatThrown(thrown);
    this.#settle(run, {
      ok: false,
      kind: 'exception',
      message: run.phase === 'program' ? message : `${INITIALIZATION_FAILED}${message}`,
    });
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
    const bindings = frame.bindings ?? [];
    run.bindingKeys = new Set(bindings.flatMap((binding) => binding.functions.map((name) => bindingKey(binding.global, name))));
    // Installed anew for every evaluation, so retained code always reaches this run's bindings.
    const globals = this.#bindings.globalsFor(bindings);
    if (frame.warmUp === true) run.warmUpGlobals = new Map(globals);
    globals.set('inspect', this.#inspect);
    globals.set('Image', Image);
    for (const [name, value] of globals) globalThis[name] = value;
    // Imports that settle after a retained evaluation ended reject (imports/ended.js).
    run.retain = frame.retain === true;
    const request = {
      cwd: frame.cwd,
      run,
      retain: frame.retain === true,
      globals,
    };
    const startProgram = () => this.#evaluateProgram(evaluator, request, frame);
    if (typeof frame.initializer !== 'string') {
      startProgram();
      return;
    }
    run.phase = 'initializer';
    // then() rather than await: V8's async stack traces follow awaits, and an awaiting frame
    // here would show up under every stack the program prints.
    Promise.resolve()
      .then(() => evaluator.evaluate({ ...request, program: frame.initializer, name: INITIALIZER_NAME, discardCompletion: true }))
      .then(
        () => this.#initialized(run, startProgram),
        (thrown) => this.#settle(run, { ok: false, kind: 'exception', message: `${INITIALIZATION_FAILED}${describeThrown(thrown)}` }),
      );
  }

  #evaluateProgram(evaluator, request, frame) {
    const { run } = request;
    run.phase = 'program';
    const discard = frame.discardCompletion === true;
    Promise.resolve()
      .then(() => evaluator.evaluate({ ...request, program: frame.program, stripped: frame.stripped ?? undefined, syntaxError: frame.syntaxError ?? undefined, name: PROGRAM_NAME, discardCompletion: discard }))
      .then(
        (value) => this.#settle(run, { ok: true, value, discard }),
        (thrown) => this.#settle(run, { ok: false, kind: 'exception', message: describeThrown(thrown) }),
      );
  }

  // The initializer finished: report it and wait for the host before the program starts.
  #initialized(run, startProgram) {
    if (run.settled) return;
    if (run.revoked) {
      this.#settle(run, null);
      return;
    }
    run.phase = 'awaiting-ack';
    run.onInitAck = startProgram;
    this.#writer.send({ type: 'initialized', run: run.id });
  }

  #acknowledge(runId) {
    const run = getActiveRun();
    if (run === null || run.id !== runId || run.settled || run.phase !== 'awaiting-ack') return;
    const startProgram = run.onInitAck;
    run.onInitAck = null;
    // The frame arrives outside any run's async context; the program must run inside its own.
    runStorage.run(run, startProgram);
  }

  #revoke(runId) {
    const queued = this.#queue.findIndex((frame) => frame.run === runId);
    if (queued !== -1) {
      // Never started: nothing to stop, but the host still gets its terminal frame.
      this.#queue.splice(queued, 1);
      this.#writer.send({ type: 'revoked', run: runId });
      return;
    }
    const run = getActiveRun();
    if (run === null || run.id !== runId || run.settled || run.revoked) return;
    run.revoked = true;
    this.#bindings.revokeAll(run);
    // Waiting for init-ack is not evaluation: nothing else will settle the run.
    if (run.phase === 'awaiting-ack') this.#settle(run, null);
  }

  // `outcome` is ignored for a revoked run, which always answers `revoked`.
  #settle(run, outcome) {
    if (run.settled) return;
    this.#output.flush(run);
    // Settled before encoding: getters run by the encoder can no longer print or call bindings.
    run.settled = true;
    run.onInitAck = null;
    if (run.revoked) {
      this.#writer.send({ type: 'revoked', run: run.id });
    } else {
      this.#writer.sendJson(buildResultFrame(run.id, outcome, this.#writer.maxBytes));
    }
    setActiveRun(null);
    // A prewarmed process's warm-up leaves no name of its binding to the program after it.
    for (const [name, value] of run.warmUpGlobals ?? []) {
      if (globalThis[name] === value) delete globalThis[name];
    }
    if (this.#queue.length > 0) setImmediate(() => this.#startNext());
  }
}
