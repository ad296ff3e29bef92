#!/usr/bin/env bash
# Runs every Go fuzz target in the module for a short time each (default 10s).
# Each package's coverage-instrumented test binary is built once
# (`go test -c -fuzz=.`) and run per target from the package's directory, as
# `go test -fuzz` does (which would relink it for every target): seed corpus
# from testdata/fuzz, generated corpus in $GOCACHE/fuzz/PACKAGE, a failing
# input written to testdata/fuzz/TARGET.
set -euo pipefail
cd "$(dirname "$0")/.."
t=${1:-10s}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fuzzcache="$(go env GOCACHE)/fuzz"
# run: the target $name of $pkg, with the test binary $bin, from $dir.
run() { (cd "$dir" && "$bin" -test.run='^$' -test.fuzz="^${name}\$" -test.fuzztime="$t" -test.timeout=10m -test.paniconexit0 -test.fuzzcachedir="$fuzzcache/$pkg" 2>&1); }
# deadline_only: a run's output is only the fuzzer's missed deadline, with
# no failing input written.
deadline_only() { grep -q 'context deadline exceeded' <<<"$1" && ! grep -q 'Failing input written' <<<"$1"; }
for pkg in $(go list ./...); do
  dir=$(go list -f '{{.Dir}}' "$pkg")
  names=()
  for f in $(grep -lE '^func Fuzz[A-Za-z0-9_]*\(f \*testing\.F\)' "$dir"/*_test.go 2>/dev/null || true); do
    for name in $(grep -oE '^func Fuzz[A-Za-z0-9_]*' "$f" | sed 's/^func //'); do names+=("$name"); done
  done
  [ ${#names[@]} -gt 0 ] || continue
  bin="$tmp/$(echo "$pkg" | tr / _).test"
  go test -c -fuzz=. -o "$bin" "$pkg"
  for name in "${names[@]}"; do
    echo "fuzz $pkg $name ($t)"
    # Go's fuzzer sometimes ends a short run with a bare "context deadline
    # exceeded" when a worker misses the deadline (more often on busy
    # cores: CI runs this beside the e2e suites); no input failed then
    # (none is written to testdata/fuzz). Such a run is tried once more,
    # and a second such miss is reported and not counted as a failure; a
    # real finding (a failing input written) or any other failure fails the
    # script.
    for try in 1 2; do
      if out=$(run); then
        echo "$out" | tail -n 3
        break
      fi
      echo "$out"
      deadline_only "$out" || exit 1
      if [ "$try" = 1 ]; then
        echo "fuzz $pkg $name: the fuzzer missed its own deadline (no failing input); trying once more"
      else
        echo "fuzz $pkg $name: WARNING: the fuzzer missed its deadline twice on busy cores; no input failed"
      fi
    done
  done
done
