#!/usr/bin/env bash
# Runs every go fuzz target of the module for FUZZTIME (default 10s) each.
#
# Go 1.26's fuzz coordinator can fail a target with a bare "context deadline exceeded" when
# -fuzztime runs out (a race between the deadline and its workers, go.dev/issue/75804; fixed in
# Go 1.27). A real finding always writes a reproducer under testdata/fuzz/<target>. So when a
# target fails with that bare message and wrote nothing, it runs again with a count budget
# (FUZZEXECS, default 100000x), which sets no deadline and so cannot meet the race; that run's
# result is the target's result.
#
# Every input that widens coverage is minimized for up to FUZZMINIMIZETIME (default 2s; Go's
# own default is 60s): in a target whose runs take milliseconds (league/replay's FuzzLog
# reads a whole league's log), one minimization took a 10s budget whole, and 3 minutes ran
# 1262 inputs where 2s runs some 40000 a minute. A failing input is still written, minimized
# for as long.
set -euo pipefail
cd "$(dirname "$0")/.."
fuzztime="${FUZZTIME:-10s}"
fuzzexecs="${FUZZEXECS:-100000x}"
fuzzminimize="${FUZZMINIMIZETIME:-2s}"
found=0
out="$(mktemp)"
trap 'rm -f "$out"' EXIT

# corpus lists the files of a target's corpus, one per line, so a new reproducer shows as a diff.
corpus() { ls "$1/testdata/fuzz/$2" 2>/dev/null || true; }

for pkg in $(go list ./...); do
  dir="$(go list -f '{{.Dir}}' "$pkg")"
  for name in $(go test -list '^Fuzz' "$pkg" | grep '^Fuzz' || true); do
    found=$((found+1))
    echo "fuzz $name ($pkg) for $fuzztime"
    before="$(corpus "$dir" "$name")"
    if go test -run '^$' -fuzz "^${name}\$" -fuzztime "$fuzztime" -fuzzminimizetime "$fuzzminimize" "$pkg" 2>&1 | tee "$out"; then
      continue
    fi
    if [ "$(corpus "$dir" "$name")" != "$before" ] || grep -q 'Failing input written' "$out" \
      || ! grep -q '^    context deadline exceeded$' "$out"; then
      echo "fuzz $name: a real failure (see above)"
      exit 1
    fi
    echo "fuzz $name: the coordinator's deadline race (go.dev/issue/75804), no input written; again for $fuzzexecs"
    go test -run '^$' -fuzz "^${name}\$" -fuzztime "$fuzzexecs" -fuzzminimizetime "$fuzzminimize" "$pkg"
  done
done
echo "$found fuzz targets ran"
