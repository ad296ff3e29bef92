#!/usr/bin/env bash
# Runs the image we ship under containerd and runc (Debian's packages), in the
# weakest setting a runner pod has: user 65532 (the image's USER), no capabilities, the
# runtime's default seccomp profile (what RuntimeDefault gives under
# containerd), no new privileges, a read-only root file system with a tmpfs
# on /tmp. In that container it checks:
#   1. the process really has uid 65532, CapEff 0, Seccomp 2 (filter) and
#      NoNewPrivs 1, and the root file system refuses writes;
#   2. the image's Python is the one the sandbox is tested on (3.11);
#   3. the sandbox's adversarial catalogue (runner/sandbox) passes on the
#      image's Python, in the sandbox mode the container allows (auto), and
#      `repot sandbox run` rejects an escape with the mode named;
#   4. `repot gpu-telemetry --exec` as the container's entrypoint: a
#      SIGTERM from containerd reaches the wrapped command, and the
#      container exits with that command's code (and 128+N when signal N
#      killed it).
# The image is built first (hack/build-image.sh, cached layers). containerd
# runs privately (its own root, state and socket under a temporary folder)
# and is stopped at the end. Needs root, buildah, debootstrap, containerd.
set -euo pipefail
cd "$(dirname "$0")/.."
IMG=${IMG:-repot-operator:dev}
die() { echo "image-test: FAIL: $*" >&2; exit 1; }
[ "$(id -u)" = 0 ] || die "needs root (containerd and runc run containers as root here)"
for c in containerd ctr runc buildah; do
  command -v $c >/dev/null || die "$c is not installed (apt-get install containerd runc buildah)"
done

hack/build-image.sh image

work=$(mktemp -d /tmp/repot-image-test.XXXXXX)
sock=$work/containerd.sock
ns=repot-image-test
cleanup() {
  set +e
  for t in $(ctr -a "$sock" -n $ns tasks ls -q 2>/dev/null); do ctr -a "$sock" -n $ns tasks kill -s SIGKILL "$t"; done
  sleep 1
  for c in $(ctr -a "$sock" -n $ns containers ls -q 2>/dev/null); do ctr -a "$sock" -n $ns tasks rm -f "$c" >/dev/null 2>&1; ctr -a "$sock" -n $ns containers rm "$c"; done
  [ -n "${cpid:-}" ] && kill "$cpid" 2>/dev/null && wait "$cpid" 2>/dev/null
  # containerd's snapshots are overlay mounts under its root
  grep " $work/" /proc/mounts | awk '{print $2}' | sort -r | xargs -r -n1 umount -l 2>/dev/null
  rm -rf "$work"
}
trap cleanup EXIT

cat >"$work/config.toml" <<EOF
version = 2
root = "$work/root"
state = "$work/state"
disabled_plugins = ["io.containerd.grpc.v1.cri"]
[grpc]
  address = "$sock"
EOF
containerd --config "$work/config.toml" >"$work/containerd.log" 2>&1 &
cpid=$!
for _ in $(seq 100); do [ -S "$sock" ] && ctr -a "$sock" version >/dev/null 2>&1 && break; sleep 0.1; done
ctr -a "$sock" version >/dev/null 2>&1 || { tail "$work/containerd.log"; die "containerd did not start"; }
ref=docker.io/library/$IMG
buildah push -q "localhost/$IMG" "docker-archive:$work/image.tar:$ref" >/dev/null
ctr -a "$sock" -n $ns images import "$work/image.tar" >/dev/null
echo "== image $IMG imported into containerd $(containerd --version | awk '{print $3}') (runc $(runc --version | awk 'NR==1{print $3}'))"

# The test's own binary and programs, read-only.
mkdir -p "$work/in"
CGO_ENABLED=0 go test -c -o "$work/in/sandbox.test" ./runner/sandbox/
cat >"$work/in/escape.py" <<'PY'
import os
os.setpgid(0, os.getpgid(os.getppid()))
PY
printf 'def h(n, a, b, c, out):\n    if n:\n        h(n - 1, a, c, b, out)\n        out.append((n, a, c))\n        h(n - 1, b, a, c, out)\nm = []\nh(3, 0, 1, 2, m)\nprint("moves =", m)\n' >"$work/in/hanoi.py"
chmod -R a+rX "$work/in"

# ctr 1.6 has no "drop ALL": drop each capability of its default set.
drop=()
for c in CHOWN DAC_OVERRIDE FSETID FOWNER MKNOD NET_RAW SETGID SETUID SETFCAP SETPCAP NET_BIND_SERVICE SYS_CHROOT KILL AUDIT_WRITE; do
  drop+=(--cap-drop "CAP_$c")
