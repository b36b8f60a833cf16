// A runner that installs a module-map ProgramImportHandler (imports/module-map.js), then runs the
// common child loop. The map is `$PTC_MODULE_MAP` when set (independently started runners; the
// host's launch passes no ambient environment), else `module-map.json` beside the main script
// (process.argv[1]): a host uses a one-line wrapper next to its map,
//   // /srv/ptc/runner.mjs
//   import '/path/to/bootstrap/runners/module-map-runner.js';
// with launch {kind: node-script, executable: <node>, bootstrapPath: /srv/ptc/runner.mjs}.
// Without a map file the runner behaves like process.js; an unreadable or invalid map exits 2.

import fs from 'node:fs';
import path from 'node:path';
import { moduleMapHandler } from '../imports/module-map.js';
import { runNodeMain } from '../runner.js';

const file = process.env.PTC_MODULE_MAP ?? path.join(path.dirname(process.argv[1]), 'module-map.json');
let importHandler = null;
try {
  if (fs.existsSync(file)) importHandler = moduleMapHandler(JSON.parse(fs.readFileSync(file, 'utf8')), path.dirname(file));
} catch (error) {
  fs.writeSync(2, `ptc runner: module map ${file}: ${error.message}\n`);
  process.exit(2);
}
await runNodeMain({ importHandler });
