#!/usr/bin/env bash
# Builds the local cluster's third-party binaries from the Go module proxy into
# bin/, all but Kueue in ONE Go module (bin/.cluster-build) with one `go build`:
#
#   etcd                     go.etcd.io/etcd/server/v3       $ETCD_VERSION
#   kube-apiserver, kube-controller-manager, kube-scheduler, kubelet, kube-proxy,
#   kubectl                  k8s.io/kubernetes/cmd/...       the Kubernetes version go.mod pins
#                                                            (k8s.io/api v0.X.Y -> v1.X.Y)
#   coredns                  CoreDNS's coremain with only the plugins the
#                            cluster's Corefile uses         $COREDNS_VERSION
#   kube-network-policies    sigs.k8s.io/kube-network-policies/cmd, with
#                            hack/netpol/xt-nfqueue.patch    $KUBE_NETWORK_POLICIES_VERSION
# and, in its own module (its release's go.mod), after them:
#   kueue                    sigs.k8s.io/kueue/cmd/kueue     the version go.mod pins
#   versitygw                github.com/versity/versitygw/cmd/versitygw
#                                                            $VERSITYGW_VERSION (the local
#                            cluster's S3 store and the artifact uploader's tests)
# and in the project's own module (go.mod's `tool helm.sh/helm/v4/cmd/helm`,
# so that it shares the compiled Kubernetes libraries with the operator):
#   helm                     helm.sh/helm/v4/cmd/helm        the version go.mod pins
#
# Why one module: built in a module each, these programs compiled their own
# copies of client-go, k8s.io/api, apimachinery, gRPC, OpenTelemetry... at
# slightly different versions; in one module every package is compiled once
# (about 115 MB of Go source instead of 180 for these eight), and a cold CI
# run is mostly compiling. The cost: minimal version selection picks one
# version of each shared dependency (the Kubernetes staging modules are
# pinned to go.mod's k8s.io/api version), so CoreDNS and
# kube-network-policies are built against newer Kubernetes libraries than
# their releases were; the e2e tests run them as they are built here. Kueue
# cannot join: its controller-runtime and Kubeflow API dependencies do not
# compile against newer Kubernetes libraries than its release pins.
#
# Usage: hack/build-cluster-bins.sh GROUP|NAME...
#   envtest        etcd kube-apiserver (what the controller tests need)
#   control-plane  envtest + kube-controller-manager kube-scheduler
#   node           kubelet kube-proxy coredns kube-network-policies (a real node)
#   kueue          kueue
#   tools          kubectl helm (what the demo, the e2e specs and the docs run)
#   s3             versitygw (an S3 server on a directory: the artifact store)
#   all            all of the above
#
# A binary is rebuilt only when missing or built with another recipe:
# bin/.versions records "NAME VERSION+MODULEKEY", MODULEKEY a hash of the
# module's inputs (every version above, the patch, the CoreDNS main). Each
# run builds what is missing in one `go build` (links overlap compiles). Cold
# on two cores: about half an hour for everything; warm: seconds.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
bin="$root/bin"
. "$root/hack/lib/versions.sh"

api_version=$(grep -E "^\s*(require\s+)?k8s.io/api\s+v" go.mod | head -1 | awk '{print $NF}')
[ -n "$api_version" ] || { echo "build-cluster-bins: go.mod has no k8s.io/api requirement" >&2; exit 1; }
kube_version="v1.${api_version#v0.}"
kueue_version=${KUEUE_VERSION:-$(awk '$1=="sigs.k8s.io/kueue"{print $2; exit} $1=="require" && $2=="sigs.k8s.io/kueue"{print $3; exit}' go.mod)}
[ -n "$kueue_version" ] || { echo "build-cluster-bins: go.mod has no sigs.k8s.io/kueue requirement" >&2; exit 1; }
helm_version=$(awk '$1=="helm.sh/helm/v4"{print $2; exit} $1=="require" && $2=="helm.sh/helm/v4"{print $3; exit}' go.mod)
[ -n "$helm_version" ] || { echo "build-cluster-bins: go.mod has no helm.sh/helm/v4 requirement" >&2; exit 1; }
etcd_version=${ETCD_VERSION:-v3.7.3}
coredns_version=${COREDNS_VERSION:-v1.14.7}
netpol_version=${KUBE_NETWORK_POLICIES_VERSION:-v0.8.0}
versitygw_version=${VERSITYGW_VERSION:-v1.8.0}
netpol_patch="$root/hack/netpol/xt-nfqueue.patch"

