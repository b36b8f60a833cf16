// A minimal agent harness for `dsh headless --serve` (JSON lines on stdin/stdout), used by the
// host tests. It is also the worked example of examples/host/README.md in code form. Every event
// is validated against host-abi/schemas/serve.json (Ajv); done() fails on any violation.
import { spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { createInterface } from "node:readline";

const schemaDir = new URL("../../host-abi/schemas/", import.meta.url);
const require = createRequire(new URL("../clients/package.json", import.meta.url));
const Ajv2020 = require("ajv/dist/2020").default;
const ajv = new Ajv2020({ strict: false, allErrors: true });
for (const name of ["describe.json", "request.json", "result.json", "serve.json"])
  ajv.addSchema(JSON.parse(readFileSync(new URL(name, schemaDir), "utf8")), name);
const validEvent = ajv.compile({ $ref: "serve.json#/$defs/event" });
const validRequest = ajv.compile({ $ref: "serve.json#/$defs/request" });
export const schemaViolations = [];
export function checkEvent(ev) {
  if (!validEvent(ev)) schemaViolations.push({ event: ev, errors: validEvent.errors });
  return ev;
}
export function isValidRequest(req) {
  return validRequest(req);
}
export function isValidEvent(ev) {
  return validEvent(ev);
}

export class Dsh {
  constructor(dsh, args = [], options = {}) {
    this.child = spawn(dsh, ["headless", ...args, "--serve"], {
      stdio: ["pipe", "pipe", "pipe"],
      ...options,
    });
    this.events = [];
    this.waiters = [];
    this.stderr = "";
    this.child.stderr.setEncoding("utf8");
    this.child.stderr.on("data", (d) => (this.stderr += d));
    createInterface({ input: this.child.stdout }).on("line", (line) => {
      let ev;
      try {
        ev = JSON.parse(line);
      } catch (e) {
        ev = { type: "__invalid__", line, error: String(e) };
      }
      checkEvent(ev);
      // The first line is the hello event; tests read it from .hello.
      if (!this.hello && ev.type === "hello" && !("id" in ev)) {
        this.hello = ev;
        return;
      }
      this.events.push(ev);
      this.#wake();
    });
    this.exited = new Promise((resolve) =>
      this.child.on("exit", (code, signal) => {
        resolve({ code, signal });
        // Nothing more can arrive: fail pending waits now rather than at their timeout.
        setImmediate(() => {
          for (const w of this.waiters.splice(0)) {
            clearTimeout(w.timer);
            w.reject(new Error(`dsh exited (${code ?? signal}); events: ${JSON.stringify(this.events)}; stderr: ${this.stderr}`));
          }
        });
      }),
    );
  }

  #wake() {
    for (const w of [...this.waiters]) {
      const i = this.events.findIndex(w.match);
      if (i >= 0) {
        this.waiters.splice(this.waiters.indexOf(w), 1);
        clearTimeout(w.timer);
        w.resolve(this.events.splice(i, 1)[0]);
      }
    }
  }

  send(request) {
    this.child.stdin.write((typeof request === "string" ? request : JSON.stringify(request)) + "\n");
  }

  sendRaw(bytes) {
    this.child.stdin.write(bytes);
  }

  // Resolves with (and removes) the first event matching match; rejects after timeoutMs.
  next(match = () => true, timeoutMs = 30000) {
    return new Promise((resolve, reject) => {
      const w = { match, resolve, reject };
      w.timer = setTimeout(() => {
        this.waiters.splice(this.waiters.indexOf(w), 1);
        reject(new Error(`no matching event in ${timeoutMs} ms; events: ${JSON.stringify(this.events)}; stderr: ${this.stderr}`));
      }, timeoutMs);
      this.waiters.push(w);
      this.#wake();
    });
  }

  result(id, timeoutMs) {
    return this.next((e) => e.type === "result" && e.id === id, timeoutMs);
  }

  async close() {
    this.child.stdin.end();
    return this.exited;
  }
}

// Runs fn(name) as a named check and reports; exits non-zero at the end when one failed.
let failures = 0;
let checks = 0;
export async function check(name, fn) {
  checks++;
  try {
    await fn();
    console.log(`ok - ${name}`);
  } catch (e) {
    failures++;
    console.log(`not ok - ${name}\n  ${String(e?.stack ?? e).replace(/\n/g, "\n  ")}`);
  }
}

export function done() {
  checks++;
  if (schemaViolations.length) {
    failures++;
    console.log(`not ok - every event matches host-abi/schemas/serve.json\n  ${JSON.stringify(schemaViolations).slice(0, 4000)}`);
  } else {
    console.log("ok - every event matches host-abi/schemas/serve.json");
  }
  console.log(`${checks} checks, ${failures} failed`);
  process.exit(failures ? 1 : 0);
}
