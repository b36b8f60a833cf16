// The program-visible `inspect(...values)`: strings print raw, everything else through
// util.inspect without depth, array-length or string-length limits, so nothing the model asks
// to see is elided (undefined properties, Errors and cycles stay visible). One call is one text
// group ending in a newline. Registered Images the formatting reaches, directly or nested, render
// as `[Image <id> <w>x<h>]` and split the group there: the text before it, then an `image` entry,
// then the rest, all in argument order.

import buffer from 'node:buffer';
import { randomBytes } from 'node:crypto';
import util from 'node:util';
import { collectImages, imageLabel } from './images.js';

// Pinned, so util.inspect.defaultOptions set by a program cannot elide values or hide Images.
const INSPECT_OPTIONS = Object.freeze({
  depth: Infinity,
  maxArrayLength: Infinity,
  maxStringLength: Infinity,
  customInspect: true,
  colors: false,
});

// util.inspect without limits. Buffers preview only buffer.INSPECT_MAX_BYTES bytes (50 unless
// changed), a limit outside the options, lifted while formatting.
export function formatValue(value) {
  const saved = buffer.INSPECT_MAX_BYTES;
  buffer.INSPECT_MAX_BYTES = Infinity;
  try {
    return util.inspect(value, INSPECT_OPTIONS);
  } finally {
    buffer.INSPECT_MAX_BYTES = saved;
  }
}

// Formats one argument into pieces: strings (text) and Images, in order. A per-call random
// marker stands for each Image inside util.inspect's text, so program text cannot forge one.
// It is drawn when the formatting reaches the first Image: text made before that cannot hold it,
// and a value without Images never loads node:crypto (about 6 ms of a process's first inspect).
function renderPieces(value) {
  if (typeof value === 'string') return [value];
  let nonce = null;
  const images = [];
  const text = collectImages((image) => {
    nonce ??= randomBytes(9).toString('base64url');
    images.push(image);
    return `\uE000${nonce}:${images.length - 1}\uE001`;
  }, () => formatValue(value));
  if (images.length === 0) return [text];
  const pieces = [];
  const marker = new RegExp(`\uE000${nonce}:(\\d+)\uE001`, 'g');
  let last = 0;
  for (const match of text.matchAll(marker)) {
    const image = images[Number(match[1])];
    pieces.push(text.slice(last, match.index) + imageLabel(image), image);
    last = match.index + match[0].length;
  }
  pieces.push(text.slice(last));
  return pieces;
}

// `emitText(text)` receives text and `emitImage(image)` each Image, in order. If formatting an
// argument throws, the arguments rendered before it are still emitted, then the error propagates.
export function createInspect(emitText, emitImage = () => {}) {
  return function inspect(...values) {
    const pieces = [];
    const flush = () => {
      let text = '';
      for (const piece of pieces) {
        if (typeof piece === 'string') {
          text += piece;
          continue;
        }
        if (text !== '') emitText(text);
        text = '';
        emitImage(piece);
      }
      emitText(`${text}\n`);
    };
    try {
      values.forEach((value, i) => {
        const rendered = renderPieces(value);
        if (i > 0) pieces.push(' ');
        pieces.push(...rendered);
      });
    } catch (error) {
      // The failing argument's separator is dropped with it.
      if (pieces.at(-1) === ' ') pieces.pop();
      if (pieces.length > 0) flush();
      throw error;
    }
    flush();
  };
}
