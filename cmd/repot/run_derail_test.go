package repot

import (
	"encoding/json"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"repot.dev/repot-operator/analysis/summary"
	"repot.dev/repot-operator/envs/shareddata"
	"repot.dev/repot-operator/modelserver/simserver"
	"repot.dev/repot-operator/runner/sandbox"
)

func TestRunDerailFlagErrors(t *testing.T) {
	data, err := os.ReadFile(shareddata.Require(t, "derail_550.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	first, _, _ := strings.Cut(string(data), "\n")
	file := filepath.Join(t.TempDir(), "one.jsonl")
	if err := os.WriteFile(file, []byte(first+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	base := []string{"--suite", "derail-550", "--problems", file, "--model", "m"}
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"--methods", "pot"}, "runs conditions, not methods: use --conditions"},
		{[]string{"--conditions", "error_only,vex"}, `unknown Derail-550 condition "vex"`},
		{[]string{"--conditions", "error_only,error_only"}, "named twice"},
		{[]string{"--checkpoint-statement", "short"}, `--checkpoint-statement "short": use paper or full`},
	}
	for _, tc := range tests {
		_, err := execRun(t, append(append([]string{}, base...), tc.args...)...)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("repot run %v: err = %v, want %q", tc.args, err, tc.want)
		}
	}
}

// TestRunDerailCommand runs `repot run --suite derail-550` on three
// published cases with two conditions against an in-process simulated
// server, then resumes it with the other statement into the same directory.
func TestRunDerailCommand(t *testing.T) {
	if sb, err := sandbox.NewPython(sandbox.Options{}); err != nil {
		t.Skipf("no python sandbox: %v", err)
	} else {
		sb.Close()
	}
	data, err := os.ReadFile(shareddata.Require(t, "derail_550.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.SplitAfter(string(data), "\n")
	dir := t.TempDir()
	file := filepath.Join(dir, "three.jsonl")
	if err := os.WriteFile(file, []byte(lines[0]+lines[100]+lines[400]), 0o644); err != nil {
		t.Fatal(err)
	}
	prof, _ := simserver.LookupProfile("strong")
	srv, err := simserver.New(simserver.Options{Profile: prof, Seed: 1, Logf: t.Logf})
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(srv)
	defer hs.Close()
	out := filepath.Join(dir, "out")
	args := []string{"--suite", "derail-550", "--problems", file, "--conditions", "state_plus_legal_actions,repot-full",
		"--base-url", hs.URL + "/v1", "--out", out, "--model-label", "sim"}
	text, err := execRun(t, args...)
	if err != nil {
		t.Fatalf("repot run: %v\n%s", err, text)
	}
	for _, want := range []string{"Derail-550, model sim, checkpoint statement paper: 3 cases", "state_plus_legal_actions", "repot-full", "progress: 6/6 runs"} {
		if !strings.Contains(text, want) {
			t.Errorf("output lacks %q:\n%s", want, text)
		}
	}
	text, err = execRun(t, append(args, "--resume", "--checkpoint-statement", "full")...)
	if err != nil {
		t.Fatalf("repot run --resume --checkpoint-statement full: %v\n%s", err, text)
	}
	var s summary.Summary
	b, _ := os.ReadFile(filepath.Join(out, "summary.json"))
	if err := json.Unmarshal(b, &s); err != nil {
		t.Fatal(err)
	}
	if len(s.Derail) != 2 || s.Derail[0].CheckpointStatement != "full" || s.Derail[1].CheckpointStatement != "paper" || s.Records != 12 {
		t.Errorf("the two statements are not kept apart: %s", b)
	}
}
