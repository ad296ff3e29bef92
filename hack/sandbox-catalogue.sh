#!/usr/bin/env bash
# Runs the sandbox's adversarial catalogue (runner/sandbox, TestAdversarialCatalogue)
# in the three settings CI checks, then `repot sandbox run` on two hostile
# programs in the weakest one:
#   1. as root, with namespaces required (REPOT_SANDBOX_ISOLATION=namespaces);
#   2. with no namespaces (--isolation none);
#   3. with no namespaces and no Landlock (--landlock off), as a non-root user
#      created here with useradd, with REPOT_API_KEY (and an artifact store
#      key) set: the weakest runner
#      pod (only the seccomp filter, rlimits and the Python layers).
# As a non-root user, setting 1 is skipped (say so) and 3 runs as that user.
set -euo pipefail
cd "$(dirname "$0")/.."
bin="$PWD/bin"
mkdir -p "$bin"
go test -c -o "$bin/sandbox.test" ./runner/sandbox/
go build -o "$bin/repot" .
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
chmod 755 "$work"
cp "$bin/sandbox.test" "$bin/repot" "$work/"
chmod 755 "$work/sandbox.test" "$work/repot"
run_catalogue() { # ISOLATION LANDLOCK [USER]
  local iso=$1 ll=$2 user=${3:-}
  echo "== sandbox catalogue: isolation $iso, landlock $ll, uid ${user:-$(id -un)}"
  # The model's API key, as a runner pod holds it, and the artifact store's
  # key, which in a pod only the ledger sidecar holds: neither may reach a
  # program.
  local env=(REPOT_SANDBOX_ISOLATION="$iso" REPOT_SANDBOX_LANDLOCK="$ll" REPOT_API_KEY=sk-ci-secret-4f1d8a
    AWS_ACCESS_KEY_ID=AKIACICANARY0000 AWS_SECRET_ACCESS_KEY=ci-s3-secret-9c2e77b1)
  if [[ -n $user ]]; then
    (cd "$work" && env "${env[@]}" setpriv --reuid="$user" --regid="$user" --clear-groups \
      ./sandbox.test -test.run '^TestAdversarialCatalogue$' -test.count=1)
  else
    (cd "$work" && env "${env[@]}" ./sandbox.test -test.run '^TestAdversarialCatalogue$' -test.count=1)
  fi
}
user=""
if [[ $EUID -eq 0 ]]; then
  run_catalogue namespaces auto
  run_catalogue none auto
  user=repot-sandbox-ci
  id "$user" >/dev/null 2>&1 || useradd --system --no-create-home --shell /usr/sbin/nologin "$user"
  run_catalogue none off "$user"
else
  echo "== sandbox catalogue: setting 1 (root with namespaces) skipped: not root"
  run_catalogue none auto
  run_catalogue none off
fi

echo "== repot sandbox run --isolation none --landlock off (weakest setting)"
cat > "$work/escape.py" <<'PY'
import os
os.setpgid(0, os.getpgid(os.getppid()))
PY
printf 'def h(n, a, b, c, out):\n    if n:\n        h(n - 1, a, c, b, out)\n        out.append((n, a, c))\n        h(n - 1, b, a, c, out)\nm = []\nh(3, 0, 1, 2, m)\nprint("moves =", m)\n' > "$work/hanoi.py"
chmod 644 "$work"/*.py
cmd=("$work/repot" sandbox run --isolation none --landlock off --timeout 5s "$work/escape.py" "$work/hanoi.py")
if [[ -n $user ]]; then
  out=$(cd "$work" && REPOT_API_KEY=sk-ci-secret-4f1d8a setpriv --reuid="$user" --regid="$user" --clear-groups "${cmd[@]}")
else
  out=$(cd "$work" && REPOT_API_KEY=sk-ci-secret-4f1d8a "${cmd[@]}")
fi
echo "$out"
grep -q '"file":"[^"]*escape.py","mode":"none, seccomp, landlock off","failure":"rejected: import of '"'"'os'"'"' is not allowed"' <<<"$out"
grep -q '"file":"[^"]*hanoi.py","mode":"none, seccomp, landlock off","failure":"".*"moves":\[\[1,0,2\]' <<<"$out"
if grep -q sk-ci-secret <<<"$out"; then echo "the API key leaked"; exit 1; fi
echo "== sandbox catalogue: all settings contained"
