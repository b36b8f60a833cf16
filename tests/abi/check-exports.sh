#!/bin/sh
# Fails unless the shared object's only defined dynamic symbol is $2 (default dsh_provider_entry).
set -eu
symbols=$(nm -D --defined-only "$1" | awk '{print $3}' | sort)
echo "defined dynamic symbols: $symbols"
[ "$symbols" = "${2:-dsh_provider_entry}" ]
