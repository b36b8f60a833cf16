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

// What JSON.stringify writes for the characters it escapes in a well-formed string.
const ESCAPED = /["\\\x00-\x1f]/g;
// After this many escapes, a text with one in every 8 characters or more is stringified whole.
const DENSE_ESCAPES = 64;
const ESCAPES = Array.from({ length: 0x5d }, (_, code) => JSON.stringify(String.fromCharCode(code)).slice(1, -1));

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
    // A frame that surely fits the kept buffer (a UTF-16 unit is at most 3 UTF-8 bytes) is
    // encoded into it, so a binding call allocates no buffer; a larger one gets its exact size.
    const bound = jsonText.length * 3 + 1;
    let buffer;
    if (bound <= SCRATCH_MAX_BYTES) {
      buffer = this.#room(this.#scratch, bound, 0);
    } else {
      const exact = Buffer.byteLength(jsonText, 'utf8');
      if (exact > this.#maxBytes) throw new FrameTooLargeError(exact, this.#maxBytes);
      buffer = Buffer.allocUnsafeSlow(exact + 1);
    }
    const bytes = buffer.write(jsonText, 0, 'utf8');
    if (bytes > this.#maxBytes) throw new FrameTooLargeError(bytes, this.#maxBytes);
    buffer[bytes] = 0x0a;
    this.#writeAll(buffer, bytes + 1);
  }

  send(object) {
    this.sendJson(JSON.stringify(object));
  }

  // Sends `text` as one or more `text` frames, splitting at code point boundaries so that no
  // frame exceeds the limit. Lone surrogates become U+FFFD: the host needs valid UTF-8.
  sendText(run, text) {
    if (text.length === 0) return;
    const wellFormed = text.isWellFormed() ? text : text.toWellFormed();
    const prefix = `{"type":"text","run":${run},"text":"`;
    const frame = this.#encodeText(prefix, wellFormed);
    if (frame.length - 1 <= this.#maxBytes) {
      this.#writeAll(frame);
      return;
    }
    const budget = this.#maxBytes - (Buffer.byteLength(prefix) + 1 /* closing quote */ + 1 /* } */);
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
      this.#writeAll(this.#encodeText(prefix, wellFormed.slice(start, end)));
      start = end;
    }
  }

  // `${prefix}${escaped text}"}\n` as UTF-8, written once into a reused buffer: output is the
  // child's largest traffic. The text is escaped as JSON.stringify would (it is well formed, so
  // only quote, backslash and control characters change) between runs copied as they are; a
  // JSON.stringify of a long text would build and copy the whole string again, in fresh pages.
  // Valid until the next call.
  #encodeText(prefix, text) {
    // A UTF-16 unit is at most 3 UTF-8 bytes; only a rare control character escapes to more.
    let buffer = this.#room(this.#scratch, prefix.length + text.length * 3 + 3, 0);
    let n = buffer.write(prefix, 0, 'latin1');
    let copied = 0;
    let escapes = 0;
    ESCAPED.lastIndex = 0;
    for (let match = ESCAPED.exec(text); match !== null; match = ESCAPED.exec(text)) {
      const at = match.index;
      // Dense escapes (binary-like text) cost a call each: JSON.stringify is faster there.
      if (++escapes > DENSE_ESCAPES && escapes * 8 > at) return this.#encodeStringified(prefix, text);
      const escape = ESCAPES[text.charCodeAt(at)];
      buffer = this.#room(buffer, n + (text.length - copied) * 3 + escape.length + 3, n);
      if (at > copied) n += buffer.write(text.slice(copied, at), n, 'utf8');
      n += buffer.write(escape, n, 'latin1');
      copied = at + 1;
    }
    if (copied < text.length) n += buffer.write(copied === 0 ? text : text.slice(copied), n, 'utf8');
    buffer[n++] = 0x22; // "
    buffer[n++] = 0x7d; // }
    buffer[n++] = 0x0a;
    return buffer.subarray(0, n);
  }

  // #encodeText through one JSON.stringify of the whole text.
  #encodeStringified(prefix, text) {
    const quoted = JSON.stringify(text);
    const buffer = this.#room(this.#scratch, prefix.length + Buffer.byteLength(quoted, 'utf8') + 2, 0);
    let n = buffer.write(prefix, 0, 'latin1');
    n += buffer.write(quoted, n - 1, 'utf8') - 1; // the prefix ends in the same opening quote
    buffer[n++] = 0x7d; // }
    buffer[n++] = 0x0a;
    return buffer.subarray(0, n);
  }

  // `buffer`, or a larger one holding its first `kept` bytes, with room for `bytes`; the larger
  // one becomes the scratch buffer unless it exceeds SCRATCH_MAX_BYTES.
  #room(buffer, bytes, kept) {
    if (buffer.length >= bytes) return buffer;
    const larger = Buffer.allocUnsafeSlow(Math.max(bytes, buffer.length * 2));
    buffer.copy(larger, 0, 0, kept);
    if (larger.length <= SCRATCH_MAX_BYTES) this.#scratch = larger;
    return larger;
  }

  #writeAll(bytes, length = bytes.length) {
    if (this.#lost) return;
    try {
      writeFullySync(this.#fd, bytes, length);
    } catch (error) {
      this.#lost = true;
      this.#onLost(error);
    }
  }
}

// Writes the first `length` of `bytes` to `fd` before returning, waiting out EAGAIN on a
// non-blocking descriptor; any other error is thrown.
export function writeFullySync(fd, bytes, length = bytes.length) {
  let offset = 0;
  while (offset < length) {
    try {
      offset += fs.writeSync(fd, bytes, offset, length - offset);
    } catch (error) {
      if (error.code !== 'EAGAIN' && error.code !== 'EWOULDBLOCK' && error.code !== 'EINTR') throw error;
      Atomics.wait(sleepCell, 0, 0, 1);
    }
  }
}
