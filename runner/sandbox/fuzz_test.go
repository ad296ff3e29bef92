package sandbox

import (
	"syscall"
	"testing"
	"unicode/utf8"
)

// FuzzClassify feeds classify what a hostile program controls after its
// first instruction (its stderr and exit status): the result must be a
// failure reason, never an infrastructure error, valid UTF-8 and short.
func FuzzClassify(f *testing.F) {
	f.Add("Traceback\nValueError: boom\n", 1, 0)
	f.Add("json.decoder.JSONDecodeError: x", 1, 0)
	f.Add("\xff\xfe", 3, 0)
	f.Add("MemoryError", 0, int(syscall.SIGKILL))
	f.Fuzz(func(t *testing.T, stderr string, code, sig int) {
		e := exitInfo{exitCode: code & 0xff}
		if sig > 0 && sig < 65 {
			e = exitInfo{exitCode: -1, signal: syscall.Signal(sig)}
		}
		got, err := classify(runFacts{status: wrapperStatus{ready: true, readyInfo: "seccomp", key: "start"}, exit: e, stderr: stderr})
		if err != nil {
			t.Fatalf("classify: %v", err)
		}
		if !utf8.ValidString(got) || len(got) > 2*maxReasonDetail {
			t.Errorf("reason %q", got)
		}
	})
}
