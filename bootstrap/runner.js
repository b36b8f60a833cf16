// Runner entry API: a runner script configures the child process, then starts the common child
// loop (process.js). The ProgramImportHandler belongs to this process; it is independent of the
// program format and is never sent over the control channel.
//
//   import { runNodeMain } from '<bootstrap>/runner.js';
//   await runNodeMain({ importHandler: (request) => ({ type: 'default' }) });
//
// The host starts the runner like process.js (launch: {kind: node-script, bootstrapPath: runner}),
// with the same argv; the plugin's launch passes --experimental-vm-modules.

import { setProgramImportHandler } from './imports/handler.js';

export { setProgramImportHandler };

export async function runNodeMain({ importHandler = null } = {}) {
  setProgramImportHandler(importHandler);
  await import('./process.js');
}

// Retained environments use the same loop: the program format travels in each run frame.
export const runPersistentMain = runNodeMain;
