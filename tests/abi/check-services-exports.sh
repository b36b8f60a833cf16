#!/bin/sh
# Fails unless the symbols the services library exports (readelf --dyn-syms) are exactly the
# functions host-abi/ABI.md documents in its table of the section
# "The reference Linux services" (rows that start with | `dsh_name(`).
# Usage: check-services-exports.sh LIBRARY ABI.md
set -eu
# Every defined symbol but the version definition (an ABS entry named after the version node).
exported=$(readelf --dyn-syms -W "$1" | awk '$1 ~ /^[0-9]+:$/ && $7 != "UND" && $7 != "ABS" {sub(/@.*/, "", $8); print $8}' | sort)
documented=$(awk '/^## /{inside = ($0 == "## The reference Linux services")} inside' "$2" |
    sed -n 's/^| `\(dsh_[a-z_]*\)(.*/\1/p' | sort)
echo "exported:   $(echo $exported)"
echo "documented: $(echo $documented)"
[ -n "$exported" ] && [ "$exported" = "$documented" ]
