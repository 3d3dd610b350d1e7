#!/usr/bin/env bash
# Runs every go fuzz target of the module for FUZZTIME (default 10s) each.
set -euo pipefail
cd "$(dirname "$0")/.."
fuzztime="${FUZZTIME:-10s}"
found=0
for pkg in $(go list ./...); do
  for name in $(go test -list '^Fuzz' "$pkg" | grep '^Fuzz' || true); do
    found=$((found+1))
    echo "fuzz $name ($pkg) for $fuzztime"
    go test -run '^$' -fuzz "^${name}\$" -fuzztime "$fuzztime" "$pkg"
  done
done
echo "$found fuzz targets ran"