done
n=0
# run CMD...: runs CMD in a new container of the image, weakest pod setting.
run() {
  n=$((n + 1))
  ctr -a "$sock" -n $ns run --rm --seccomp --read-only "${drop[@]}" \
    --mount "type=tmpfs,src=tmpfs,dst=/tmp,options=rw:nosuid:nodev:mode=1777" \
    --mount "type=bind,src=$work/in,dst=/test,options=rbind:ro" \
    --env REPOT_API_KEY=sk-image-test-4f1d8a --env TMPDIR=/tmp \
    "$ref" "image-test-$n" "$@"
}

echo "== 1. identity, capabilities, seccomp, read-only root"
status=$(run sh -c 'id -u; grep -E "^(CapEff|Seccomp|NoNewPrivs):" /proc/self/status; touch /home/repot/x 2>&1 || echo "root fs read-only"')
echo "$status"
grep -qx 65532 <<<"$status" || die "the container does not run as 65532"
grep -qE '^CapEff:\s+0+$' <<<"$status" || die "the container has capabilities"
grep -qE '^Seccomp:\s+2$' <<<"$status" || die "no seccomp filter from the runtime"
grep -qE '^NoNewPrivs:\s+1$' <<<"$status" || die "no_new_privs is not set"
grep -q 'root fs read-only' <<<"$status" || die "the root file system accepted a write"

echo "== 2. the image's Python"
py=$(run python3 -c 'import sys; print("%d.%d" % sys.version_info[:2])')
host=$(python3 -c 'import sys; print("%d.%d" % sys.version_info[:2])')
echo "image python $py, the sandbox tests' python $host"
[ "$py" = "$host" ] || die "the image ships Python $py, the sandbox is tested on $host"

echo "== 3. the sandbox catalogue in the image (isolation auto, landlock auto)"
run sh -c 'cd /tmp && REPOT_SANDBOX_ISOLATION=auto REPOT_SANDBOX_LANDLOCK=auto /test/sandbox.test -test.run "^TestAdversarialCatalogue$" -test.count=1 -test.v' >"$work/catalogue.log" 2>&1 ||
  { tail -40 "$work/catalogue.log"; die "the sandbox catalogue failed in the image"; }
echo "catalogue: $(grep -c -- '--- PASS' "$work/catalogue.log") tests and cases passed, $(grep -c -- '--- SKIP' "$work/catalogue.log" || true) skipped"
grep -m1 'sandbox: /usr/bin/python3' "$work/catalogue.log" || true
out=$(run /usr/local/bin/repot sandbox run --timeout 5s /test/escape.py /test/hanoi.py)
echo "$out"
grep -q '"file":"/test/escape.py","mode":"[^"]*","failure":"rejected: import of '"'"'os'"'"' is not allowed"' <<<"$out" ||
  die "repot sandbox run did not reject the escape"
grep -q '"file":"/test/hanoi.py","mode":"[^"]*","failure":"","exit_code":0' <<<"$out" ||
  die "repot sandbox run failed a plain program"

echo "== 4. gpu-telemetry --exec as the entrypoint: signals and exit codes through containerd"
# a: the wrapped command exits 7 by itself.
set +e
run /usr/local/bin/repot gpu-telemetry --listen 127.0.0.1:0 --exec -- sh -c 'exit 7' >/dev/null 2>&1
code=$?
set -e
[ $code = 7 ] || die "exit code $code, want the wrapped command's 7"
echo "wrapped exit 7 -> container exit $code"
# b: SIGTERM from containerd reaches the command, whose handler exits 42.
id=image-test-sig
set +e
ctr -a "$sock" -n $ns run --rm --seccomp --read-only "${drop[@]}" \
  --mount "type=tmpfs,src=tmpfs,dst=/tmp,options=rw:nosuid:nodev:mode=1777" \
  "$ref" $id /usr/local/bin/repot gpu-telemetry --listen 127.0.0.1:0 --exec -- \
  python3 -c 'import signal, sys, time
signal.signal(signal.SIGTERM, lambda *a: sys.exit(42))
print("ready", flush=True)
time.sleep(120)' >"$work/sig.log" 2>&1 &
bg=$!
for _ in $(seq 100); do grep -q ready "$work/sig.log" && break; sleep 0.1; done
grep -q ready "$work/sig.log" || { cat "$work/sig.log"; die "the wrapped command did not start"; }
ctr -a "$sock" -n $ns tasks kill -s SIGTERM $id
wait $bg
code=$?
set -e
echo "SIGTERM -> handler exit 42 -> container exit $code"
[ "$code" = 42 ] || die "exit $code after SIGTERM, want 42 from the wrapped command's handler"
echo "image-test: all checks passed"
