// A minimal agent harness for `dsh headless --serve` (JSON lines on stdin/stdout), used by the
// host tests. It is also the worked example of examples/host/README.md in code form.
import { spawn } from "node:child_process";
import { createInterface } from "node:readline";

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
  console.log(`${checks} checks, ${failures} failed`);
  process.exit(failures ? 1 : 0);
}
