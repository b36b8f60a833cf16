// Guest library of dsh-workflow-ptc: the body of the per-call async function the engine sends as
// the PTC program, right after `const __wf = {script, args, meta, caps...};`. It builds the helper
// API in a node:vm context, runs the user's script there and returns a JSON envelope
// {ok: true, value} | {ok: false, code, message}. The VM is no security boundary: the OS sandbox
// of the PTC process is. Host bindings: workflow.agent(request), workflow.progress(events).
const vm = await import('node:vm');
const cfg = __wf;

// ---- progress: one binding call at a time; the first batch starts synchronously, later events
// queue in order (a log burst cannot exhaust maxPendingCalls). A batch holds at most BATCH_BYTES
// of UTF-8 JSON events (one larger event goes alone): less than this library's own size, so a batch
// fits every maxMessageBytes the workflow's program fits in. A lost batch fails the workflow. ----
const BATCH_BYTES = 4096;
const utf8Bytes = (event) => Buffer.byteLength(JSON.stringify(event));
const queue = [];
let draining = null;
let progressError = null;
function emit(event) {
  queue.push(event);
  if (!draining) draining = drain();
}
function nextBatch() {
  let bytes = 0;
  let n = 0;
  while (n < queue.length) {
    const next = utf8Bytes(queue[n]) + 1; // and its comma
    if (n > 0 && bytes + next > BATCH_BYTES) break;
    bytes += next;
    n++;
  }
  return queue.splice(0, n);
}
async function drain() {
  try {
    while (queue.length) await workflow.progress(nextBatch());
  } catch (e) {
    progressError ??= e;
    queue.length = 0;
  } finally {
    draining = null;
  }
}
async function flush() {
  while (draining) await draining;
  if (progressError) throw progressError;
}

// ---- cooperative caps (guest counters, not host quotas) ----
const counters = { started: 0, active: 0, waiters: [] };
// Cap violations carry code 'limit', which becomes the result's error.code.
function limitError(message) {
  const e = new RangeError(message);
  e.code = 'limit';
  return e;
}
function checkItems(fn, n) {
  if (n > cfg.maxItemsPerCall) throw limitError(`${fn}(): ${n} items exceed maxItemsPerCall (${cfg.maxItemsPerCall})`);
}
async function acquire() {
  if (counters.active < cfg.maxConcurrentAgents) {
    counters.active++;
    return;
  }
  await new Promise((resolve) => counters.waiters.push(resolve)); // the slot is handed over
}
function release() {
  const next = counters.waiters.shift();
  if (next) next();
  else counters.active--;
}
// Values crossing to the host must be main-realm plain JSON (the runtime refuses other realms').
const plain = (v) => (v === undefined ? undefined : JSON.parse(JSON.stringify(v)));
let currentPhase = null;

async function agent(prompt, options = {}) {
  if (typeof prompt !== 'string') throw new TypeError('agent(prompt, options): prompt must be a string');
  const o = options ?? {};
  for (const key of ['label', 'phase', 'provider', 'model']) {
    if (o[key] != null && typeof o[key] !== 'string') throw new TypeError(`agent(prompt, options): options.${key} must be a string`);
  }
  if (o.schema != null && (typeof o.schema !== 'object' || Array.isArray(o.schema))) {
    throw new TypeError('agent(prompt, options): options.schema must be an object');
  }
  if (counters.started >= cfg.maxTotalAgents)
    throw limitError(`agent(): maxTotalAgents (${cfg.maxTotalAgents}) reached`);
  counters.started++;
  const request = plain({
    prompt,
    label: o.label ?? undefined,
    phase: o.phase ?? currentPhase ?? undefined,
    schema: o.schema,
    provider: o.provider,
    model: o.model,
  });
  await acquire();
  try {
    await flush(); // observers see earlier logs before this agent starts
    const r = await workflow.agent(request);
    if (!r || !r.ok) return null;
    if (r.output && 'value' in r.output) return r.output.value;
    return r.output?.text ?? '';
  } finally {
    release();
  }
}

async function parallel(thunks) {
  const list = Array.from(thunks ?? []);
  checkItems('parallel', list.length);
  return Promise.all(list.map((t) => Promise.resolve().then(() => (typeof t === 'function' ? t() : t))));
}

async function pipeline(items, ...stages) {
  const list = Array.from(items ?? []);
  checkItems('pipeline', list.length);
  return Promise.all(
    list.map(async (item, index) => {
      let value = item;
      for (const stage of stages) value = await stage(value, item, index);
      return value;
    }),
  );
}

