package main

import (
	"os"
	"strconv"
	"strings"
	"syscall"

	"repot.dev/repot-operator/hack/localcluster/cluster"
)

// runningPID returns the pid in the state dir's pid file and whether that
// process is alive.
func runningPID(l cluster.Layout) (int, bool) {
	data, err := os.ReadFile(l.PIDFile())
	if err != nil {
		return 0, false
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(data)))
	if err != nil || pid <= 0 {
		return 0, false
	}
	return pid, syscall.Kill(pid, 0) == nil
}

func splitLines(s string) []string { return strings.Split(strings.TrimSpace(s), "\n") }
