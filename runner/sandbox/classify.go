package sandbox

import (
	"errors"
	"fmt"
	"strings"
	"syscall"
	"time"
	"unicode/utf8"
)

// wrapperStatus is what the child reported on its status pipe before the
// program's first instruction (the pipe is closed then, so a program cannot
// write to it). Lines are "key" or "key<TAB>value": ready (with the
// confinement), then rejected, syntax or start.
type wrapperStatus struct {
	ready     bool
	readyInfo string // the "ready" line's value: seccomp and Landlock
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
var errNotStarted = errors.New("sandbox: sandboxed child did not start")

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
	case "start":
	default:
		// Ready but neither rejected nor started: the child failed between
		// the two, in trusted code.
		return "", fmt.Errorf("%w: no verdict on the program: %s: %s", errNotStarted, describeExit(f.exit), lastLine(f.stderr))
	}
	// From here on only what the program could do itself counts: its exit
	// status and its stderr (an uncaught exception ends it with status 1
	// and a traceback whose last line names the exception).
	if f.exit.signal == 0 && f.exit.exitCode == 0 {
		return "", nil
	}
	if f.exit.signal == syscall.SIGXCPU || (f.exit.signal == syscall.SIGKILL && f.cpuLimit > 0 && f.exit.cpu >= f.cpuLimit) {
		return FailureTimeout, nil
	}
	if f.exit.signal == 0 && f.exit.exitCode == 1 {
		if name := exceptionName(f.stderr); name == "MemoryError" {
			return FailureMemory, nil
		} else if name != "" {
			return PrefixCrash + name, nil
		}
	}
	if f.exit.signal != 0 && strings.Contains(f.stderr, "MemoryError") {
		return FailureMemory, nil
	}
	return PrefixCrash + describeExit(f.exit), nil
}

// exceptionName returns the exception named by the last line of a Python
// traceback ("ValueError: boom", "json.decoder.JSONDecodeError: ..."), or
// "" when the last line does not look like one.
func exceptionName(stderr string) string {
	lines := strings.Split(strings.TrimRight(stderr, "\n"), "\n")
	last := lines[len(lines)-1]
	name, _, _ := strings.Cut(last, ":")
	if i := strings.LastIndexByte(name, '.'); i >= 0 {
		name = name[i+1:]
	}
	if name == "" || len(name) > 100 {
		return ""
	}
	for i, r := range name {
		if !(r == '_' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || i > 0 && r >= '0' && r <= '9') {
			return ""
		}
	}
	switch {
	case strings.HasSuffix(name, "Error"), strings.HasSuffix(name, "Exception"), strings.HasSuffix(name, "Warning"),
		name == "StopIteration", name == "StopAsyncIteration", name == "GeneratorExit", name == "KeyboardInterrupt",
		name == "ExceptionGroup", name == "BaseExceptionGroup":
		return name
	}
	return ""
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
