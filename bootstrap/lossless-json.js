// Lossless JSON encoding: a value is accepted only if JSON.parse(text) gives back an equal value.
// Everything JSON.stringify would silently drop, coerce or mangle is rejected with a message that
// names the offending path ("result.a[2] is NaN"), because the host forwards values to a model
// that must not see a different value than the program produced.

import { types } from 'node:util';

// The deepest nesting of arrays and objects a value sent to the host may have (PROTOCOL.md). The
// host parses frames with a 512-level bound; a result or call frame wraps its value in at most two
// levels, so every value the child accepts fits, and deeper ones fail here, in the program's
// terms, instead of as a protocol failure of the whole process.
export const MAX_VALUE_DEPTH = 500;

export class LossyValueError extends Error {
  constructor(path, problem) {
    super(`${path} ${problem}`);
    this.name = 'LossyValueError';
    this.path = path;
  }
}

const IDENTIFIER = /^[A-Za-z_$][A-Za-z0-9_$]*$/;

function memberPath(path, key) {
  return IDENTIFIER.test(key) ? `${path}.${key}` : `${path}[${JSON.stringify(key)}]`;
}

function encodeString(value, path) {
  // JSON.stringify escapes lone surrogates, but they are not valid UTF-8 for the host.
  if (!value.isWellFormed()) {
    throw new LossyValueError(path, 'contains a lone surrogate');
  }
  return JSON.stringify(value);
}

function encodeNumber(value, path) {
  if (Number.isNaN(value)) throw new LossyValueError(path, 'is NaN');
  if (value === Infinity) throw new LossyValueError(path, 'is Infinity');
  if (value === -Infinity) throw new LossyValueError(path, 'is -Infinity');
  if (Object.is(value, -0)) throw new LossyValueError(path, 'is -0');
  return JSON.stringify(value);
}

function describeObject(value) {
  if (typeof value === 'function') return 'a function';
  if (types.isProxy(value)) return 'a Proxy';
  if (types.isBoxedPrimitive(value)) return `a boxed primitive (${Object.prototype.toString.call(value)})`;
  let ctor;
  try {
    ctor = Object.getPrototypeOf(value)?.constructor?.name;
  } catch {
    ctor = undefined;
  }
  return `a ${typeof ctor === 'string' && ctor ? ctor : 'non-plain'} instance (only plain objects and arrays are JSON)`;
}

// Object.prototype and Array.prototype of every realm whose values count as plain data: this
// one, plus the vm contexts evaluators register (their literals have the context's intrinsics).
const plainObjectPrototypes = new WeakSet([Object.prototype]);
const plainArrayPrototypes = new WeakSet([Array.prototype]);

// Accepts plain objects and arrays created in another realm (a vm context). Pass the realm's
// intrinsics as captured before any program ran there.
export function registerPlainRealm({ objectPrototype, arrayPrototype }) {
  plainObjectPrototypes.add(objectPrototype);
  plainArrayPrototypes.add(arrayPrototype);
}

function isPlainObject(value) {
  const proto = Object.getPrototypeOf(value);
  return proto === null || plainObjectPrototypes.has(proto);
}

// Reads a property the way JSON.stringify would (getters run), reporting a throwing getter.
function readProperty(object, key, path) {
  try {
    return object[key];
  } catch (error) {
    let detail;
    try {
      detail = error instanceof Error ? error.message : String(error);
    } catch {
      detail = 'unknown error';
    }
    throw new LossyValueError(path, `could not be read: ${detail}`);
  }
}

function encodeArray(value, path, context) {
  const keys = Reflect.ownKeys(value);
  for (const key of keys) {
    if (typeof key === 'symbol') throw new LossyValueError(path, 'has a symbol-keyed property');
    if (key !== 'length' && !(String(Number(key)) === key && Number(key) >= 0)) {
      throw new LossyValueError(path, `has a non-index property ${JSON.stringify(key)}`);
    }
  }
  const parts = [];
  for (let i = 0; i < value.length; i++) {
    const itemPath = `${path}[${i}]`;
    if (!Object.prototype.hasOwnProperty.call(value, i)) {
      throw new LossyValueError(itemPath, 'is a hole in a sparse array');
    }
    parts.push(encodeValue(readProperty(value, i, itemPath), itemPath, context));
  }
  return `[${parts.join(',')}]`;
}

function encodeObject(value, path, context) {
  const parts = [];
  for (const key of Reflect.ownKeys(value)) {
    if (typeof key === 'symbol') throw new LossyValueError(path, `has a symbol-keyed property ${String(key)}`);
    const descriptor = Object.getOwnPropertyDescriptor(value, key);
    // JSON.stringify skips non-enumerable properties, so they would vanish.
    if (!descriptor.enumerable) {
      throw new LossyValueError(memberPath(path, key), 'is a non-enumerable property');
    }
    const keyPath = memberPath(path, key);
    const keyText = encodeString(key, `${keyPath} (property name)`);
    parts.push(`${keyText}:${encodeValue(readProperty(value, key, keyPath), keyPath, context)}`);
  }
  return `{${parts.join(',')}}`;
}

// context: { root, ancestors (the containers being encoded, for cycles) }
function encodeValue(value, path, context) {
  switch (typeof value) {
    case 'string':
      return encodeString(value, path);
    case 'number':
      return encodeNumber(value, path);
    case 'boolean':
      return value ? 'true' : 'false';
    case 'undefined':
      throw new LossyValueError(path, 'is undefined');
    case 'bigint':
      throw new LossyValueError(path, 'is a BigInt');
    case 'symbol':
      throw new LossyValueError(path, 'is a symbol');
    case 'function':
      throw new LossyValueError(path, 'is a function');
    default:
      break;
  }
  if (value === null) return 'null';
  if (types.isProxy(value)) throw new LossyValueError(path, 'is a Proxy');
  const { ancestors } = context;
  if (ancestors.has(value)) throw new LossyValueError(path, 'is a circular reference');
  const isArray = Array.isArray(value) && plainArrayPrototypes.has(Object.getPrototypeOf(value));
  if (!isArray && !isPlainObject(value)) throw new LossyValueError(path, `is ${describeObject(value)}`);
  if (ancestors.size >= MAX_VALUE_DEPTH) {
    // The path of the offending level would be hundreds of steps long: name the value instead.
    throw new LossyValueError(context.root, `nests arrays and objects deeper than ${MAX_VALUE_DEPTH} levels (the limit for values)`);
  }
  ancestors.add(value);
  try {
    return isArray ? encodeArray(value, path, context) : encodeObject(value, path, context);
  } finally {
    ancestors.delete(value);
  }
}

// Returns the JSON text of `value`, or throws LossyValueError naming the first lossy path.
// `root` names the value in messages ("result", "args[0]").
export function encodeLosslessJson(value, root = 'value') {
  return encodeValue(value, root, { root, ancestors: new Set() });
}
