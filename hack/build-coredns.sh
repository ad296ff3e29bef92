#!/usr/bin/env bash
# Builds CoreDNS (github.com/coredns/coredns, the cluster DNS of kubeadm, kind
# and most clusters) from the Go module proxy into bin/coredns, inside its own
# module with its own pinned dependencies: the real node's cluster DNS.
# Rebuilt only when missing or built for another version (bin/.versions).
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
bin="$root/bin"
. "$root/hack/lib/versions.sh"
build_lock coredns
version=${COREDNS_VERSION:-v1.14.7}
if is_built coredns "$version"; then
  echo "coredns $version: cached in bin/"
  exit 0
fi
start=$(date +%s)
echo "coredns $version: fetching the module..."
dir=$(go mod download -json "github.com/coredns/coredns@$version" | awk -F'"' '$2=="Dir"{print $4}')
[ -d "$dir" ] || { echo "build-coredns: module github.com/coredns/coredns@$version not found" >&2; exit 1; }
(cd "$dir" && GOFLAGS=-mod=mod go mod download)
echo "coredns $version: building (several minutes with a cold Go build cache on two cores)..."
(cd "$dir" && GOFLAGS=-mod=mod CGO_ENABLED=0 go build -trimpath -ldflags "-s -w" -o "$bin/coredns" .)
record coredns "$version"
echo "coredns $version: done in $(( $(date +%s) - start ))s"
