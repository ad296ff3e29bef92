#!/usr/bin/env bash
# Runs every Go fuzz target in the module for a short time each (default 10s).
set -euo pipefail
cd "$(dirname "$0")/.."
t=${1:-10s}
for pkg in $(go list ./...); do
  dir=$(go list -f '{{.Dir}}' "$pkg")
  for f in $(grep -lE '^func Fuzz[A-Za-z0-9_]*\(f \*testing\.F\)' "$dir"/*_test.go 2>/dev/null || true); do
    for name in $(grep -oE '^func Fuzz[A-Za-z0-9_]*' "$f" | sed 's/^func //'); do
      echo "fuzz $pkg $name ($t)"
      go test "$pkg" -run '^$' -fuzz "^${name}\$" -fuzztime "$t"
    done
  done
done
