// Renders a thrown value as the `message` of an `exception` result.
//   Error objects    -> their stack, minus frames inside this bootstrap (first line "Name: message"),
//                       then their cause chain
//   anything else    -> "Uncaught " + util.inspect(value), the way Node's REPL reports it
//   unrenderable     -> a fixed message, because a hostile value must not break result delivery

import { fileURLToPath } from 'node:url';
import path from 'node:path';
import util from 'node:util';
import { formatValue } from './inspect.js';

export const UNRENDERABLE_EXCEPTION = 'exception value could not be rendered';

const BOOTSTRAP_DIR = path.dirname(fileURLToPath(import.meta.url));
const BOOTSTRAP_URL = new URL('./', import.meta.url).href;
const escape = (text) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
// Only frames in the bootstrap's own module files: a program whose cwd is the bootstrap
// directory has frames like "<dir>/[program]:1:7", which must stay.
const INTERNAL_FRAME = new RegExp(
  `^\\s+at .*(?:${escape(BOOTSTRAP_URL)}|${escape(BOOTSTRAP_DIR + path.sep)})[^\\s()]*\\.[cm]?js:\\d+:\\d+\\)?$`,
);

// The frame through which a vm-script program was started (it sits right under the program's
// top-level frames); it describes the runner, not the program.
const SCRIPT_RUNNER_FRAME = /^\s+at Script\.runInContext \(node:vm:\d+:\d+\)$/;

function isInternalFrame(line) {
  return INTERNAL_FRAME.test(line) || SCRIPT_RUNNER_FRAME.test(line);
}

// Removes stack lines that point into the bootstrap: they describe the runner, not the program.
export function stripInternalFrames(stack) {
  return stack
    .split('\n')
    .filter((line) => !isInternalFrame(line))
    .join('\n');
}

function isError(value) {
  return util.types.isNativeError(value) || value instanceof Error;
}

// The cause chain, one "[cause]: Name: message" line each (as Node's inspect labels it): fetch's
// "fetch failed" carries the refused socket (connect EACCES) only there, and the host's denial
// detection reads the message. A cause that cannot be rendered ends the chain.
const MAX_CAUSES = 4;
function causeLines(error) {
  const lines = [];
  let current = error;
  for (let depth = 0; depth < MAX_CAUSES; depth++) {
    try {
      current = current.cause;
      if (current === undefined || current === null) break;
      lines.push(`[cause]: ${isError(current) ? Error.prototype.toString.call(current) : formatValue(current)}`);
    } catch {
      break;
    }
  }
  return lines;
}

function renderError(error) {
  const header = Error.prototype.toString.call(error);
  const stack = error.stack;
  const causes = causeLines(error);
  const tail = causes.length ? `\n${causes.join('\n')}` : '';
  if (typeof stack !== 'string' || stack === '') return header + tail;
  const cleaned = stripInternalFrames(stack);
  // A message changed after construction leaves a stale stack header; lead with the real one.
  return (cleaned.startsWith(header) ? cleaned : `${header}\n${cleaned}`) + tail;
}

export function formatThrown(value) {
  try {
    if (value !== null && (typeof value === 'object' || typeof value === 'function') && isError(value)) {
      return renderError(value);
    }
    return `Uncaught ${formatValue(value)}`;
  } catch {
    return UNRENDERABLE_EXCEPTION;
  }
}
