// The child bootstrap alone, without sandbox or plugin: `node ... bootstrap/child.cjs` started
// with fd 3 as its control socket, until its `hello` and then until the result of a trivial
// already-stripped run frame (what a per-call child does), against bare `node -e 0`, interleaved.
// Usage: node tests/bench/child-startup.mjs [runs] [bootstrap]   (default bootstrap/child.cjs)
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { ROOT } from '../conformance/harness.js';
import { bareNode, median, NODE, pairs, report } from './lib.mjs';

const runs = Number(process.argv[2] ?? 40);
const ARGV = ['--max-old-space-size=512', '--experimental-vm-modules', process.argv[3] ?? join(ROOT, 'bootstrap/child.cjs'),
  '--max-message-bytes=134217728', '--max-pending-calls=128'];
const hellos = [];

function childRun() {
  return new Promise((resolve, reject) => {
    const t0 = performance.now();
    const child = spawn(NODE, ARGV, { stdio: ['ignore', 'pipe', 'pipe', 'pipe'], cwd: '/' });
    const control = child.stdio[3];
    let buffered = '';
    control.setEncoding('utf8');
    control.on('data', (chunk) => {
      buffered += chunk;
      let newline;
      while ((newline = buffered.indexOf('\n')) !== -1) {
        const frame = JSON.parse(buffered.slice(0, newline));
        buffered = buffered.slice(newline + 1);
        if (frame.type === 'hello') {
          hellos.push(performance.now() - t0);
          control.write(`${JSON.stringify({ type: 'run', run: 1, format: 'async-function', program: 'return 1', stripped: 'return 1', cwd: '/', discardCompletion: false, bindings: [] })}\n`);
        } else if (frame.type === 'result') {
          const ms = performance.now() - t0;
          if (!frame.ok) reject(new Error(JSON.stringify(frame)));
          child.kill('SIGKILL');
          child.on('close', () => resolve({ ms }));
        }
      }
    });
  });
}

console.log('child-startup: bootstrap/child.cjs to the result of a stripped `return 1`, no sandbox');
const figures = await pairs(runs, childRun, () => bareNode());
console.log(`  hello after: median ${median(hellos).toFixed(1)} ms`);
report('child-startup', 'child to result', 'bare node -e 0', figures);
