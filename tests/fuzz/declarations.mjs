// The declarations fuzz_mcp_typescript.c makes of its corpus, parsed by the pinned Node's own
// TypeScript parser: each must be valid TypeScript (module.stripTypeScriptTypes throws on a
// syntax error), as the run_code description that carries them is read by a model that writes
// TypeScript against it. Usage: node declarations.mjs REPLAY_EXECUTABLE CORPUS_DIR
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import module from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const [replay, corpus] = process.argv.slice(2);
const dir = mkdtempSync(join(tmpdir(), 'dsh-declarations-'));
try {
  execFileSync(replay, [corpus], { env: { ...process.env, DSH_FUZZ_DECLARATIONS: dir }, stdio: 'inherit' });
  const files = readdirSync(dir);
  let failed = 0;
  for (const name of files) {
    const text = readFileSync(join(dir, name), 'utf8');
    try {
      module.stripTypeScriptTypes(text, { mode: 'strip' });
    } catch (error) {
      failed++;
      console.error(`not TypeScript (${error.message}):\n${text}`);
    }
  }
  if (files.length === 0) throw new Error('the replay wrote no declarations');
  console.log(`${files.length} declarations, ${failed} not TypeScript`);
  process.exitCode = failed ? 1 : 0;
} finally {
  rmSync(dir, { recursive: true, force: true });
}
