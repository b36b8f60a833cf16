// Captured output. inspect() groups and everything written through process.stdout/stderr (the
// whole native console included) become `text` frames, sent synchronously and in call order.
// Stream writes keep their exact text: no newline is added and multi-byte characters split
// across Buffer writes are reassembled.
//
// Between evaluations (no active run) stdout writes are dropped and stderr writes go to the real
// fd 2, whose bytes the host keeps only in its bounded diagnostic tail (process-exit diagnostics
// and idle-failure log lines include it). While a run is active, leftovers of ended runs stay
// silent instead: raw fd 2 bytes would count as the active run's output.

import { StringDecoder } from 'node:string_decoder';
import { writeFullySync } from './frame-writer.js';
import { getActiveRun, talkingRun } from './run-state.js';

export class OutputCapture {
  #writer;
  #decoders = new Map(); // stream -> StringDecoder for Buffer writes

  constructor(writer) {
    this.#writer = writer;
  }

  // Sends text on behalf of the calling run; silently dropped when no run may talk.
  emit(text) {
    if (text === '') return;
    const run = talkingRun();
    if (run === null) return;
    this.#writer.sendText(run.id, text);
  }

  // process.stderr text: the calling run's output, or, between evaluations, raw fd 2.
  #emitStderr(text) {
    if (text === '' || talkingRun() !== null || getActiveRun() !== null) {
      this.emit(text);
      return;
    }
    try {
      writeFullySync(2, Buffer.from(text, 'utf8'));
    } catch {
      // A lost stderr loses only the diagnostic tail.
    }
  }

  // Sends an `image` frame for a registered Image on behalf of the calling run (dropped like
  // text when no run may talk). The host describes it from its own registry.
  emitImage(image) {
    const run = talkingRun();
    if (run === null) return;
    const { attachmentId, path, width, height } = image;
    this.#writer.send({ type: 'image', run: run.id, attachmentId, path, width, height });
  }

  // Sends any half-decoded bytes still buffered for `run` before its result is sent.
  flush(run) {
    for (const decoder of this.#decoders.values()) {
      const rest = decoder.end();
      if (rest !== '' && run.canTalk) this.#writer.sendText(run.id, rest);
    }
  }

  // Replaces `write` on process.stdout and process.stderr. The native console writes through
  // these stream objects, so console.log/error/table/trace/... are captured as well. Node makes
  // each stream on first access (a pipe's loads net and streams); so does this: the getter is
  // wrapped, and the stream is patched when something first asks for it.
  installStreams() {
    for (const name of ['stdout', 'stderr']) {
      const original = Object.getOwnPropertyDescriptor(process, name);
      let stream = null;
      Object.defineProperty(process, name, {
        configurable: true,
        enumerable: original.enumerable,
        get: () => {
          if (stream === null) {
            stream = Reflect.apply(original.get, process, []);
            this.#capture(stream, name === 'stderr' ? (text) => this.#emitStderr(text) : (text) => this.emit(text));
          }
          return stream;
        },
      });
    }
  }

  #capture(stream, emit) {
    const decoder = new StringDecoder('utf8');
    this.#decoders.set(stream, decoder);
    stream.write = function write(chunk, encoding, callback) {
      if (typeof encoding === 'function') {
        callback = encoding;
        encoding = undefined;
      }
      let text;
      if (typeof chunk === 'string') {
        const isUtf8 = encoding === undefined || encoding === null || /^utf-?8$/i.test(encoding);
        // A pending partial character from an earlier Buffer write is flushed first to keep order.
        text = decoder.end() + (isUtf8 ? chunk : decoder.write(Buffer.from(chunk, encoding)));
      } else if (chunk instanceof Uint8Array) {
        text = decoder.write(Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength));
      } else {
        throw new TypeError('The "chunk" argument must be of type string or an instance of Buffer or Uint8Array');
      }
      emit(text);
      if (typeof callback === 'function') process.nextTick(callback);
      return true;
    };
  }
}
