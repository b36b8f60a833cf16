// Node REPL with a ProgramImportHandler: each input is parsed so its import() expressions call a
// settle-checking importer. Median host-side round trip of a retained Node REPL evaluation that
// imports a builtin, with the reference module-map runner (handler installed) against the same
// evaluation without a handler, interleaved in the same run.
// Usage: node tests/bench/repl-imports.mjs [evaluations]
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { NODE, ROOT, Serve, tempDir } from '../conformance/harness.js';
import { pairs, report } from './lib.mjs';

const evaluations = Number(process.argv[2] ?? 500);
const PROGRAM = 'var p = await import("node:path");\n' +
  Array.from({ length: 30 }, (_, i) => `var v${i} = p.join("a", "${i}").length + ${i};`).join('\n') + '\nv29';

function replServe(runtime) {
  const serve = new Serve({ mode: 'workspace-write', runtime: { executionMode: 'persistent-in-memory', replScoped: false, ...runtime } });
  let id = 0;
  serve.evaluate = async () => {
    const r = await serve.run(`e${id++}`, PROGRAM, { stateOwner: 'bench' });
    if (!r.ok) throw new Error(JSON.stringify(r));
  };
  return serve;
}

const runnerDir = tempDir('dsh-bench-runner-');
writeFileSync(join(runnerDir, 'runner.mjs'), `import ${JSON.stringify(pathToFileURL(join(ROOT, 'bootstrap/runners/module-map-runner.js')).href)};\n`);
writeFileSync(join(runnerDir, 'module-map.json'), '{"virtual:unused": "node:path"}');
const launch = { kind: 'node-script', executable: NODE, bootstrapPath: join(runnerDir, 'runner.mjs') };

const handled = replServe({ launch });
const plain = replServe({});
console.log('repl-imports: 32-line Node REPL evaluation importing a builtin, one owner');
const figures = await pairs(evaluations, handled.evaluate, plain.evaluate, 20);
await Promise.all([handled.close(), plain.close()]);
report('repl-imports', 'with an import handler', 'without a handler', figures, 'ms', 3);
