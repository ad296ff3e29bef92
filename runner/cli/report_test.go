package cli

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func runReportCommand(t *testing.T, args ...string) (string, error) {
	t.Helper()
	cmd := newReportCommand()
	var out bytes.Buffer
	cmd.SetOut(&out)
	cmd.SetErr(&out)
	cmd.SetArgs(args)
	err := cmd.Execute()
	return out.String(), err
}

func TestReportCommand(t *testing.T) {
	if _, err := runReportCommand(t); err == nil || !strings.Contains(err.Error(), "nothing to report") {
		t.Errorf("no input: %v", err)
	}
	if _, err := runReportCommand(t, t.TempDir()); err == nil || !strings.Contains(err.Error(), "records.jsonl") {
		t.Errorf("an empty directory: %v", err)
	}
	runs := t.TempDir()
	for _, m := range []string{"a", "b"} {
		dir := filepath.Join(runs, m)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		line := `{"model":"` + m + `","problem_id":"p1","environment":"tower_of_hanoi","complexity":3,"method":"pot","success":true,"route":"initial_pot_success","calls":1,"initial_success":true}` + "\n"
		if err := os.WriteFile(filepath.Join(dir, "records.jsonl"), []byte(line), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	page := filepath.Join(t.TempDir(), "sub", "r.html")
	out, err := runReportCommand(t, runs, "--combine", "--simulated", "a", "-o", page)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out, page) {
		t.Errorf("output %q does not name %s", out, page)
	}
	b, err := os.ReadFile(page)
	if err != nil {
		t.Fatal(err)
	}
	html := string(b)
	for _, want := range []string{"all directories combined", "Simulated models: a (a), a (all directories combined)", "Not recorded whether real or simulated: b"} {
		if !strings.Contains(html, want) {
			t.Errorf("page lacks %q", want)
		}
	}
}