# name -> package (in the build module) and version
declare -A pkg=(
  [etcd]=go.etcd.io/etcd/server/v3
  [kube-apiserver]=k8s.io/kubernetes/cmd/kube-apiserver
  [kube-controller-manager]=k8s.io/kubernetes/cmd/kube-controller-manager
  [kube-scheduler]=k8s.io/kubernetes/cmd/kube-scheduler
  [kubelet]=k8s.io/kubernetes/cmd/kubelet
  [kube-proxy]=k8s.io/kubernetes/cmd/kube-proxy
  [kubectl]=k8s.io/kubernetes/cmd/kubectl
  [coredns]=repot.dev/build/cluster/coredns
  [kube-network-policies]=sigs.k8s.io/kube-network-policies/cmd
  [kueue]=./cmd/kueue
  [helm]=helm.sh/helm/v4/cmd/helm
  [versitygw]=./cmd/versitygw
)
declare -A version=(
  [etcd]=$etcd_version [kube-apiserver]=$kube_version [kube-controller-manager]=$kube_version
  [kube-scheduler]=$kube_version [kubelet]=$kube_version [kube-proxy]=$kube_version [kubectl]=$kube_version
  [coredns]=$coredns_version [kube-network-policies]=$netpol_version [kueue]=$kueue_version
  [helm]=$helm_version [versitygw]=$versitygw_version
)

names=()
for arg in "${@:-all}"; do
  case $arg in
    envtest) names+=(etcd kube-apiserver) ;;
    control-plane) names+=(etcd kube-apiserver kube-controller-manager kube-scheduler) ;;
    node) names+=(kubelet kube-proxy coredns kube-network-policies) ;;
    tools) names+=(kubectl helm) ;;
    s3) names+=(versitygw) ;;
    all) names+=(etcd kube-apiserver kube-controller-manager kube-scheduler kubelet kube-proxy kubectl coredns kube-network-policies kueue helm versitygw) ;;
    *) [ -n "${pkg[$arg]:-}" ] || { echo "build-cluster-bins: unknown binary or group $arg" >&2; exit 2; }
       names+=("$arg") ;;
  esac
done

# The CoreDNS main: CoreDNS's own documented way to build with a chosen set
# of plugins (set dnsserver.Directives, import the plugins, coremain.Run),
# instead of every plugin of plugin.cfg (cloud DNS SDKs, etcd, dnstap...).
# The set is what hack/localcluster/coredns.go's Corefile uses, plus health and log.
coredns_main='package main

import (
	"slices"

	"github.com/coredns/coredns/core/dnsserver"
	"github.com/coredns/coredns/coremain"

	_ "github.com/coredns/coredns/plugin/cache"
	_ "github.com/coredns/coredns/plugin/errors"
	_ "github.com/coredns/coredns/plugin/forward"
	_ "github.com/coredns/coredns/plugin/health"
	_ "github.com/coredns/coredns/plugin/kubernetes"
	_ "github.com/coredns/coredns/plugin/log"
	_ "github.com/coredns/coredns/plugin/loop"
	_ "github.com/coredns/coredns/plugin/ready"
)

// Keep the plugins above, in CoreDNS'"'"'s own order (plugin.cfg).
var plugins = []string{"cache", "errors", "forward", "health", "kubernetes", "log", "loop", "ready"}

func init() {
	dnsserver.Directives = slices.DeleteFunc(slices.Clone(dnsserver.Directives), func(d string) bool {
		return !slices.Contains(plugins, d)
	})
}

func main() { coremain.Run() }
'
tools_go='//go:build tools

package tools

import (
	_ "go.etcd.io/etcd/server/v3"
	_ "k8s.io/kubernetes/cmd/kube-apiserver"
	_ "k8s.io/kubernetes/cmd/kube-controller-manager"
	_ "k8s.io/kubernetes/cmd/kube-scheduler"
	_ "k8s.io/kubernetes/cmd/kubelet"
	_ "k8s.io/kubernetes/cmd/kube-proxy"
	_ "k8s.io/kubernetes/cmd/kubectl"
	_ "sigs.k8s.io/kube-network-policies/cmd"
)
'
# pins: "module version" raised in the build module, each because of a
# compile error with the version minimal version selection picks.
pins=(
  # kube-network-policies v0.8.0 asks for nri v0.9.0, whose pkg/api does not
  # compile against runtime-spec v1.3.0 (Pids.Limit became a pointer), which
  # Kubernetes needs; v0.11.0 is the first nri release built on it.
  "github.com/containerd/nri v0.11.0"
)
recipe=v1
modkey=$(printf '%s\n' "$recipe" "${pins[@]}" "$kube_version" "$etcd_version" "$coredns_version" "$netpol_version" \
  "$(sha256sum <"$netpol_patch")" "$coredns_main" "$tools_go" | sha256sum | cut -c1-12)
