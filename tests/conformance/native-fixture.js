// The example native library (examples/native) as dsh-native-bindings rows for the native tests.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ROOT, tempDir } from './harness.js';

export const LIBRARY = process.env.DSH_NATIVE_EXAMPLE ??
  join(ROOT, process.env.DSH_BUILD_DIR ?? 'build', 'examples/native/libdsh-native-example.so');

const id = (type) => ({ symbol: `nx_id_${type}`, returns: type, args: [{ name: 'v', type }] });

// Every function of the example library, by binding name.
export const FUNCTIONS = {
  hypot: { symbol: 'nx_hypot', returns: 'double', args: [{ name: 'x', type: 'double' }, { name: 'y', type: 'double' }] },
  negate: { symbol: 'nx_not', returns: 'bool', args: [{ name: 'value', type: 'bool' }] },
  int8: id('int8'), int16: id('int16'), int32: id('int32'), int64: id('int64'),
  uint8: id('uint8'), uint16: id('uint16'), uint32: id('uint32'), uint64: id('uint64'),
  float: id('float'), double: id('double'),
  add32: { symbol: 'nx_add_int32', returns: 'int32', args: [{ name: 'a', type: 'int32' }, { name: 'b', type: 'int32' }] },
  divide: { symbol: 'nx_divide', returns: 'double', args: [{ name: 'a', type: 'double' }, { name: 'b', type: 'double' }] },
  divideFloat: { symbol: 'nx_divide_float', returns: 'float', args: [{ name: 'a', type: 'float' }, { name: 'b', type: 'float' }] },
  negativeZero: { symbol: 'nx_negative_zero', returns: 'double' },
  mix: {
    symbol: 'nx_mix', returns: 'double',
    args: [['a', 'int8'], ['b', 'uint16'], ['c', 'int32'], ['d', 'int64'], ['e', 'float'], ['f', 'double'], ['g', 'bool'], ['h', 'uint8']]
      .map(([name, type]) => ({ name, type })),
  },
  crc: { symbol: 'nx_crc32_text', returns: 'uint32', args: [{ name: 'text', type: 'string' }] },
  length: { symbol: 'nx_length', returns: 'uint64', args: [{ name: 'text', type: 'string' }] },
  greet: { symbol: 'nx_greet', returns: 'string', free: 'nx_free', args: [{ name: 'name', type: 'string' }] },
  version: { symbol: 'nx_version', returns: 'string', borrowed: true },
  noText: { symbol: 'nx_no_text', returns: 'string', borrowed: true },
  badUtf8: { symbol: 'nx_bad_utf8', returns: 'string', free: 'nx_free' },
  info: { symbol: 'nx_info_json', returns: 'json', free: 'nx_free', args: [{ name: 'query', type: 'json' }] },
  staticJson: { symbol: 'nx_static_json', returns: 'json', borrowed: true },
  badJson: { symbol: 'nx_bad_json', returns: 'json', free: 'nx_free' },
  nanJson: { symbol: 'nx_nan_json', returns: 'json', free: 'nx_free' },
  noJson: { symbol: 'nx_no_json', returns: 'json', borrowed: true },
  live: { symbol: 'nx_live_blocks', returns: 'int64' },
  count: { symbol: 'nx_count', returns: 'uint64' },
  reset: { symbol: 'nx_reset', returns: 'void' },
  sleep: { symbol: 'nx_sleep_ms', returns: 'void', args: [{ name: 'ms', type: 'uint32' }] },
};

/** A patch layer inserting native rows [{id, config}] (config defaults: the example library). */
export function nativePatch(rows) {
  const lines = ['- insert:'];
  for (const row of rows) {
    const config = { library: LIBRARY, ...row.config };
    lines.push(`  - id: ${row.id}`, '    name: dsh-native-bindings', `    config: ${JSON.stringify(config)}`);
  }
  const file = join(tempDir('dsh-native-'), 'native.yaml');
  writeFileSync(file, lines.join('\n') + '\n');
  return file;
}

/** The standard row: namespace `nx` with every example function. */
export function examplePatch(extra = {}) {
  return nativePatch([{ id: 'example', config: { global: 'nx', functions: FUNCTIONS, ...extra } }]);
}

// Program prelude: settles a promise into its value or [error name, message, member].
export const SETTLE = `const settle = (p) => p.then((v) => ({ value: v }), (e) => [e.name, e.message, e.member ?? null]);\n`;
