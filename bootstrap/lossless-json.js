// Lossless JSON encoding: a value is accepted only if JSON.parse(text) gives back an equal value.
// Everything JSON.stringify would silently drop, coerce or mangle is rejected with a message that
// names the offending path ("result.a[2] is NaN"), because the host forwards values to a model
// that must not see a different value than the program produced.

import { types } from 'node:util';

// The deepest nesting of arrays and objects a value sent to the host may have (PROTOCOL.md). The
// pinned Node's own JSON.stringify gives up near 4,500 levels with its default stack, so every value
// the program could round-trip through JSON itself fits; the host passes values on as validated
// text with the same bound (common/dsh_json_strict.h, DSH_JSON_VALUE_MAX_DEPTH) and never recurses
// per level, and neither does this encoder (an explicit stack).
export const MAX_VALUE_DEPTH = 10000;

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

// The text of a value that is not an array or object, or undefined for a container that may be
// encoded (the checks in JSON.stringify's order: scalars, null, Proxy, cycle, plain, depth).
function encodeLeaf(value, path, context) {
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
    // The path of the offending level would be thousands of steps long: name the value instead.
    throw new LossyValueError(context.root, `nests arrays and objects deeper than ${MAX_VALUE_DEPTH} levels (the limit for values)`);
  }
  return undefined;
}

// An open array or object: what is left of it to encode.
function openContainer(value, path, context) {
  context.ancestors.add(value);
  if (Array.isArray(value) && plainArrayPrototypes.has(Object.getPrototypeOf(value))) {
    for (const key of Reflect.ownKeys(value)) {
      if (typeof key === 'symbol') throw new LossyValueError(path, 'has a symbol-keyed property');
      if (key !== 'length' && !(String(Number(key)) === key && Number(key) >= 0)) {
        throw new LossyValueError(path, `has a non-index property ${JSON.stringify(key)}`);
      }
    }
    return { value, path, isArray: true, index: 0, close: ']' };
  }
  return { value, path, isArray: false, keys: Reflect.ownKeys(value), index: 0, close: '}' };
}

// The next member of an open container as [text before it, its value, its path], or undefined
// when the container is done.
function nextMember(open) {
  const { value, path } = open;
  const i = open.index++;
  if (open.isArray) {
    if (i >= value.length) return undefined;
    const itemPath = `${path}[${i}]`;
    if (!Object.prototype.hasOwnProperty.call(value, i)) {
      throw new LossyValueError(itemPath, 'is a hole in a sparse array');
    }
    return [i ? ',' : '', readProperty(value, i, itemPath), itemPath];
  }
  if (i >= open.keys.length) return undefined;
  const key = open.keys[i];
  if (typeof key === 'symbol') throw new LossyValueError(path, `has a symbol-keyed property ${String(key)}`);
  const descriptor = Object.getOwnPropertyDescriptor(value, key);
  // JSON.stringify skips non-enumerable properties, so they would vanish.
  if (!descriptor.enumerable) {
    throw new LossyValueError(memberPath(path, key), 'is a non-enumerable property');
  }
  const keyPath = memberPath(path, key);
  const keyText = encodeString(key, `${keyPath} (property name)`);
  return [`${i ? ',' : ''}${keyText}:`, readProperty(value, key, keyPath), keyPath];
}

// Depth-first with an explicit stack of open containers: no call recursion per level. One piece
// per member (its separator, name and text, or an empty container whole), as few as the recursive
// form built, so a wide value costs no more heap than before.
function encodeValue(value, path, context) {
  const parts = [];
  const stack = [];
  let prefix = '';
  for (;;) {
    const leaf = encodeLeaf(value, path, context);
    if (leaf === undefined) {
      const open = openContainer(value, path, context);
      parts.push(prefix + (open.isArray ? '[' : '{'));
      stack.push(open);
    } else {
      parts.push(prefix + leaf);
    }
    let next;
    while (stack.length && !(next = nextMember(stack[stack.length - 1]))) {
      const done = stack.pop();
      context.ancestors.delete(done.value);
      if (done.index === 1 && parts.length) parts[parts.length - 1] += done.close; // empty: '[]'
      else parts.push(done.close);
    }
    if (!stack.length) return parts.join('');
    prefix = next[0];
    value = next[1];
    path = next[2];
  }
}

// Returns the JSON text of `value`, or throws LossyValueError naming the first lossy path.
// `root` names the value in messages ("result", "args[0]").
export function encodeLosslessJson(value, root = 'value') {
  return encodeValue(value, root, { root, ancestors: new Set() });
}
