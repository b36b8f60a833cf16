// Reads the inherited control socket. Until the first `run` frame the child has nothing else to
// do, so it reads synchronously on the main thread; only then does it adopt the descriptor as a
// net.Socket, on the next turn of the event loop. A trivial per-call program has sent its result
// by then (and the host freezes the range at the result), so a cold run never pays for loading
// net and the stream modules, which cost it more than its whole evaluation. Reading on the
// threadpool instead would keep a thread blocked in read(2) that some of Node's exit paths wait
// for forever.

import fs from 'node:fs';
import net from 'node:net';

const CHUNK_BYTES = 64 * 1024;

// onChunk(buffer) for every chunk read; the buffer is only valid during the call (one buffer is
// read into again and again), so the caller copies what it keeps. While reading is synchronous,
// onChunk returns true once the chunk's frames included a run, and reading goes asynchronous.
// onEnd() once the host closes the channel; onError(error) if reading fails.
export function readControl(fd, handlers) {
  // From a tick, like the socket's data events: a program's stack then ends the same way in
  // every run (the promise jobs it starts run under processTicksAndRejections).
  process.nextTick(readUntilRun, fd, handlers);
}

function readUntilRun(fd, { onChunk, onEnd, onError }) {
  const chunk = Buffer.allocUnsafeSlow(CHUNK_BYTES);
  for (;;) {
    let bytes;
    try {
      bytes = fs.readSync(fd, chunk, 0, CHUNK_BYTES, null);
    } catch (error) {
      if (error.code === 'EAGAIN') break; // a non-blocking descriptor: the socket reads it
      if (error.code === 'EINTR') continue;
      onError(error);
      return;
    }
    if (bytes === 0) {
      onEnd();
      return;
    }
    if (onChunk(chunk.subarray(0, bytes))) break;
  }
  setImmediate(() => {
    // `onread` hands each read to the callback in one buffer, without the stream machinery's
    // per-chunk work. The bytes are copied out and handled from a tick, as the first ones were.
    const onread = { buffer: chunk, callback: (bytes, buffer) => void process.nextTick(onChunk, Buffer.from(buffer.subarray(0, bytes))) };
    const control = new net.Socket({ fd, readable: true, writable: true, onread });
    control.on('end', onEnd);
    control.on('error', onError);
  });
}
