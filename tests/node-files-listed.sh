#!/bin/sh
# Fails when the *.test.js files of DIR are not exactly the ones its meson.build lists (an unlisted
# file would never run). usage: node-files-listed.sh DIR FILE...
dir=$1
shift
listed=$(printf '%s\n' "$@" | sort)
present=$(cd "$dir" && ls ./*.test.js | sed 's|^\./||' | sort)
[ "$listed" = "$present" ] && exit 0
printf 'meson.build of %s lists:\n%s\nthe directory holds:\n%s\n' "$dir" "$listed" "$present" >&2
exit 1
