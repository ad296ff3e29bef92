#!/usr/bin/env bash
# Builds golangci-lint (v2) from the Go module proxy into bin/golangci-lint,
# only when missing or built at another version; bin/.versions records
# "golangci-lint VERSION" (hack/lib/versions.sh).
#
# Usage: hack/build-golangci-lint.sh   (GOLANGCI_LINT_VERSION overrides the pin)
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
bin="$root/bin"
. "$root/hack/lib/versions.sh"

version=${GOLANGCI_LINT_VERSION:-v2.15.0}
build_lock golangci-lint
if is_built golangci-lint "$version"; then
  exit 0
fi
echo "building golangci-lint $version into bin/ (cold: a few minutes on two cores)..."
start=$(date +%s)
GOBIN="$bin" GOFLAGS="${GOFLAGS:-} -trimpath" go install "github.com/golangci/golangci-lint/v2/cmd/golangci-lint@$version"
record golangci-lint "$version"
echo "built golangci-lint $version in $(( $(date +%s) - start ))s"
