// The program-visible `inspect(...values)`: strings print raw, everything else through
// util.inspect without depth, array-length or string-length limits, so nothing the model asks
// to see is elided. One call is one text group ending in a newline.

import util from 'node:util';

export const INSPECT_OPTIONS = Object.freeze({
  depth: Infinity,
  maxArrayLength: Infinity,
  maxStringLength: Infinity,
  colors: false,
});

export function renderValue(value) {
  return typeof value === 'string' ? value : util.inspect(value, INSPECT_OPTIONS);
}

// `emitText(text)` receives the rendered group. If formatting an argument throws, the arguments
// rendered before it are still emitted, then the error propagates to the program.
export function createInspect(emitText) {
  return function inspect(...values) {
    const parts = [];
    try {
      for (const value of values) parts.push(renderValue(value));
    } catch (error) {
      if (parts.length > 0) emitText(`${parts.join(' ')}\n`);
      throw error;
    }
    emitText(`${parts.join(' ')}\n`);
  };
}
