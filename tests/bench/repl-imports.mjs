// Node REPL with a ProgramImportHandler: each input is parsed so its import() expressions call a
// settle-checking importer. Median host-side round trip of a retained Node REPL evaluation that
// imports a builtin, with the reference module-map runner (handler installed) against the same
// evaluation without a handler, measured in the same run.
// Usage: node tests/bench/repl-imports.mjs [evaluations]
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { pathToFileURL } from 'node:url';
import { NODE, ROOT, Serve, tempDir } from '../conformance/harness.js';

const evaluations = Number(process.argv[2] ?? 500);
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const PROGRAM = 'var p = await import("node:path");\n' +
  Array.from({ length: 30 }, (_, i) => `var v${i} = p.join("a", "${i}").length + ${i};`).join('\n') + '\nv29';

async function medianRound(runtime) {
  const serve = new Serve({ mode: 'workspace-write', runtime: { executionMode: 'persistent-in-memory', replScoped: false, ...runtime } });
  try {
    const times = [];
    for (let i = 0; i < evaluations + 20; i++) {
      const t0 = performance.now();
      const r = await serve.run(`e${i}`, PROGRAM, { stateOwner: 'bench' });
      if (!r.ok) throw new Error(JSON.stringify(r));
      if (i >= 20) times.push(performance.now() - t0);
    }
    return median(times);
  } finally {
    await serve.close();
  }
}

const runnerDir = tempDir('dsh-bench-runner-');
writeFileSync(join(runnerDir, 'runner.mjs'), `import ${JSON.stringify(pathToFileURL(join(ROOT, 'bootstrap/runners/module-map-runner.js')).href)};\n`);
writeFileSync(join(runnerDir, 'module-map.json'), '{"virtual:unused": "node:path"}');
const launch = { kind: 'node-script', executable: NODE, bootstrapPath: join(runnerDir, 'runner.mjs') };

const plain = await medianRound({});
const handled = await medianRound({ launch });
console.log(`Node REPL evaluation without a handler: median ${plain.toFixed(3)} ms over ${evaluations}`);
console.log(`Node REPL evaluation with a handler:    median ${handled.toFixed(3)} ms over ${evaluations}`);
console.log(`ratio with / without: ${(handled / plain).toFixed(3)}`);
