#!/usr/bin/env bash
# Builds the Kubernetes control-plane binaries from the Go module proxy into bin/:
# etcd, kube-apiserver, kube-controller-manager and kube-scheduler, at the
# Kubernetes version that go.mod pins (k8s.io/api v0.X.Y -> k8s.io/kubernetes v1.X.Y).
#
# Usage: hack/build-control-plane.sh [all|envtest|node]
#   envtest: only etcd and kube-apiserver (what controller tests need)
#   all:     the four components (what the local cluster needs; default)
#   node:    kubelet and kube-proxy, the node components of a real node (same
#            module, same version)
#
# A binary is rebuilt only when it is missing or was built for another version
# (bin/.versions records what was built). A cold build takes 20+ minutes on two
# cores; the Go build cache makes later rebuilds much faster.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
what=${1:-all}

api_version=$(grep -E "^\s*(require\s+)?k8s.io/api\s+v" go.mod | head -1 | awk "{print \$NF}")
[ -n "$api_version" ] || { echo "build-control-plane: go.mod has no k8s.io/api requirement" >&2; exit 1; }
kube_version="v1.${api_version#v0.}"
etcd_version=${ETCD_VERSION:-v3.7.3}
bin="$root/bin"
work="$bin/.control-plane-build"
mkdir -p "$bin" "$work"
. "$root/hack/lib/versions.sh"
build_lock control-plane
need() { ! is_built "$1" "$2"; }

build_etcd() {
  need etcd "$etcd_version" || { echo "etcd $etcd_version: cached in bin/"; return; }
  echo "etcd $etcd_version: building from the module proxy (about 2 minutes with a cold Go build cache)..."
  local d="$work/etcd"; mkdir -p "$d"
  cat >"$d/go.mod" <<MOD
module repot.dev/build/etcd
go 1.26
MOD
  cat >"$d/tools.go" <<'GO'
//go:build tools

package tools

import _ "go.etcd.io/etcd/server/v3/etcdmain"
GO
  (cd "$d" && go get "go.etcd.io/etcd/server/v3@$etcd_version" >/dev/null 2>&1 && go mod tidy >/dev/null 2>&1 &&
    CGO_ENABLED=0 go build -trimpath -ldflags "-s -w" -o "$bin/etcd" go.etcd.io/etcd/server/v3)
  record etcd "$etcd_version"
  echo "etcd $etcd_version: done"
}

kube_module() {
  local d="$work/kubernetes"
  [ -f "$d/go.mod" ] && grep -q "k8s.io/kubernetes $kube_version" "$d/go.mod" && grep -q kubelet "$d/tools.go" && return
  mkdir -p "$d"
  echo "k8s.io/kubernetes $kube_version: resolving modules (staging modules pinned to $api_version)..."
  local modfile
  modfile=$(cd "$d" && go mod download -json "k8s.io/kubernetes@$kube_version" | awk -F'"' '$2=="GoMod"{print $4}')
  {
    echo "module repot.dev/build/kubernetes"
    echo "go 1.26"
    echo "require k8s.io/kubernetes $kube_version"
    echo "replace ("
    grep -E '=> \./staging/src/' "$modfile" | awk -v v="$api_version" '{print "\t" $1 " => " $1 " " v}'
    echo ")"
  } >"$d/go.mod"
  cat >"$d/tools.go" <<'GO'
//go:build tools

package tools

import (
	_ "k8s.io/kubernetes/cmd/kube-apiserver/app"
	_ "k8s.io/kubernetes/cmd/kube-controller-manager/app"
	_ "k8s.io/kubernetes/cmd/kube-scheduler/app"
	_ "k8s.io/kubernetes/cmd/kubelet/app"
	_ "k8s.io/kubernetes/cmd/kube-proxy/app"
)
GO
  (cd "$d" && go mod tidy >/dev/null)
}

build_kube() {
  local name=$1 minutes=$2
  need "$name" "$kube_version" || { echo "$name $kube_version: cached in bin/"; return; }
  kube_module
  echo "$name $kube_version: building (about $minutes minutes with a cold Go build cache on two cores, seconds with a warm one; progress is quiet)..."
  local major=${kube_version#v}; major=${major%%.*}
  local minor=${kube_version#v*.}; minor=${minor%%.*}
  local pkg=k8s.io/component-base/version
  (cd "$work/kubernetes" && CGO_ENABLED=0 go build -trimpath \
    -ldflags "-s -w -X $pkg.gitVersion=$kube_version -X $pkg.gitMajor=$major -X $pkg.gitMinor=$minor -X $pkg.gitTreeState=clean" \
    -o "$bin/$name" "k8s.io/kubernetes/cmd/$name")
  record "$name" "$kube_version"
  echo "$name $kube_version: done"
}

start=$(date +%s)
if [ "$what" = node ]; then
  build_kube kubelet 10
  build_kube kube-proxy 4
  echo "node components ready in bin/ after $(( $(date +%s) - start ))s"
  exit 0
fi
build_etcd
build_kube kube-apiserver 13
if [ "$what" = all ]; then
  build_kube kube-controller-manager 6
  build_kube kube-scheduler 4
fi
echo "control plane ($what) ready in bin/ after $(( $(date +%s) - start ))s"
