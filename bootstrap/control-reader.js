// Reads the inherited control socket. Until the first `run` frame the child has nothing else to
// do, so it reads synchronously on the main thread; only then does it read asynchronously, on the
// next turn of the event loop, through libuv's pipe handle itself: `process.binding('pipe_wrap')`
// (deprecated in documentation only, DEP0111, and still serving an allow-list with `pipe_wrap`,
// `stream_wrap` and `uv`). It costs about 0.3 ms where `net` and its stream modules cost about
// 8 ms, which the first binding call of a process waited for. A Node without those bindings gets a
// net.Socket adopting the descriptor. A trivial per-call program has sent its
// result before either starts (and the host freezes the range at the result). Reading on the
// threadpool instead would keep a thread blocked in read(2) that some of Node's exit paths wait
// for forever.

import fs from 'node:fs';
import net from 'node:net';
import util from 'node:util';

const CHUNK_BYTES = 64 * 1024;

// onChunk(buffer) for every chunk read; the buffer is only valid during the call (one buffer is
// read into again and again), so the caller copies what it keeps. While reading is synchronous,
// onChunk returns true once the chunk's frames included a run, and reading goes asynchronous.
// onEnd() once the host closes the channel; onError(error) if reading fails.
export function readControl(fd, handlers) {
  // From a tick, like the asynchronous reads: a program's stack then ends the same way in
  // every run (the promise jobs it starts run under processTicksAndRejections).
  process.nextTick(readUntilRun, fd, handlers);
}

function readUntilRun(fd, handlers) {
  const { onChunk, onEnd, onError } = handlers;
  const chunk = Buffer.allocUnsafeSlow(CHUNK_BYTES);
  for (;;) {
    let bytes;
    try {
      bytes = fs.readSync(fd, chunk, 0, CHUNK_BYTES, null);
    } catch (error) {
      if (error.code === 'EAGAIN') break; // a non-blocking descriptor: the asynchronous reader reads it
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
  // Each read is copied out and handled from a tick, as the first ones were.
  setImmediate(() => readPipe(fd, chunk, handlers) || readSocket(fd, chunk, handlers));
}

// The open handle, kept reachable for as long as it reads.
let pipeHandle = null;

// Reads fd through a libuv pipe handle into `chunk`; false when this Node cannot.
function readPipe(fd, chunk, { onChunk, onEnd, onError }) {
  let Pipe, SOCKET, streamBaseState, kReadBytesOrError, UV_EOF;
  try {
    ({ Pipe, constants: { SOCKET } } = process.binding('pipe_wrap'));
    ({ streamBaseState, kReadBytesOrError } = process.binding('stream_wrap'));
    ({ UV_EOF } = process.binding('uv'));
  } catch {
    return false;
  }
  if (typeof Pipe !== 'function' || typeof Pipe.prototype.useUserBuffer !== 'function' ||
      streamBaseState === undefined || typeof kReadBytesOrError !== 'number' || typeof UV_EOF !== 'number') {
    return false;
  }
  const handle = new Pipe(SOCKET);
  if (handle.open(fd) !== 0) {
    handle.close();
    return false;
  }
  const failed = (status) => {
    const code = util.getSystemErrorName(status);
    onError(Object.assign(new Error(`control channel: ${code}`), { code }));
  };
  handle.useUserBuffer(chunk);
  // libuv reports each read's length, or a negative status, beside the buffer it filled.
  handle.onread = () => {
    const bytes = streamBaseState[kReadBytesOrError];
    if (bytes > 0) process.nextTick(onChunk, Buffer.from(chunk.subarray(0, bytes)));
    else if (bytes === UV_EOF) process.nextTick(onEnd);
    else if (bytes < 0) process.nextTick(failed, bytes);
  };
  const status = handle.readStart();
  if (status !== 0) failed(status);
  pipeHandle = handle;
  return true;
}

// The same through net: `onread` hands each read to the callback in one buffer, without the
// stream machinery's per-chunk work.
function readSocket(fd, chunk, { onChunk, onEnd, onError }) {
  const onread = { buffer: chunk, callback: (bytes, buffer) => void process.nextTick(onChunk, Buffer.from(buffer.subarray(0, bytes))) };
  const control = new net.Socket({ fd, readable: true, writable: true, onread });
  control.on('end', onEnd);
  control.on('error', onError);
}
