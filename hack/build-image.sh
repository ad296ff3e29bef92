#!/usr/bin/env bash
# Builds the project image from the project's own Dockerfile with buildah (no
# Docker engine needed), with --pull=never.
#
# No container registry is reachable here, so the Dockerfile's two public base
# images are replaced by LOCAL STAND-INS under the same names, made once and
# kept in buildah's image store (/var/lib/containers), like the Go build cache:
#   docker.io/library/debian:bookworm-slim  debootstrap --variant=minbase bookworm
#   docker.io/library/golang:1.26-bookworm  that, plus gcc, libc6-dev, binutils,
#                                           ca-certificates, git, and this
#                                           machine's Go toolchain in /usr/local/go
#                                           and its CA bundle (where HTTPS to the
#                                           module proxy goes through a proxy with
#                                           its own CA, the build stage needs it)
# Each carries the label dev.repot.stand-in with a key of its recipe; it is
# remade only when the key changes (another Go version, another recipe). A
# cold run (debootstrap and apt) takes about 5 minutes; warm, seconds.
# Where the real images can be pulled, set STAND_INS=no to use them instead.
#
# Usage: hack/build-image.sh [bases|image]   (default: image, which makes the bases first)
# Env:   IMG (repot-operator:dev), DEBIAN_MIRROR, STAND_INS (yes|no), BUILDAH (buildah),
#        SHARE_GO_CACHE (yes|no: mount the host's Go build and module caches)
# Needs: root, buildah and debootstrap (Debian's packages).
set -euo pipefail
cd "$(dirname "$0")/.."
what=${1:-image}
IMG=${IMG:-repot-operator:dev}
BUILDAH=${BUILDAH:-buildah}
mirror=${DEBIAN_MIRROR:-http://deb.debian.org/debian}
suite=bookworm
label=dev.repot.stand-in
cache=bin/image-cache

die() { echo "build-image: $*" >&2; exit 1; }
# One build at a time (CI builds ahead in the background): a second waits.
mkdir -p bin
exec 9>bin/.image.lock
flock 9
command -v "$BUILDAH" >/dev/null || die "buildah is not installed (apt-get install buildah)"

# The Go version of the golang stand-in: the Dockerfile's tag (1.26) must be
# the minor version of the toolchain copied in.
go_version=$(go env GOVERSION)           # go1.26.8
go_root=$(go env GOROOT)
want_minor=$(sed -nE 's/^FROM golang:([0-9]+\.[0-9]+)-bookworm.*/\1/p' Dockerfile | head -1)
debian_ref=docker.io/library/debian:$suite-slim
golang_ref=docker.io/library/golang:$want_minor-$suite

# recipe keys: change the version suffix when the recipe below changes.
debian_key="debian-$suite-minbase-v1"
golang_key="$debian_key+gcc,libc6-dev,binutils,ca-certificates,git+$go_version+host-ca-v2"

has_stand_in() { # REF KEY
  [ "$("$BUILDAH" inspect --type image --format "{{index .OCIv1.Config.Labels \"$label\"}}" "$1" 2>/dev/null)" = "$2" ]
}

make_debian() {
  if has_stand_in "$debian_ref" "$debian_key"; then echo "stand-in $debian_ref: cached ($debian_key)"; return; fi
  command -v debootstrap >/dev/null || die "debootstrap is not installed (apt-get install debootstrap)"
  [ "$(id -u)" = 0 ] || die "debootstrap needs root"
  echo "stand-in $debian_ref: debootstrap $suite from $mirror (about 3 minutes)..."
  local root="$cache/rootfs-$suite-minbase"
  rm -rf "$root"; mkdir -p "$cache"
  debootstrap --variant=minbase "$suite" "$root" "$mirror" >"$cache/debootstrap.log" 2>&1 ||
    { tail -20 "$cache/debootstrap.log" >&2; die "debootstrap failed (log: $cache/debootstrap.log)"; }
  # apt sources as the published image has them.
  rm -f "$root/etc/apt/sources.list"
  cat >"$root/etc/apt/sources.list.d/debian.sources" <<EOF
Types: deb
URIs: $mirror
Suites: $suite $suite-updates
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg

Types: deb
URIs: ${mirror%/debian}/debian-security
Suites: $suite-security
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
EOF
  rm -rf "$root"/var/cache/apt/archives/*.deb "$root"/var/lib/apt/lists/*
  local ctr mnt
  ctr=$("$BUILDAH" from scratch)
  mnt=$("$BUILDAH" mount "$ctr")
  # Device nodes and kernel file systems come from the runtime, not the image.
  tar -C "$root" --exclude=./dev/* --exclude=./proc/* --exclude=./sys/* -cf - . | tar -C "$mnt" -xpf -
  "$BUILDAH" umount "$ctr" >/dev/null
  "$BUILDAH" config --env PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin --cmd bash \
    --label "$label=$debian_key" \
    --label "org.opencontainers.image.description=LOCAL STAND-IN for $debian_ref, made by hack/build-image.sh from debootstrap; not the published image" \
    "$ctr"
  "$BUILDAH" commit --rm -q "$ctr" "$debian_ref" >/dev/null
  rm -rf "$root"
  echo "stand-in $debian_ref: made"
}

make_golang() {
  if has_stand_in "$golang_ref" "$golang_key"; then echo "stand-in $golang_ref: cached ($golang_key)"; return; fi
  [ "${go_version#go$want_minor}" != "$go_version" ] ||
    die "the Dockerfile builds with Go $want_minor but this machine has $go_version: the stand-in copies this machine's toolchain"
  echo "stand-in $golang_ref: $debian_ref + build tools + $go_version..."
  local ctr mnt
  ctr=$("$BUILDAH" from --pull=never "$debian_ref")
  "$BUILDAH" run --network host "$ctr" -- sh -c 'apt-get update -q && DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends gcc libc6-dev binutils ca-certificates git >/dev/null && rm -rf /var/lib/apt/lists/*'
  mnt=$("$BUILDAH" mount "$ctr")
  mkdir -p "$mnt/usr/local/go" "$mnt/go/bin"
  tar -C "$go_root" --exclude=./pkg/obj --exclude=./.git -cf - . | tar -C "$mnt/usr/local/go" -xf -
  local ca=${SSL_CERT_FILE:-/etc/ssl/certs/ca-certificates.crt}
  [ -f "$ca" ] && cp "$ca" "$mnt/etc/ssl/certs/ca-certificates.crt"
  "$BUILDAH" umount "$ctr" >/dev/null
  "$BUILDAH" config --env GOLANG_VERSION="${go_version#go}" --env GOTOOLCHAIN=local --env GOPATH=/go \
    --env PATH=/go/bin:/usr/local/go/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
    --workingdir /go --label "$label=$golang_key" \
    --label "org.opencontainers.image.description=LOCAL STAND-IN for $golang_ref, made by hack/build-image.sh; not the published image" \
    "$ctr"
  "$BUILDAH" commit --rm -q "$ctr" "$golang_ref" >/dev/null
  echo "stand-in $golang_ref: made"
}

if [ "${STAND_INS:-yes}" = yes ]; then
  make_debian
  make_golang
fi
[ "$what" = bases ] && exit 0

version=$(git describe --tags --always --dirty 2>/dev/null || true)
revision=$(git rev-parse HEAD 2>/dev/null || true)
git diff --quiet HEAD 2>/dev/null || revision="$revision-dirty"
pull=--pull=never
[ "${STAND_INS:-yes}" = yes ] || pull=--pull
# The host's Go caches, mounted into the build stage (SHARE_GO_CACHE=no: the
# Dockerfile's own cache mounts): the module cache saves the downloads, and
# the build cache the compile of every package the host already compiled with
# the same toolchain (the golang stand-in carries this machine's) and flags
# (make's -trimpath and CGO_CFLAGS, the Dockerfile's), which cold is most of
# the image's build time.
share=()
if [ "${SHARE_GO_CACHE:-yes}" = yes ]; then
  gocache=$(go env GOCACHE) gomodcache=$(go env GOMODCACHE)
  mkdir -p "$gocache" "$gomodcache"
  share=(--volume "$gocache:/host-go-build" --build-arg GOCACHE=/host-go-build
    --volume "$gomodcache:/host-go-mod" --build-arg GOMODCACHE=/host-go-mod)
fi
echo "image $IMG: buildah bud $pull (the project's Dockerfile)..."
"$BUILDAH" bud $pull --layers --network host -f Dockerfile -t "$IMG" "${share[@]}" \
  --build-arg VERSION="$version" --build-arg REVISION="$revision" .
echo "image $IMG: built"
