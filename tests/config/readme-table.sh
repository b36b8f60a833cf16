#!/bin/sh
# readme-table.sh GEN README [check|--update] [PROVIDER TAG]
# Fails when the table between the README's config-table markers differs from
# what GEN (config/gen-config-table) prints from catalog.yaml; --update rewrites it.
# PROVIDER TAG: another provider's table, between `config-table:begin TAG` markers.
set -eu
gen=$1 readme=$2 mode=${3:-check} provider=${4:-} tag=${5:+ $5}
begin="<!-- config-table:begin$tag -->"
end="<!-- config-table:end$tag -->"

for marker in "$begin" "$end"; do
    n=$(grep -cxF -- "$marker" "$readme" || true)
    if [ "$n" != 1 ]; then
        echo "$readme: want exactly one line '$marker', found $n" >&2
        exit 1
    fi
done

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
"$gen" ${provider:+"$provider"} >"$tmp/want"
awk -v b="$begin" -v e="$end" '$0 == e { inside = 0 } inside { print } $0 == b { inside = 1 }' \
    "$readme" >"$tmp/have"

if [ "$mode" = --update ]; then
    awk -v b="$begin" -v e="$end" -v t="$tmp/want" '
        $0 == b { print; while ((getline line < t) > 0) print line; skip = 1; next }
        $0 == e { skip = 0 }
        !skip { print }' "$readme" >"$tmp/new"
    cat "$tmp/new" >"$readme"
    echo "updated the configuration table in $readme"
    exit 0
fi

if ! diff -u "$tmp/have" "$tmp/want"; then
    echo "$readme: the configuration table differs from catalog.yaml (diff above: -README +catalog)." >&2
    echo "Regenerate it: meson compile -C build update-config-table" >&2
    exit 1
fi
