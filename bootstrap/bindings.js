// Binding proxies: `globalThis[global][name](...args)` sends a `call` frame and settles when the
// host answers with `reply`. Arguments must be lossless JSON, and the number of open calls and
// their argument bytes are bounded so a program cannot flood the host. Calls belong to the run
// whose code makes them (AsyncLocalStorage), not to the namespace object used: a method saved by
// an earlier evaluation calls for the current one. Calls from a run whose result was already
// sent (callbacks of an ended evaluation) are dropped silently and stay pending forever.

import { encodeLosslessJson, LossyValueError } from './lossless-json.js';
import { FrameTooLargeError } from './frame-writer.js';
import { callerRun } from './run-state.js';

export const DEFAULT_ERROR_CLASS = 'ToolCallError';

const errorClasses = new Map(); // name -> class, shared by every binding naming it

// Creates (once per name) the class whose instances reject failed calls. Its `name` is the
// class name, `message` the host's message and `member` the called function's name.
export function errorClassFor(name) {
  let ErrorClass = errorClasses.get(name);
  if (ErrorClass === undefined) {
    ErrorClass = {
      [name]: class extends Error {
        constructor(message, options) {
          super(message, options);
          if (options?.member !== undefined) this.member = options.member;
        }
      },
    }[name];
    Object.defineProperty(ErrorClass.prototype, 'name', { value: name, writable: true, configurable: true });
    errorClasses.set(name, ErrorClass);
  }
  return ErrorClass;
}

// Frames of a stack string after its header line ("Error\n    at ..." -> "\n    at ...").
function framesOf(site) {
  const stack = typeof site.stack === 'string' ? site.stack : '';
  const first = stack.indexOf('\n    at ');
  return first === -1 ? '' : stack.slice(first);
}

function programError(ErrorType, message, method) {
  const error = new ErrorType(message);
  // Hide the proxy's own frames: the error should point at the program's call site.
  Error.captureStackTrace(error, method);
  return error;
}

export class Bindings {
  #writer;
  #maxPendingCalls;
  #maxMessageBytes;

  constructor(writer, { maxPendingCalls, maxMessageBytes }) {
    this.#writer = writer;
    this.#maxPendingCalls = maxPendingCalls;
    this.#maxMessageBytes = maxMessageBytes;
  }

  // The globals of a run frame's `bindings`: each namespace of proxies and its error class, as
  // a Map name -> value. New namespace objects every time, so each evaluation gets its own.
  globalsFor(bindings) {
    const globals = new Map();
    for (const binding of bindings) {
      const className = binding.errorClass ?? DEFAULT_ERROR_CLASS;
      const ErrorClass = errorClassFor(className);
      globals.set(className, ErrorClass);
      const namespace = {};
      for (const name of binding.functions) {
        // Defined, not assigned: `__proto__` is then an own function, not the prototype.
        const value = this.#proxy(binding.global, name, ErrorClass);
        Object.defineProperty(namespace, name, { value, writable: true, enumerable: true, configurable: true });
      }
      globals.set(binding.global, namespace);
    }
    return globals;
  }

  // Installs every namespace of a run frame's `bindings` and its error class as main globals.
  install(bindings) {
    for (const [name, value] of this.globalsFor(bindings)) globalThis[name] = value;
  }

  #proxy(global, name, ErrorClass) {
    const bindings = this;
    const method = {
      async [name](...args) {
        return bindings.#call({ global, name, ErrorClass, method }, args);
      },
    }[name];
    return method;
  }

  #call(binding, args) {
    const { global, name, ErrorClass, method } = binding;
    const label = `${global}.${name}`;
    const run = callerRun();
    if (run === null || run.settled) return new Promise(() => {});
    if (run.revoked) {
      throw programError(ErrorClass, `${label}: the run was revoked`, method);
    }
    if (!run.allowsBinding(global, name)) {
      throw programError(ErrorClass, `${label} is not available in this evaluation`, method);
    }
    let argsJson;
    try {
      // Each argument is a value of its own: the depth limit applies to it, not to the list.
      argsJson = `[${args.map((arg, index) => encodeLosslessJson(arg, `args[${index}]`)).join(',')}]`;
    } catch (error) {
      if (!(error instanceof LossyValueError)) throw error;
      throw programError(TypeError, `${label}: arguments are not lossless JSON: ${error.message}`, method);
    }
    if (run.pending.size >= this.#maxPendingCalls) {
      throw programError(RangeError, `${label}: too many pending binding calls (limit ${this.#maxPendingCalls})`, method);
    }
    const bytes = Buffer.byteLength(argsJson);
    if (run.outstandingBytes + bytes > this.#maxMessageBytes) {
      throw programError(
        RangeError,
        `${label}: outstanding binding arguments would exceed ${this.#maxMessageBytes} bytes`,
        method,
      );
    }
    const id = run.nextCallId++;
    const frame = `{"type":"call","run":${run.id},"call":${id},"global":${JSON.stringify(global)},"name":${JSON.stringify(name)},"args":${argsJson}}`;
    try {
      this.#writer.sendJson(frame);
    } catch (error) {
      if (!(error instanceof FrameTooLargeError)) throw error;
      throw programError(RangeError, `${label}: call message exceeds ${this.#maxMessageBytes} bytes`, method);
    }
    const site = {};
    Error.captureStackTrace(site, method);
    run.outstandingBytes += bytes;
    return new Promise((resolve, reject) => {
      run.pending.set(id, { resolve, reject, bytes, label, name, ErrorClass, site });
    });
  }

  // Settles an open call of `run` from a `reply` frame. Unknown ids are ignored.
  reply(run, frame) {
    if (run === null || run.settled) return;
    const call = run.pending.get(frame.call);
    if (call === undefined) return;
    run.pending.delete(frame.call);
    run.outstandingBytes -= call.bytes;
    if (frame.ok === true) {
      call.resolve(frame.value);
      return;
    }
    const message = typeof frame.message === 'string' ? frame.message : `${call.label} failed`;
    call.reject(this.#rejection(call, message));
  }

  // Rejects every open call of `run` (host revoked it), letting catch/finally handlers run.
  revokeAll(run) {
    for (const [id, call] of run.pending) {
      run.pending.delete(id);
      run.outstandingBytes -= call.bytes;
      call.reject(this.#rejection(call, `${call.label}: the run was revoked`));
    }
  }

  #rejection(call, message) {
    const error = new call.ErrorClass(message, { member: call.name });
    error.stack = `${Error.prototype.toString.call(error)}${framesOf(call.site)}`;
    return error;
  }
}
