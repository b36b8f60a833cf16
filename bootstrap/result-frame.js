// Turns a run's outcome into the JSON text of its terminal `result` frame, within the message
// limit. A completion too large for one frame becomes invalid-output (frames cannot be split);
// an oversized error message is shortened, since the diagnostic matters more than its tail.

import { encodeLosslessJson, LossyValueError } from './lossless-json.js';

const TRUNCATION_MARK = '\n... [message truncated]';

// outcome: { ok: true, value, discard } | { ok: false, kind, message }
export function buildResultFrame(runId, outcome, maxBytes) {
  if (outcome.ok) {
    if (outcome.discard || outcome.value === undefined) {
      return `{"type":"result","run":${runId},"ok":true}`;
    }
    let valueJson;
    try {
      valueJson = encodeLosslessJson(outcome.value, 'result');
    } catch (error) {
      const message = error instanceof LossyValueError ? error.message : `result could not be encoded: ${String(error)}`;
      return errorFrame(runId, 'invalid-output', message, maxBytes);
    }
    const frame = `{"type":"result","run":${runId},"ok":true,"value":${valueJson}}`;
    if (Buffer.byteLength(frame) <= maxBytes) return frame;
    return errorFrame(
      runId,
      'invalid-output',
      `result is ${Buffer.byteLength(valueJson)} bytes of JSON, more than the ${maxBytes}-byte control message limit`,
      maxBytes,
    );
  }
  return errorFrame(runId, outcome.kind, outcome.message, maxBytes);
}

function errorFrame(runId, kind, message, maxBytes) {
  const frameFor = (text) =>
    `{"type":"result","run":${runId},"ok":false,"error":{"kind":${JSON.stringify(kind)},"message":${JSON.stringify(text)}}}`;
  const wellFormed = message.toWellFormed();
  const full = frameFor(wellFormed);
  if (Buffer.byteLength(full) <= maxBytes) return full;
  // Binary search for the longest prefix that fits together with the truncation mark.
  let low = 0;
  let high = wellFormed.length;
  while (low < high) {
    const mid = Math.ceil((low + high) / 2);
    if (Buffer.byteLength(frameFor(wellFormed.slice(0, mid).toWellFormed() + TRUNCATION_MARK)) <= maxBytes) {
      low = mid;
    } else {
      high = mid - 1;
    }
  }
  return frameFor(wellFormed.slice(0, low).toWellFormed() + TRUNCATION_MARK);
}