key_of() { case $1 in kueue|helm|versitygw) echo "${version[$1]}" ;; *) echo "${version[$1]}+m$modkey" ;; esac; }

# missing_of NAME...: those of NAMES not built in bin/ as their key (the
# others are reported cached).
missing_of() {
  local n out=()
  for n in "$@"; do
    if is_built "$n" "$(key_of "$n")"; then echo "$n ${version[$n]}: cached in bin/" >&2
    elif [[ " ${out[*]} " != *" $n "* ]]; then out+=("$n"); fi
  done
  echo "${out[*]}"
}
# Two builds, each under its own lock (bin/.cluster-bins.lock,
# bin/.kueue.lock), so that CI can build Kueue beside the others; a build
# waits only when what it needs is missing, then finds it cached if another
# process built it meanwhile (CI builds everything in the background while
# `make test` asks for etcd and kube-apiserver only).
shared_names=() want_kueue= want_helm= want_versitygw=
for n in "${names[@]}"; do
  case $n in kueue) want_kueue=1 ;; helm) want_helm=1 ;; versitygw) want_versitygw=1 ;; *) shared_names+=("$n") ;; esac
done
missing=()
if [ ${#shared_names[@]} -gt 0 ]; then
  read -ra missing <<<"$(missing_of "${shared_names[@]}" 2>/dev/null)"
  if [ ${#missing[@]} -gt 0 ]; then build_lock cluster-bins; fi
  read -ra missing <<<"$(missing_of "${shared_names[@]}")"
fi

work="$bin/.cluster-build"
module() {
  [ -f "$work/.key" ] && [ "$(cat "$work/.key")" = "$modkey" ] && return
  echo "build module: Kubernetes $kube_version, etcd $etcd_version, CoreDNS $coredns_version, kube-network-policies $netpol_version (resolving modules)..."
  rm -rf "$work"; mkdir -p "$work/coredns"
  local kmod ndir
  kmod=$(cd "$work" && go mod download -json "k8s.io/kubernetes@$kube_version" | awk -F'"' '$2=="GoMod"{print $4}')
  ndir=$(cd "$work" && go mod download -json "sigs.k8s.io/kube-network-policies@$netpol_version" | awk -F'"' '$2=="Dir"{print $4}')
  [ -f "$kmod" ] && [ -d "$ndir" ] || { echo "build-cluster-bins: cannot fetch k8s.io/kubernetes or kube-network-policies from the module proxy" >&2; exit 1; }
  # kube-network-policies with the local patch, as a directory replacement.
  mkdir -p "$work/kube-network-policies"
  cp -r "$ndir/." "$work/kube-network-policies/"
  chmod -R u+w "$work/kube-network-policies"
  (cd "$work/kube-network-policies" && patch -s -p1 <"$netpol_patch")
  {
    echo "module repot.dev/build/cluster"
    echo "go 1.26"
    echo "require ("
    echo "	k8s.io/kubernetes $kube_version"
    echo "	go.etcd.io/etcd/server/v3 $etcd_version"
    echo "	github.com/coredns/coredns $coredns_version"
    echo "	sigs.k8s.io/kube-network-policies $netpol_version"
    # Shared dependencies raised above what one of the programs asks for,
    # where its own version does not compile with what the others need:
    for p in "${pins[@]}"; do echo "	$p"; done
    echo ")"
    echo "replace ("
    # k8s.io/kubernetes replaces its staging modules with directories; pin
    # them to the published versions of the same release.
    grep -E '=> \./staging/src/' "$kmod" | awk -v v="$api_version" '{print "\t" $1 " => " $1 " " v}'
    echo "	sigs.k8s.io/kube-network-policies => ./kube-network-policies"
    echo ")"
  } >"$work/go.mod"
  printf '%s' "$tools_go" >"$work/tools.go"
  printf '%s' "$coredns_main" >"$work/coredns/main.go"
  (cd "$work" && go mod tidy) || { echo "build-cluster-bins: go mod tidy failed in $work" >&2; exit 1; }
  echo "$modkey" >"$work/.key"
}
start=$(date +%s)
major=${kube_version#v}; major=${major%%.*}
minor=${kube_version#v*.}; minor=${minor%%.*}
vpkg=k8s.io/component-base/version
pkgs=()
for n in "${missing[@]}"; do pkgs+=("${pkg[$n]}"); done
if [ ${#missing[@]} -gt 0 ]; then
  module
  echo "building ${missing[*]} in one go build (cold: about 20 minutes on two cores; progress is quiet)..."
  out="$work/out"; rm -rf "$out"; mkdir -p "$out"
  # -X sets the Kubernetes components' version (linked into the others too,
  # where nothing reads it).
  (cd "$work" && CGO_ENABLED=0 go build -trimpath \
    -ldflags "-s -w -X $vpkg.gitVersion=$kube_version -X $vpkg.gitMajor=$major -X $vpkg.gitMinor=$minor -X $vpkg.gitTreeState=clean" \
    -o "$out/" "${pkgs[@]}")
  for n in "${missing[@]}"; do
    # go build names each binary after the package's last element (without a
    # major-version suffix).
    src=$out/$(basename "${pkg[$n]}")
    case $n in etcd) src=$out/server ;; kube-network-policies) src=$out/cmd ;; esac
    [ -x "$src" ] || { echo "build-cluster-bins: $src was not built" >&2; exit 1; }
    mv "$src" "$bin/$n"
    record "$n" "$(key_of "$n")"
  done
  echo "${missing[*]}: built in $(( $(date +%s) - start ))s"
fi

# own_module NAME MODULE VERSION PKG MINUTES builds one program in its
# release's own module (its dependencies are its own, not the Kubernetes
# build's), under its own lock, when it is missing.
own_module() {
  local name=$1 mod=$2 ver=$3 pkg=$4 minutes=$5 dir start
  [ -n "$(missing_of "$name" 2>/dev/null)" ] || return 0
  exec 9>&-
  build_lock "$name"
  [ -n "$(missing_of "$name")" ] || return 0
  start=$(date +%s)
  dir=$(go mod download -json "$mod@$ver" | awk -F'"' '$2=="Dir"{print $4}')
  [ -d "$dir" ] || { echo "build-cluster-bins: module $mod@$ver not found" >&2; exit 1; }
  echo "$name $ver: building $pkg in its own module (cold: about $minutes minutes on two cores)..."
  (cd "$dir" && GOFLAGS=-mod=mod CGO_ENABLED=0 go build -trimpath -ldflags "-s -w" -o "$bin/$name.tmp" "$pkg")
  mv "$bin/$name.tmp" "$bin/$name"
  record "$name" "$(key_of "$name")"
  echo "$name $ver: built in $(( $(date +%s) - start ))s"
}

# kueue: the real Kueue manager, for the admission tests.
if [ -n "$want_kueue" ]; then own_module kueue sigs.k8s.io/kueue "$kueue_version" ./cmd/kueue 8; fi

# versitygw: Versity's S3 gateway (its AWS SDK and Fiber dependencies share
# nothing with the Kubernetes build), with its posix backend: an S3 API over
# a directory, which the local cluster runs as its artifact store and the
# uploader's tests run as a real server.
if [ -n "$want_versitygw" ]; then own_module versitygw github.com/versity/versitygw "$versitygw_version" ./cmd/versitygw 2; fi

# helm: in the project's module (go.mod's tool directive), after the others.
if [ -n "$want_helm" ] && [ -n "$(missing_of helm 2>/dev/null)" ]; then
  exec 9>&-
  build_lock helm
fi
if [ -n "$want_helm" ] && [ -n "$(missing_of helm)" ]; then
  start=$(date +%s)
  grep -qE '^tool[[:space:]]+helm.sh/helm/v4/cmd/helm$' go.mod || { echo "build-cluster-bins: go.mod lacks 'tool helm.sh/helm/v4/cmd/helm' (go get -tool helm.sh/helm/v4/cmd/helm@$helm_version)" >&2; exit 1; }
  echo "helm $helm_version: building helm.sh/helm/v4/cmd/helm in the project's module (cold: about 5 minutes on two cores)..."
  # The operator's build settings (the Makefile's -trimpath and CGO_CFLAGS,
  # cgo on), so that the Kubernetes packages compiled for it are reused.
  CGO_CFLAGS=${CGO_CFLAGS:--O2 -g -Wno-deprecated-declarations} go build -trimpath -ldflags "-s -w -X helm.sh/helm/v4/internal/version.version=$helm_version -X helm.sh/helm/v4/internal/version.metadata= -X helm.sh/helm/v4/internal/version.gitTreeState=clean" \
    -o "$bin/helm.tmp" helm.sh/helm/v4/cmd/helm
  mv "$bin/helm.tmp" "$bin/helm"
  record helm "$(key_of helm)"
  echo "helm $helm_version: built in $(( $(date +%s) - start ))s"
fi
