package sandbox

import (
	"context"
	"errors"
	"strings"
	"syscall"
	"testing"
	"time"
	"unicode/utf8"
)

func TestClassify(t *testing.T) {
	ready := func(key, value string) wrapperStatus { return wrapperStatus{ready: true, key: key, value: value} }
	exited := func(code int) exitInfo { return exitInfo{exitCode: code} }
	killed := func(sig syscall.Signal, cpu time.Duration) exitInfo {
		return exitInfo{exitCode: -1, signal: sig, cpu: cpu}
	}
	tests := []struct {
		name string
		f    runFacts
		want string
	}{
		{"exit zero", runFacts{status: ready("start", ""), exit: exited(0)}, ""},
		{"exit non-zero", runFacts{status: ready("start", ""), exit: exited(3)}, "crash: exit status 3"},
		{"rejected", runFacts{status: ready("rejected", "import of 'os' is not allowed"), exit: exited(0)}, "rejected: import of 'os' is not allowed"},
		{"syntax", runFacts{status: ready("syntax", "line 1: invalid syntax"), exit: exited(0)}, "syntax_error: line 1: invalid syntax"},
		{"memory exception", runFacts{status: ready("start", ""), exit: exited(1), stderr: "Traceback...\nMemoryError\n"}, FailureMemory},
		{"exception", runFacts{status: ready("start", ""), exit: exited(1), stderr: "Traceback:\n  x\nKeyError: 'a'\n"}, "crash: KeyError"},
		{"dotted exception", runFacts{status: ready("start", ""), exit: exited(1), stderr: "json.decoder.JSONDecodeError: Expecting value"}, "crash: JSONDecodeError"},
		{"exit 1 with other stderr", runFacts{status: ready("start", ""), exit: exited(1), stderr: "bad input: 3"}, "crash: exit status 1"},
		{"exception name only on exit 1", runFacts{status: ready("start", ""), exit: exited(2), stderr: "KeyError: 'a'"}, "crash: exit status 2"},
		{"wall timeout wins over status", runFacts{status: ready("start", ""), timedOut: true, exit: killed(syscall.SIGKILL, 0)}, FailureTimeout},
		{"output limit wins", runFacts{status: ready("start", ""), timedOut: true, outputLimit: true, exit: killed(syscall.SIGKILL, 0)}, FailureOutputLimit},
		{"cpu soft limit", runFacts{status: ready("start", ""), exit: killed(syscall.SIGXCPU, time.Second)}, FailureTimeout},
		{"cpu hard limit", runFacts{status: ready("start", ""), cpuLimit: time.Second, exit: killed(syscall.SIGKILL, 2*time.Second)}, FailureTimeout},
		{"killed otherwise", runFacts{status: ready("start", ""), cpuLimit: time.Second, exit: killed(syscall.SIGKILL, 0)}, "crash: signal: killed"},
		{"segfault", runFacts{status: ready("start", ""), exit: killed(syscall.SIGSEGV, 0)}, "crash: signal: segmentation fault"},
		{"abort on memory", runFacts{status: ready("start", ""), exit: killed(syscall.SIGABRT, 0), stderr: "Fatal Python error: MemoryError"}, FailureMemory},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := classify(tt.f)
			if err != nil {
				t.Fatal(err)
			}
			if got != tt.want {
				t.Errorf("classify = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestClassifyNotStartedIsInfra(t *testing.T) {
	for _, f := range []runFacts{
		{exit: exitInfo{exitCode: 1}, stderr: "python3: can't open file"},
		{status: wrapperStatus{ready: true}, exit: exitInfo{exitCode: 1}, stderr: "OSError in confine"},
		{timedOut: true, exit: exitInfo{exitCode: -1, signal: syscall.SIGKILL}},
	} {
		if _, err := classify(f); !errors.Is(err, errNotStarted) {
			t.Errorf("classify(%+v) error = %v, want errNotStarted", f, err)
		}
	}
}

func TestParseStatusShortensProgramText(t *testing.T) {
	long := strings.Repeat("é", 500)
	st := parseStatus([]byte("ready\texception\n" + "exception\t" + long + "\n"))
	if len(st.value) > maxReasonDetail+3 || !strings.HasSuffix(st.value, "...") || !utf8.ValidString(st.value) {
		t.Errorf("value %q not shortened", st.value)
	}
}

func TestParseStatus(t *testing.T) {
	st := parseStatus([]byte("ready\nrejected\timport of 'os' is not allowed\n"))
	if !st.ready || st.key != "rejected" || st.value != "import of 'os' is not allowed" {
		t.Errorf("parseStatus = %+v", st)
	}
	if st := parseStatus(nil); st.ready || st.key != "" {
		t.Errorf("parseStatus(nil) = %+v", st)
	}
}

func TestCapWriter(t *testing.T) {
	calls := 0
	w := &capWriter{limit: 5, onExceed: func() { calls++ }}
	for _, s := range []string{"ab", "cd", "ef\xff", "gh"} {
		if n, err := w.Write([]byte(s)); n != len(s) || err != nil {
			t.Fatalf("Write(%q) = %d, %v", s, n, err)
		}
	}
	text, exceeded := w.text()
	if text != "abcde" || !exceeded || calls != 1 {
		t.Errorf("text %q exceeded %v calls %d", text, exceeded, calls)
	}
}

func TestFuncIsASandbox(t *testing.T) {
	var sb Sandbox = Func(func(_ context.Context, code string) (Result, error) {
		return Result{Stdout: code}, nil
	})
	r, err := sb.Run(context.Background(), "x")
	if err != nil || r.Stdout != "x" {
		t.Errorf("Run = %+v, %v", r, err)
	}
}
