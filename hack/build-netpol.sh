#!/usr/bin/env bash
# Builds kube-network-policies (sigs.k8s.io/kube-network-policies, the
# Kubernetes SIG Network's NetworkPolicy enforcer; it decides each new
# connection of a selected pod in userspace, through an nfqueue) from the Go
# module proxy into bin/kube-network-policies, inside its own module with its
# own pinned dependencies: the real node's NetworkPolicy enforcer.
#
# Two local changes, in hack/netpol/xt-nfqueue.patch, applied to a copy of
# the module:
#   - the nftables rules queue packets with the xtables NFQUEUE target (run
#     by nft_compat) instead of the native "queue" expression, which kernels
#     built without CONFIG_NFT_QUEUE (this VM's) refuse;
#   - a --kubeconfig flag, so that it runs as a node process like the
#     kubelet and kube-proxy instead of only in a pod.
# Rebuilt only when missing, built for another version, or the patch changed
# (bin/.versions).
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
bin="$root/bin"
. "$root/hack/lib/versions.sh"
build_lock kube-network-policies
version=${KUBE_NETWORK_POLICIES_VERSION:-v0.8.0}
patch="$root/hack/netpol/xt-nfqueue.patch"
key="$version+$(sha256sum "$patch" | cut -c1-12)"
if is_built kube-network-policies "$key"; then
  echo "kube-network-policies $version: cached in bin/"
  exit 0
fi
start=$(date +%s)
echo "kube-network-policies $version: fetching the module..."
dir=$(go mod download -json "sigs.k8s.io/kube-network-policies@$version" | awk -F'"' '$2=="Dir"{print $4}')
[ -d "$dir" ] || { echo "build-netpol: module sigs.k8s.io/kube-network-policies@$version not found" >&2; exit 1; }
work=$(mktemp -d)
trap 'chmod -R u+w "$work"; rm -rf "$work"' EXIT
cp -r "$dir/." "$work/"
chmod -R u+w "$work"
(cd "$work" && patch -s -p1 <"$patch")
echo "kube-network-policies $version: building (a few minutes with a cold Go build cache on two cores)..."
(cd "$work" && GOFLAGS=-mod=mod CGO_ENABLED=0 go build -trimpath -ldflags "-s -w" -o "$bin/kube-network-policies" ./cmd)
record kube-network-policies "$key"
echo "kube-network-policies $version: done in $(( $(date +%s) - start ))s"
