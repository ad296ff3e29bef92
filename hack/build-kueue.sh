#!/usr/bin/env bash
# Builds the Kueue controller manager (sigs.k8s.io/kueue/cmd/kueue) from the Go
# module proxy into bin/kueue, at the version go.mod pins for sigs.k8s.io/kueue.
# Kueue is built inside its own module, with its own pinned dependencies, so the
# binary is exactly the released controller (only the container image is skipped).
#
# The binary is rebuilt only when it is missing or was built for another version
# (bin/.versions records what was built). A cold build takes several minutes on
# two cores; the Go build cache makes later rebuilds much faster.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
bin="$root/bin"
. "$root/hack/lib/versions.sh"
build_lock kueue

version=${KUEUE_VERSION:-$(awk '$1=="sigs.k8s.io/kueue"{print $2; exit} $1=="require" && $2=="sigs.k8s.io/kueue"{print $3; exit}' go.mod)}
[ -n "$version" ] || { echo "build-kueue: go.mod has no sigs.k8s.io/kueue requirement" >&2; exit 1; }

if is_built kueue "$version"; then
  echo "kueue $version: cached in bin/"
  exit 0
fi
start=$(date +%s)
echo "kueue $version: fetching the module..."
dir=$(go mod download -json "sigs.k8s.io/kueue@$version" | awk -F'"' '$2=="Dir"{print $4}')
[ -d "$dir" ] || { echo "build-kueue: module sigs.k8s.io/kueue@$version not found in the module cache" >&2; exit 1; }
echo "kueue $version: downloading its dependencies..."
(cd "$dir" && GOFLAGS=-mod=mod go mod download)
echo "kueue $version: building cmd/kueue (about 8 minutes with a cold Go build cache on two cores, seconds with a warm one; progress is quiet)..."
(cd "$dir" && GOFLAGS=-mod=mod CGO_ENABLED=0 go build -trimpath -ldflags "-s -w" -o "$bin/kueue.tmp" ./cmd/kueue)
mv "$bin/kueue.tmp" "$bin/kueue"
record kueue "$version"
echo "kueue $version: done in $(( $(date +%s) - start ))s"
