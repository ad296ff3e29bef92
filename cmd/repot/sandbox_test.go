package repot

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

func TestSandboxRunPrintsOneLinePerFile(t *testing.T) {
	if _, err := exec.LookPath("python3"); err != nil {
		t.Skip("no python3 on this machine: the sandbox cannot run")
	}
	dir := t.TempDir()
	ok := filepath.Join(dir, "ok.md")
	bad := filepath.Join(dir, "bad.py")
	if err := os.WriteFile(ok, []byte("Plan:\n```python\nprint('moves =', [(1, 0, 2)])\n```\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(bad, []byte("import os\nos.setpgid(0, 0)\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := newSandboxCommand()
	var out bytes.Buffer
	cmd.SetOut(&out)
	cmd.SetArgs([]string{"run", "--isolation", "none", "--landlock", "off", "--timeout", "20s", ok, bad})
	if err := cmd.Execute(); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if len(lines) != 2 {
		t.Fatalf("got %d lines, want 2:\n%s", len(lines), out.String())
	}
	var got []map[string]any
	for _, l := range lines {
		var m map[string]any
		if err := json.Unmarshal([]byte(l), &m); err != nil {
			t.Fatalf("line %q: %v", l, err)
		}
		for _, k := range []string{"file", "mode", "failure", "exit_code", "stdout", "stderr", "moves", "parse_error", "ms"} {
			if _, ok := m[k]; !ok {
				t.Errorf("line %q lacks %q", l, k)
			}
		}
		got = append(got, m)
	}
	if got[0]["failure"] != "" || got[0]["parse_error"] != "" || len(got[0]["moves"].([]any)) != 1 {
		t.Errorf("ok.md: %v", got[0])
	}
	if mode, _ := got[0]["mode"].(string); !strings.HasPrefix(mode, "none, seccomp, landlock off") {
		t.Errorf("mode %q, want none, seccomp, landlock off", mode)
	}
	if got[1]["failure"] != "rejected: import of 'os' is not allowed" {
		t.Errorf("bad.py: %v", got[1])
	}
}

func TestSandboxRunRejectsBadFlags(t *testing.T) {
	for _, args := range [][]string{
		{"run", "--isolation", "chroot", "x.py"},
		{"run", "--landlock", "on", "x.py"},
		{"run", "--timeout", "0s", "x.py"},
		{"run", "--sandbox-min", "landlock", "x.py"},
	} {
		cmd := newSandboxCommand()
		cmd.SetOut(&bytes.Buffer{})
		cmd.SetErr(&bytes.Buffer{})
		cmd.SetArgs(args)
		if err := cmd.Execute(); err == nil {
			t.Errorf("%v: no error", args)
		}
	}
}
