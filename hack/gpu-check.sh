#!/usr/bin/env bash
# hack/gpu-check.sh: check `repot gpu-telemetry` against the real NVIDIA
# driver on a machine with GPUs, reading by reading next to nvidia-smi.
# Not part of CI (it needs a GPU). Takes well under 3 minutes with a warm Go
# build cache; set REPOT_BIN to a binary built elsewhere (same commit) to
# skip the build, e.g. on a machine without the module proxy.
#
#   hack/gpu-check.sh            # build bin/repot, then compare
#   REPOT_BIN=/path/repot hack/gpu-check.sh
#
# Exit status: 0 when every GPU's readings agree with nvidia-smi within the
# tolerances printed, 1 otherwise, 2 when no driver or GPU is usable.
set -euo pipefail
cd "$(dirname "$0")/.."
WINDOW=${WINDOW:-10}   # seconds of the energy check

if ! command -v nvidia-smi >/dev/null; then
  echo "gpu-check: nvidia-smi not found: this machine has no NVIDIA driver" >&2
  exit 2
fi
bin=${REPOT_BIN:-}
if [[ -z "$bin" ]]; then
  bin=bin/repot
  echo "gpu-check: building $bin (cgo on, as the Dockerfile builds it)"
  t0=$SECONDS
  CGO_ENABLED=1 CGO_CFLAGS="-O2 -g -Wno-deprecated-declarations" go build -trimpath -ldflags "-s -w" -o "$bin" .
  echo "gpu-check: built in $((SECONDS - t0))s"
fi
if command -v objdump >/dev/null; then
  echo "gpu-check: glibc symbol versions $bin needs: $(objdump -T "$bin" 2>/dev/null | grep -o 'GLIBC_[0-9.]*' | sort -Vu | tr '\n' ' ')"
fi
echo "gpu-check: driver $(nvidia-smi --query-gpu=driver_version --format=csv,noheader | head -1)"

# One reading each, taken back to back.
ours=$(mktemp) theirs=$(mktemp)
trap 'rm -f "$ours" "$theirs" "$ours.2"' EXIT
if ! "$bin" gpu-telemetry --once >"$ours"; then
  echo "gpu-check: repot gpu-telemetry --once failed (see above)" >&2
  exit 2
fi
nvidia-smi --query-gpu=index,uuid,utilization.gpu,memory.used,power.draw,clocks.sm,temperature.gpu,ecc.errors.corrected.volatile.total,ecc.errors.uncorrected.volatile.total \
  --format=csv,noheader,nounits >"$theirs"

# value METRIC GPU-INDEX [FILE]: our reading of a metric for one GPU.
value() { awk -v m="$1" -v g="gpu=\"$2\"" '$1 ~ "^"m"\\{" && index($1, g) {print $2}' "${3:-$ours}"; }

fail=0
printf '%-4s %-22s %14s %14s %10s  %s\n' GPU READING REPOT NVIDIA-SMI TOLERANCE VERDICT
# compare GPU NAME OURS THEIRS TOLERANCE
compare() {
  local verdict=ok
  if [[ -z "$3" || -z "$4" || "$4" == *"N/A"* || "$4" == *"Not Supported"* ]]; then
    verdict="not reported"
  elif ! awk -v a="$3" -v b="$4" -v t="$5" 'BEGIN { d = a - b; if (d < 0) d = -d; exit !(d <= t) }'; then
    verdict=DIFFERS; fail=1
  fi
  printf '%-4s %-22s %14s %14s %10s  %s\n' "$1" "$2" "${3:--}" "${4:--}" "$5" "$verdict"
}
while IFS=', ' read -r idx uuid util mem power sm temp ecc_c ecc_u; do
  compare "$idx" "utilisation %" "$(value DCGM_FI_DEV_GPU_UTIL "$idx")" "$util" 25
  compare "$idx" "memory used MiB" "$(value DCGM_FI_DEV_FB_USED "$idx")" "$mem" 64
  compare "$idx" "power W" "$(value DCGM_FI_DEV_POWER_USAGE "$idx")" "$power" 30
  compare "$idx" "SM clock MHz" "$(value DCGM_FI_DEV_SM_CLOCK "$idx")" "$sm" 300
  compare "$idx" "temperature C" "$(value DCGM_FI_DEV_GPU_TEMP "$idx")" "$temp" 3
  compare "$idx" "ECC corrected" "$(value DCGM_FI_DEV_ECC_SBE_VOL_TOTAL "$idx")" "$ecc_c" 0
  compare "$idx" "ECC uncorrected" "$(value DCGM_FI_DEV_ECC_DBE_VOL_TOTAL "$idx")" "$ecc_u" 0
  if ! grep -q "$uuid" "$ours"; then echo "$idx   UUID $uuid missing from repot's reading"; fail=1; fi
done <"$theirs"

# Energy: the driver's counter over WINDOW seconds against nvidia-smi's power
# sampled every second over the same window.
echo "gpu-check: energy over ${WINDOW}s (counter delta vs mean nvidia-smi power x time)"
"$bin" gpu-telemetry --once >"$ours"
t0=$(date +%s.%N)
watts=$(timeout "$WINDOW" nvidia-smi --query-gpu=index,power.draw --format=csv,noheader,nounits -lms 1000 || true)
"$bin" gpu-telemetry --once >"$ours.2"
t1=$(date +%s.%N)
while IFS=', ' read -r idx _; do
  e0=$(value DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION "$idx")
  e1=$(value DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION "$idx" "$ours.2")
  mean=$(awk -F', ' -v g="$idx" '$1 == g {s += $2; n++} END {if (n) printf "%.1f", s / n}' <<<"$watts")
  if [[ -z "$e0" || -z "$e1" ]]; then
    compare "$idx" "energy J" "" "" 0
    continue
  fi
  ours_j=$(awk -v a="$e0" -v b="$e1" 'BEGIN { printf "%.0f", (b - a) / 1000 }')
  theirs_j=$(awk -v w="$mean" -v t0="$t0" -v t1="$t1" 'BEGIN { printf "%.0f", w * (t1 - t0) }')
  tol=$(awk -v j="$theirs_j" 'BEGIN { t = j * 0.15; if (t < 50) t = 50; printf "%.0f", t }')
  compare "$idx" "energy J (${WINDOW}s)" "$ours_j" "$theirs_j" "$tol"
done <"$theirs"

if ((fail)); then
  echo "gpu-check: some readings differ from nvidia-smi"
  exit 1
fi
echo "gpu-check: every reading agrees with nvidia-smi"
