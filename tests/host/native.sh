#!/bin/bash
# dsh with a dsh-native-bindings row: every result-ownership path and many calls through the real
# host. Under the ASan build (tests/run-all.sh) a leak, double free or bad read in dsh or in the
# adapter fails this test at dsh's exit.
DSH=$(realpath "$1")
LIB=$2
. "$(dirname "$0")/lib.sh"
mkdir -p "$TMP/ws"
cd "$TMP/ws" || exit 1
cat >"$TMP/native.yaml" <<YAML
- insert:
  - id: example
    name: dsh-native-bindings
    config:
      library: $LIB
      global: nx
      functions:
        greet: {symbol: nx_greet, returns: string, free: nx_free, args: [{name: name, type: string}]}
        info: {symbol: nx_info_json, returns: json, free: nx_free, args: [{name: query, type: json}]}
        badUtf8: {symbol: nx_bad_utf8, returns: string, free: nx_free}
        badJson: {symbol: nx_bad_json, returns: json, free: nx_free}
        version: {symbol: nx_version, returns: string, borrowed: true}
        staticJson: {symbol: nx_static_json, returns: json, borrowed: true}
        int8: {symbol: nx_id_int8, returns: int8, args: [{name: v, type: int8}]}
        live: {symbol: nx_live_blocks, returns: int64}
YAML

run headless --patch "$TMP/native.yaml" -e '
  const settle = (p) => p.then(() => "ok", (e) => e.message);
  let n = 0;
  for (let i = 0; i < 500; i++) {
    n += (await nx.greet({ name: "x".repeat(i) })).length + (await nx.info({ query: { i, s: "é" } })).bytes;
    await settle(nx.badUtf8()); await settle(nx.badJson()); await settle(nx.int8({ v: 1000 }));
    await nx.version(); await nx.staticJson();
  }
  return [n, await nx.live(), await settle(nx.badJson())]'
expect_status 0 "native calls through dsh"
expect_out '^\[[0-9]+,0,"nx.badJson: the result is not strict JSON text \(UTF-8, no NaN or Infinity\)"\]$' \
    "every returned buffer was freed; rejected results too"

run config validate "$TMP/native.yaml"
expect_status 0 "config validate opens the library of an inserted native row"
expect_out "native.yaml: valid$" "valid"
sed -i 's/nx_greet/nx_gone/' "$TMP/native.yaml"
run headless --patch "$TMP/native.yaml" -e 'return 1'
expect_status 2 "a missing symbol stops the load"
expect_err "native.yaml:[0-9]+:[0-9]+: row 'example' \(dsh-native-bindings\): functions.greet.symbol: no symbol \"nx_gone\" in " \
    "the load names row, field and position"

finish
