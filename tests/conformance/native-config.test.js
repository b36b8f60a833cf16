// Load-time checks of dsh-native-bindings rows through the real dsh: `dsh config validate` and
// `dsh headless` name the row, the field and its line:column for every problem.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { DSH, tempDir } from './harness.js';
import { LIBRARY, nativePatch, FUNCTIONS } from './native-fixture.js';

const ROW = "row 'n' (dsh-native-bindings)";

/** Writes one full native row (YAML flow style, one key per line) and validates it. */
function validate(config) {
  const lines = ['- id: n', '  name: dsh-native-bindings', '  config:'];
  for (const [key, value] of Object.entries({ library: LIBRARY, ...config })) lines.push(`    ${key}: ${JSON.stringify(value)}`);
  const file = join(tempDir('dsh-native-cfg-'), 'row.yaml');
  writeFileSync(file, lines.join('\n') + '\n');
  const r = spawnSync(DSH, ['config', 'validate', file], { encoding: 'utf8' });
  return { ...r, file, text: lines, lines: r.stderr.split('\n').filter((l) => l.startsWith(file)).map((l) => l.slice(file.length + 1)) };
}

/** "line:column" of the n-th occurrence of needle in the written row (what a diagnostic must point at). */
function at(r, needle, n = 0) {
  for (let i = 0; i < r.text.length; i++) {
    let from = 0;
    for (;;) {
      const col = r.text[i].indexOf(needle, from);
      if (col < 0) break;
      if (n-- === 0) return `${i + 1}:${col + 1}`;
      from = col + 1;
    }
  }
  throw new Error(`${needle} is not in the row`);
}

const ok = (name, fn = FUNCTIONS.hypot) => ({ [name]: fn });

test('a valid row validates (control for every case below)', () => {
  const r = validate({ global: 'nx', functions: FUNCTIONS });
  assert.equal(r.status, 0, r.stderr);
  assert.equal(r.stdout, `${r.file}: valid\n`);
});

test('a library that does not open', () => {
  const r = validate({ library: '/nonexistent/libnope.so', global: 'nx', functions: ok('hypot') });
  assert.equal(r.status, 1);
  assert.deepEqual(r.lines, [`${at(r, '"/nonexistent')}: ${ROW}: library: /nonexistent/libnope.so: cannot open shared object file: No such file or directory`]);
});

test('a symbol or a free function the library lacks', () => {
  const r = validate({ global: 'nx', functions: {
    a: { symbol: 'nx_nope', returns: 'double' },
    greet: { ...FUNCTIONS.greet, free: 'nx_release' },
    nx_absent: { returns: 'double' } } }); // the symbol defaults to the binding name
  assert.equal(r.status, 1);
  assert.deepEqual(r.lines, [
    `${at(r, '"nx_nope"')}: ${ROW}: functions.a.symbol: no symbol "nx_nope" in ${LIBRARY}`,
    `${at(r, '"nx_release"')}: ${ROW}: functions.greet.free: no symbol "nx_release" in ${LIBRARY}`,
    `${at(r, '"nx_absent"')}: ${ROW}: functions.nx_absent.symbol: no symbol "nx_absent" in ${LIBRARY}`,
  ]);
});

test('unknown argument and return types', () => {
  const r = validate({ global: 'nx', functions: {
    a: { symbol: 'nx_hypot', returns: 'int128' },
    b: { symbol: 'nx_hypot', returns: 'double', args: [{ name: 'x', type: 'void' }, { name: 'y', type: 'char*' }] } } });
  assert.equal(r.status, 1);
  const types = 'bool, int8, int16, int32, int64, uint8, uint16, uint32, uint64, float, double, string, json';
  assert.deepEqual(r.lines, [
    `${at(r, '"int128"')}: ${ROW}: functions.a.returns: string "int128" is not one of void, ${types}`,
    `${at(r, '"void"')}: ${ROW}: functions.b.args[0].type: string "void" is not one of ${types}`,
    `${at(r, '"char*"')}: ${ROW}: functions.b.args[1].type: string "char*" is not one of ${types}`,
  ]);
});

test('a string or json return needs a rule for its buffer: free or borrowed, not both, and only for text', () => {
  const r = validate({ global: 'nx', functions: {
    info: { symbol: 'nx_info_json', returns: 'json', args: [{ name: 'query', type: 'json' }] },
    greet: { symbol: 'nx_greet', returns: 'string', args: [{ name: 'name', type: 'string' }] },
    both: { symbol: 'nx_static_json', returns: 'json', free: 'nx_free', borrowed: true },
    count: { symbol: 'nx_count', returns: 'uint64', free: 'nx_free' },
    live: { symbol: 'nx_live_blocks', returns: 'int64', borrowed: true } } });
  assert.equal(r.status, 1);
  assert.deepEqual(r.lines, [
    `${at(r, '"json"')}: ${ROW}: functions.info.returns: a json return needs \`free: SYMBOL\` or \`borrowed: true\``,
    `${at(r, '"string"')}: ${ROW}: functions.greet.returns: a string return needs \`free: SYMBOL\` or \`borrowed: true\``,
    `${at(r, 'true', 0)}: ${ROW}: functions.both.borrowed: \`borrowed: true\` and \`free\` exclude each other`,
    `${at(r, '"nx_free"', 1)}: ${ROW}: functions.count.free: only a string or json return is freed or borrowed (this one is uint64)`,
    `${at(r, 'true', 1)}: ${ROW}: functions.live.borrowed: only a string or json return is freed or borrowed (this one is int64)`,
  ]);
});

