// Splits the incoming control byte stream into newline-terminated JSON frames. A frame's size is
// the UTF-8 byte length of its JSON text, newline not counted; anything over the limit is refused
// before it is buffered further, so a misbehaving peer cannot make the child hold unbounded input.

export class FrameError extends Error {
  constructor(message) {
    super(message);
    this.name = 'FrameError';
  }
}

export class FrameReader {
  #maxBytes;
  #onFrame;
  #onError;
  #pending = [];
  #pendingBytes = 0;
  #failed = false;

  constructor(maxBytes, onFrame, onError) {
    this.#maxBytes = maxBytes;
    this.#onFrame = onFrame;
    this.#onError = onError;
  }

  // `chunk` is only read during the call: an unfinished frame's bytes are copied.
  push(chunk) {
    let start = 0;
    while (!this.#failed && start < chunk.length) {
      const newline = chunk.indexOf(0x0a, start);
      if (newline === -1) {
        this.#buffer(Buffer.from(chunk.subarray(start)));
        return;
      }
      this.#buffer(chunk.subarray(start, newline));
      if (this.#failed) return;
      const line = this.#pending.length === 1 ? this.#pending[0] : Buffer.concat(this.#pending);
      this.#pending = [];
      this.#pendingBytes = 0;
      start = newline + 1;
      this.#deliver(line);
    }
  }

  #buffer(bytes) {
    if (this.#pendingBytes + bytes.length > this.#maxBytes) {
      this.#fail(`incoming control frame exceeds ${this.#maxBytes} bytes`);
      return;
    }
    if (bytes.length > 0) {
      this.#pending.push(bytes);
      this.#pendingBytes += bytes.length;
    }
  }

  #deliver(line) {
    let frame;
    try {
      frame = JSON.parse(line.toString('utf8'));
    } catch (error) {
      this.#fail(`incoming control frame is not JSON: ${error.message}`);
      return;
    }
    if (frame === null || typeof frame !== 'object' || Array.isArray(frame)) {
      this.#fail('incoming control frame is not a JSON object');
      return;
    }
    this.#onFrame(frame);
  }

  #fail(message) {
    this.#failed = true;
    this.#pending = [];
    this.#pendingBytes = 0;
    this.#onError(new FrameError(message));
  }
}
