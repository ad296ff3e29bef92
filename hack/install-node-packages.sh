#!/usr/bin/env bash
# Installs, from Debian's packages, what the local cluster's real node needs
# and this host lacks: containerd (with ctr), runc, the CNI plugins, iptables
# and nftables (kube-proxy, kube-network-policies), buildah and debootstrap
# (the image and its local base images), docker-registry (the local
# registry). Nothing when all are there. Without root or apt-get it says what
# is missing and exits 1.
set -euo pipefail
need=()
for c in buildah debootstrap containerd runc iptables docker-registry; do
  command -v "$c" >/dev/null 2>&1 || need+=("$c")
done
command -v nft >/dev/null 2>&1 || need+=(nftables)
[ -x /usr/lib/cni/bridge ] || need+=(containernetworking-plugins)
[ ${#need[@]} -eq 0 ] && exit 0
if [ "$(id -u)" != 0 ] || ! command -v apt-get >/dev/null 2>&1; then
  echo "the local cluster's real node needs these Debian packages: ${need[*]} (install them as root: apt-get install ${need[*]})" >&2
  exit 1
fi
echo "== installing ${need[*]} (the real node's runtime, CNI, NetworkPolicy tables and local registry; the image is built with buildah)"
apt-get update
DEBIAN_FRONTEND=noninteractive apt-get install -y "${need[@]}"