test('namespace, function, argument and error class names follow the portable binding-name rules', () => {
  const ID = 'is not an identifier (ASCII letters, digits and _, not starting with a digit)';
  for (const [global, why] of [['process', 'is a global the runtime defines'], ['inspect', 'is a global the runtime defines'],
                               ['__builtins__', 'is a global the runtime defines'], ['class', 'is a reserved word in JavaScript or Python'],
                               ['lambda', 'is a reserved word in JavaScript or Python'], ['__nx__', 'is a __dunder__ name, reserved by Python'],
                               ['tools', "is the host's demo namespace"], ['2fast', ID], ['my-lib', ID], ['nx$', ID]]) {
    const r = validate({ global, functions: ok('hypot', FUNCTIONS.hypot) });
    assert.equal(r.status, 1, global);
    assert.deepEqual(r.lines, [`${at(r, `"${global}"`)}: ${ROW}: global: "${global}" ${why}`]);
  }
  const r = validate({ global: 'nx', errorClass: 'Native Error', functions: {
    'hypot-2': FUNCTIONS.hypot,
    delete: { symbol: 'nx_reset', returns: 'void' },
    message: { symbol: 'nx_reset', returns: 'void' },
    add: { symbol: 'nx_add_int32', returns: 'int32', args: [{ name: 'a', type: 'int32' }, { name: 'a', type: 'int32' }] },
    len: { symbol: 'nx_length', returns: 'uint64', args: [{ name: 'the text', type: 'string' }] } } });
  assert.equal(r.status, 1);
  assert.deepEqual(r.lines, [
    `${at(r, '"Native Error"')}: ${ROW}: errorClass: "Native Error" ${ID}`,
    `${at(r, '"hypot-2"')}: ${ROW}: functions.hypot-2: "hypot-2" ${ID}`,
    `${at(r, '"delete"')}: ${ROW}: functions.delete: "delete" is a reserved word in JavaScript or Python`,
    `${at(r, '"message"')}: ${ROW}: functions.message: "message" is a member of error objects`,
    `${at(r, '"a"', 1)}: ${ROW}: functions.add.args[1].name: argument "a" is declared twice`,
    `${at(r, '"the text"')}: ${ROW}: functions.len.args[0].name: "the text" ${ID}`,
  ]);
  // Control: argument names are properties, not bindings, so `name` and `message` are fine there.
  const fine = validate({ global: 'nx', errorClass: 'NativeError', functions: {
    greet: FUNCTIONS.greet, len: { symbol: 'nx_length', returns: 'uint64', args: [{ name: 'message', type: 'string' }] } } });
  assert.equal(fine.status, 0, fine.stderr);
});

test('catalog shape errors: unknown fields, missing fields, no functions, bad keys', () => {
  let r = validate({ global: 'nx', functions: { a: { symbol: 'nx_hypot', retruns: 'double' } } });
  assert.deepEqual(r.lines, [`${at(r, '"retruns"')}: ${ROW}: functions.a.retruns: unknown field`,
    `${at(r, '{"symbol"')}: ${ROW}: functions.a.returns: required field missing`]);
  r = validate({ global: 'nx', functions: {} });
  assert.deepEqual(r.lines, [`${at(r, '{}')}: ${ROW}: functions: declares no function`]);
  r = validate({ global: 'nx', functions: { a: { returns: 'double', maxCallMs: 0, symbol: 'nx_hypot' } } });
  assert.deepEqual(r.lines, [`${at(r, '0,')}: ${ROW}: functions.a.maxCallMs: 0 is below the minimum 1`]);
  r = validate({ functions: ok('hypot') });
  assert.deepEqual(r.lines, [`${at(r, 'library')}: ${ROW}: global: required field missing`]);
});

test('two rows may not declare one namespace', () => {
  const file = join(tempDir('dsh-native-cfg-'), 'rows.yaml');
  writeFileSync(file, [0, 1].map((i) => `- id: r${i}\n  name: dsh-native-bindings\n  config: ${JSON.stringify({ library: LIBRARY, global: 'nx', functions: ok('hypot') })}\n`).join(''));
  const r = spawnSync(DSH, ['config', 'validate', file], { encoding: 'utf8' });
  assert.equal(r.status, 1);
  const col = `  config: ${JSON.stringify({ library: LIBRARY, global: 'nx' })}`.indexOf('"nx"') + 1;
  assert.equal(r.stderr, `${file}:6:${col}: row 'r1' (dsh-native-bindings): global: namespace "nx" is already declared by row 'r0'\ndsh: 1 invalid row\n`);
});

test('dsh headless refuses to load a composition with a broken native row', () => {
  const patch = nativePatch([{ id: 'n', config: { global: 'nx', functions: { a: { symbol: 'nx_nope', returns: 'void' } } } }]);
  const r = spawnSync(DSH, ['headless', '--patch', patch, '-e', 'return 1'], { encoding: 'utf8' });
  assert.equal(r.status, 2);
  assert.match(r.stderr, new RegExp(`^${patch.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}:4:\\d+: row 'n' \\(dsh-native-bindings\\): functions\\.a\\.symbol: no symbol "nx_nope" in `, 'm'));
  assert.equal(r.stdout, '');
});
