// Writes frames to the control descriptor synchronously. Output must reach the host before the
// next statement runs, so text printed just before a synchronous hot loop is not lost when the
// host later kills the process. The descriptor may be non-blocking (libuv sets O_NONBLOCK when it
// adopts it for reading), so EAGAIN is answered by a short sleep and a retry.

import fs from 'node:fs';

const sleepCell = new Int32Array(new SharedArrayBuffer(4));
// The largest encoding buffer kept between frames; a larger frame gets one of its own.
const SCRATCH_MAX_BYTES = 4 * 1024 * 1024;

export class FrameTooLargeError extends RangeError {
  constructor(bytes, maxBytes) {
    super(`control frame of ${bytes} bytes exceeds the ${maxBytes}-byte message limit`);
    this.name = 'FrameTooLargeError';
  }
}

// Bytes that JSON.stringify + UTF-8 produce for one BMP code unit (surrogate pairs are counted
// by the caller as the 4 bytes of their code point).
function escapedSize(code) {
  if (code === 0x22 || code === 0x5c) return 2;
  if (code < 0x20) return code === 0x08 || code === 0x09 || code === 0x0a || code === 0x0c || code === 0x0d ? 2 : 6;
  if (code < 0x80) return 1;
  if (code < 0x800) return 2;
  return 3;
}

export class FrameWriter {
  #fd;
  #maxBytes;
  #onLost;
  #lost = false;
  #scratch = Buffer.alloc(0);

  constructor(fd, maxBytes, onLost) {
    this.#fd = fd;
    this.#maxBytes = maxBytes;
    this.#onLost = onLost;
  }

  get maxBytes() {
    return this.#maxBytes;
  }

  // Sends one frame given as JSON text (without newline). Throws FrameTooLargeError when the text
  // exceeds the message limit (the newline is not counted); nothing is written then.
  sendJson(jsonText) {
    const bytes = Buffer.from(`${jsonText}\n`, 'utf8');
    if (bytes.length - 1 > this.#maxBytes) throw new FrameTooLargeError(bytes.length - 1, this.#maxBytes);
    this.#writeAll(bytes);
  }

  send(object) {
    this.sendJson(JSON.stringify(object));
  }

  // Sends `text` as one or more `text` frames, splitting at code point boundaries so that no
  // frame exceeds the limit. Lone surrogates become U+FFFD: the host needs valid UTF-8.
  sendText(run, text) {
    if (text.length === 0) return;
    const wellFormed = text.isWellFormed() ? text : text.toWellFormed();
    const prefix = `{"type":"text","run":${run},"text":`;
    const frame = this.#encode(prefix, JSON.stringify(wellFormed));
    if (frame.length - 1 <= this.#maxBytes) {
      this.#writeAll(frame);
      return;
    }
    const budget = this.#maxBytes - (Buffer.byteLength(prefix) + 2 /* quotes */ + 1 /* } */);
    let start = 0;
    while (start < wellFormed.length) {
      let end = start;
      let used = 0;
      while (end < wellFormed.length) {
        const code = wellFormed.charCodeAt(end);
        const pair = code >= 0xd800 && code <= 0xdbff ? 2 : 1;
        const cost = pair === 2 ? 4 : escapedSize(code);
        // Always take at least one code point so a tiny limit cannot stall the loop.
        if (used + cost > budget && end > start) break;
        used += cost;
        end += pair;
      }
      this.#writeAll(this.#encode(prefix, JSON.stringify(wellFormed.slice(start, end))));
      start = end;
    }
  }

  // `${prefix}${body}}\n` as UTF-8, encoded once into a reused buffer (output is the child's
  // largest traffic: no joined string, no second pass to count bytes, no fresh pages per frame).
  // Valid until the next call.
  #encode(prefix, body) {
    const most = prefix.length + body.length * 3 + 2; // a UTF-16 unit is at most 3 UTF-8 bytes
    let buffer = this.#scratch;
    if (buffer.length < most) {
      buffer = Buffer.allocUnsafeSlow(most);
      if (most <= SCRATCH_MAX_BYTES) this.#scratch = buffer;
    }
    let n = buffer.write(prefix, 0, 'latin1');
    n += buffer.write(body, n, 'utf8');
    buffer[n++] = 0x7d; // }
    buffer[n++] = 0x0a;
    return buffer.subarray(0, n);
  }

  #writeAll(bytes) {
    if (this.#lost) return;
    try {
      writeFullySync(this.#fd, bytes);
    } catch (error) {
      this.#lost = true;
      this.#onLost(error);
    }
  }
}

// Writes all of `bytes` to `fd` before returning, waiting out EAGAIN on a non-blocking
// descriptor; any other error is thrown.
export function writeFullySync(fd, bytes) {
  let offset = 0;
  while (offset < bytes.length) {
    try {
      offset += fs.writeSync(fd, bytes, offset, bytes.length - offset);
    } catch (error) {
      if (error.code !== 'EAGAIN' && error.code !== 'EWOULDBLOCK' && error.code !== 'EINTR') throw error;
      Atomics.wait(sleepCell, 0, 0, 1);
    }
  }
}
