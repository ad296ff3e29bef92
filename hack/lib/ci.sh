# Sourced by .ci/run (from the repository root): the helpers that stamp, time
# and run its steps, so that .ci/run reads as its list of steps.

# busy: the CPU counters of /proc/stat, "BUSY TOTAL" (jiffies, all cores).
busy() { awk '$1=="cpu"{print $2+$3+$4+$7+$8, $2+$3+$4+$5+$6+$7+$8}' /proc/stat; }

# cpu_of: CPU seconds of a `times` line ("XmY.Zs XmY.Zs": user, system).
cpu_of() { awk '
  function s(t) { split(t, a, "m"); sub("s", "", a[2]); return a[1] * 60 + a[2] }
  { printf "%d", s($1) + s($2) }'; }

# busy_between "BUSY0 TOTAL0" "BUSY1 TOTAL1": how busy the cores were
# between two readings of busy, in percent.
busy_between() { echo "$1 $2" | awk '{ d = $4 - $2; printf "%d", (d > 0 ? 100 * ($3 - $1) / d : 0) }'; }

# step NAME CMD...: runs CMD between two stamped lines; the second gives its
# wall time, the CPU seconds it used, and how busy the two cores were
# meanwhile (background builds included): where a cold run spends its time.
# CMD runs in a subshell, whose `times` counts CMD's CPU only (the parent's
# would count the background builds too, once reaped).
step() {
  local name=$1 t0=$SECONDS tf b0 b1
  shift
  tf=$(mktemp)
  echo "== [$(date +%T) +${SECONDS}s] $name"
  b0=$(busy)
  ( "$@"; rc=$?; times >"$tf"; exit $rc )
  b1=$(busy)
  echo "== [$(date +%T) +${SECONDS}s] $name: $((SECONDS - t0))s, $(awk 'NR==2{print $1, $2}' "$tf" | cpu_of)s CPU, cores $(busy_between "$b0" "$b1")% busy"
  rm -f "$tf"
}

# wait_step NAME PID...: waits for background jobs, stamped like a step.
wait_step() {
  local name=$1 t0=$SECONDS
  shift
  echo "== [$(date +%T) +${SECONDS}s] $name"
  wait "$@" || true
  echo "== [$(date +%T) +${SECONDS}s] $name: $((SECONDS - t0))s"
}

# background NAME NICE CMD: runs CMD (a bash command line) in the background
# in a session of its own, at nice value NICE, with its output in
# bin/NAME.log, its exit status in bin/NAME.rc and its wall time and CPU in
# bin/NAME.time. Where the kernel groups tasks by session (sched_autogroup),
# the session is a scheduling group that gets a fair share of the cores
# whatever its tasks' nice value, so the group's own nice value is set too.
background() {
  setsid nice -n "$2" bash -c 'echo "$2" >/proc/self/autogroup 2>/dev/null || true
    bash -c "$3" >"bin/$1.log" 2>&1; echo $? >"bin/$1.rc"
    { echo "$SECONDS s"; times; } >"bin/$1.time"' _ "$@" &
}

# background_done NAME: the background job NAME ended well (else its failed
# tests, its log's tail and exit 1); says what it took.
background_done() {
  if [ "$(cat "bin/$1.rc" 2>/dev/null)" != 0 ]; then
    # A go test run's failures can be far above its log's tail.
    grep -E '^(--- FAIL|FAIL|panic:)' "bin/$1.log" | head -40 || true
    tail -40 "bin/$1.log"
    echo "the background job failed (bin/$1.log)" >&2
    exit 1
  fi
  echo "== $1: $(head -1 "bin/$1.time") wall, CPU (user, system) of its builds: $(sed -n 3p "bin/$1.time")"
}
