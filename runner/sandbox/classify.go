package sandbox

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"syscall"
	"time"
	"unicode/utf8"
)

// wrapperStatus is what the trusted wrapper reported on its status pipe.
// Lines are "key" or "key<TAB>value": ready, rejected, syntax, exit,
// exception, memory, done.
type wrapperStatus struct {
	ready     bool
	readyInfo string // the "ready" line's value: the Landlock confinement
	key       string // the last line's key other than "ready"
	value     string
}

func parseStatus(data []byte) wrapperStatus {
	var st wrapperStatus
	for _, line := range strings.Split(string(data), "\n") {
		if line == "" {
			continue
		}
		key, value, _ := strings.Cut(line, "\t")
		value = shorten(value, maxReasonDetail)
		if key == "ready" {
			st.ready, st.readyInfo = true, value
			continue
		}
		st.key, st.value = key, value
	}
	return st
}

// exitInfo is how the process ended, as far as classify needs it.
type exitInfo struct {
	exitCode int            // -1 when signalled
	signal   syscall.Signal // 0 when it exited
	cpu      time.Duration  // user + system CPU time
}

// runFacts gathers everything known about a finished run.
type runFacts struct {
	status      wrapperStatus
	exit        exitInfo
	timedOut    bool // the wall-clock limit fired
	outputLimit bool // stdout passed its cap
	cpuLimit    time.Duration
	stderr      string
}

// errNotStarted means the wrapper never reported that it was ready: python3
// itself failed, which is an infrastructure failure.
var errNotStarted = errors.New("sandbox: python wrapper did not start")

// classify turns the facts of a run into Result.Failure, or an error when
// the run says nothing about the program (the wrapper never started).
func classify(f runFacts) (string, error) {
	switch {
	case f.outputLimit:
		return FailureOutputLimit, nil
	case !f.status.ready:
		if f.timedOut {
			return "", fmt.Errorf("%w within the time limit", errNotStarted)
		}
		return "", fmt.Errorf("%w: %s: %s", errNotStarted, describeExit(f.exit), lastLine(f.stderr))
	case f.timedOut:
		return FailureTimeout, nil
	}
	switch f.status.key {
	case "rejected":
		return PrefixRejected + f.status.value, nil
	case "syntax":
		return PrefixSyntax + f.status.value, nil
	case "memory":
		return FailureMemory, nil
	case "exception":
		if f.status.value == "MemoryError" {
			return FailureMemory, nil
		}
		return PrefixCrash + f.status.value, nil
	case "exit":
		if n, err := strconv.Atoi(f.status.value); err == nil && n == 0 && f.exit.exitCode == 0 {
			return "", nil
		}
	case "done":
		if f.exit.exitCode == 0 {
			return "", nil
		}
	}
	if f.exit.signal == syscall.SIGXCPU || (f.exit.signal == syscall.SIGKILL && f.cpuLimit > 0 && f.exit.cpu >= f.cpuLimit) {
		return FailureTimeout, nil
	}
	if f.exit.signal != 0 && strings.Contains(f.stderr, "MemoryError") {
		return FailureMemory, nil
	}
	return PrefixCrash + describeExit(f.exit), nil
}

func describeExit(e exitInfo) string {
	if e.signal != 0 {
		return "signal: " + e.signal.String()
	}
	return fmt.Sprintf("exit status %d", e.exitCode)
}

// maxReasonDetail bounds the part of a failure reason that can come from
// the program (a module or exception name, say).
const maxReasonDetail = 200

// shorten cuts s to at most n bytes of valid UTF-8, marking the cut.
func shorten(s string, n int) string {
	s = strings.ToValidUTF8(s, "\uFFFD")
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "..."
}

// lastLine returns the last non-empty line of s, shortened.
func lastLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	l := shorten(strings.TrimSpace(lines[len(lines)-1]), maxReasonDetail)
	if l == "" {
		return "no output"
	}
	return l
}