function phase(title) {
  currentPhase = String(title);
  emit({ type: 'phase', title: currentPhase });
}

function log(message) {
  emit({ type: 'log', message: typeof message === 'string' ? message : String(message), phase: currentPhase });
}

// A JSON-only result: anything JSON.stringify would silently change is refused.
function jsonOnly(v, path, seen) {
  if (v === null || typeof v === 'string' || typeof v === 'boolean') return;
  if (typeof v === 'number') {
    if (!Number.isFinite(v) || Object.is(v, -0)) throw new TypeError(`${path}: ${v} is not JSON`);
    return;
  }
  if (typeof v !== 'object') throw new TypeError(`${path}: a ${typeof v} is not JSON`);
  if (seen.has(v)) throw new TypeError(`${path}: a cycle is not JSON`);
  seen.add(v);
  if (Array.isArray(v)) {
    for (let i = 0; i < v.length; i++) {
      if (!(i in v)) throw new TypeError(`${path}[${i}]: a hole is not JSON`);
      jsonOnly(v[i], `${path}[${i}]`, seen);
    }
  } else {
    const proto = Object.getPrototypeOf(v);
    if (proto !== null && Object.getPrototypeOf(proto) !== null)
      throw new TypeError(`${path}: a ${v.constructor?.name ?? 'class'} instance is not JSON`);
    for (const k of Object.keys(v)) jsonOnly(v[k], `${path}.${k}`, seen);
  }
  seen.delete(v);
}

const context = vm.createContext({});
for (const [name, fn] of Object.entries({ agent, parallel, pipeline, phase, log }))
  Object.defineProperty(context, name, { value: fn, enumerable: false });
// args and meta as objects of the context's own realm.
context.args = vm.runInContext(`JSON.parse(${JSON.stringify(JSON.stringify(cfg.args ?? null))})`, context);
context.meta = vm.runInContext(`JSON.parse(${JSON.stringify(JSON.stringify(cfg.meta ?? {}))})`, context);

const message = (e) => (e instanceof Error || (e && typeof e.message === 'string') ? `${e.name ?? 'Error'}: ${e.message}` : `Uncaught ${String(e)}`);
let envelope;
let script;
// A syntax error at the user's line and column (V8's stack: "workflow.js:LINE", source, caret);
// past the script it is in the wrapper's "})()": something was left open at the script's end.
function syntaxError(e, src) {
  const [where, , caret = ''] = String(e?.stack).split('\n'), line = +/^workflow\.js:(\d+)$/.exec(where)?.[1];
  if (e?.name !== 'SyntaxError' || !(line > 0)) return message(e);
  const lines = src.trimEnd().split('\n'), n = lines.length;
  if (line > n) return `SyntaxError: the script ends inside an unclosed block, bracket, string or template (line ${n}, column ${lines[n - 1].length + 1})`;
  const col = caret.indexOf('^') + 1;
  return `${message(e)} (line ${line}${col ? `, column ${col}` : ''})`;
}
try {
  script = new vm.Script(`(async () => {\n${cfg.script}\n})()`, { filename: 'workflow.js', lineOffset: -1 });
} catch (e) {
  envelope = { ok: false, code: 'script-invalid', message: syntaxError(e, cfg.script) };
}
if (!envelope) {
  // The engine holds the start event until this first event: a script that does not compile never
  // started, so its run reports only the result (code script-invalid).
  emit({ type: 'compiled' });
  let promise;
  try {
    promise = script.runInContext(context, { timeout: cfg.syncTimeoutMs });
  } catch (e) {
    envelope = e?.code === 'ERR_SCRIPT_EXECUTION_TIMEOUT'
      ? { ok: false, code: 'sync-timeout', message: `the initial synchronous slice exceeded syncTimeoutMs (${cfg.syncTimeoutMs} ms)` }
      : { ok: false, code: 'exception', message: message(e) };
  }
  if (!envelope) {
    try {
      let value = await promise;
      if (value === undefined) value = null;
      jsonOnly(value, 'result', new Set());
      envelope = { ok: true, value: plain(value) };
    } catch (e) {
      const code = e?.code === 'limit' ? 'limit' : e instanceof TypeError && /is not JSON$/.test(e.message) ? 'invalid-output' : 'exception';
      envelope = { ok: false, code, message: message(e) };
    }
  }
}
// Every queued event reaches the host before the result; events that could not be delivered
// turn a success into an error rather than vanish.
try {
  await flush();
} catch (e) {
  if (envelope.ok) envelope = { ok: false, code: 'progress', message: `progress events could not be delivered: ${message(e)}` };
}
return envelope;
