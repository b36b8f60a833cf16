// Per-run state and the rule that decides which run, if any, may still talk to the host.
// Output and binding calls are attributed through AsyncLocalStorage: a callback created by a run
// keeps that run as its store, so once the run has settled its late callbacks stay silent even
// while a later run is active. Code with no store (native callbacks that lost their context)
// belongs to the active run.

import { AsyncLocalStorage } from 'node:async_hooks';

export const runStorage = new AsyncLocalStorage();

export class Run {
  constructor(id) {
    this.id = id;
    this.settled = false; // result selected: no further output or calls
    this.revoked = false; // host asked to stop: output dropped, open calls rejected
    this.pending = new Map(); // call id -> { resolve, reject, bytes, binding, name, site }
    this.nextCallId = 1;
    this.outstandingBytes = 0;
    // 'initializer' -> 'awaiting-ack' -> 'program' for runs carrying an environment initializer.
    this.phase = 'program';
    this.onInitAck = null; // continuation started by the host's `init-ack`
    this.bindingKeys = null; // Set of bindingKey(global, name) this run may call; null: any
    this.warmUpGlobals = null; // a warm-up's binding globals (name -> value), removed when it settles
  }

  // Whether `global.name` belongs to this run's bindings: a saved method of an earlier
  // evaluation may name one the current evaluation does not offer.
  allowsBinding(global, name) {
    return this.bindingKeys === null || this.bindingKeys.has(bindingKey(global, name));
  }

  get canTalk() {
    return !this.settled && !this.revoked;
  }
}

export function bindingKey(global, name) {
  return `${global}\u0000${name}`;
}

let activeRun = null;

export function setActiveRun(run) {
  activeRun = run;
}

export function getActiveRun() {
  return activeRun;
}

// The run the current code belongs to (may be settled or revoked), or null.
export function callerRun() {
  return runStorage.getStore() ?? activeRun;
}

// The run whose output the current code may still produce, or null when it must be dropped.
export function talkingRun() {
  const run = callerRun();
  return run !== null && run.canTalk ? run : null;
}
