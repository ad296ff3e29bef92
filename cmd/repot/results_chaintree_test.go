package repot

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"repot.dev/repot-operator/analysis/chaintree"
)

// testdata/traces.jsonl holds three traces of `repot run --methods repot
// --repair-budget 3` against `repot sim-server --profile strong --seed 1`
// (open-source-120): one solved at once, one after a repair, one not solved.

func execResults(t *testing.T, args ...string) (stdout, stderr string, err error) {
	t.Helper()
	cmd := newResultsCommand()
	var out, errb bytes.Buffer
	cmd.SetOut(&out)
	cmd.SetErr(&errb)
	cmd.SetArgs(append([]string{"export"}, args...))
	err = cmd.ExecuteContext(context.Background())
	return out.String(), errb.String(), err
}

func TestResultsExportChaintree(t *testing.T) {
	const want = "chaintree: 11 examples from 1 trace files: continue 8, answer 2, backtrack 1\n"
	fixture, err := os.ReadFile("testdata/traces.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	runDir := t.TempDir() // a repot run --out directory
	for name, b := range map[string][]byte{"traces.jsonl": fixture, "records.jsonl": []byte("{}\n")} {
		if err := os.WriteFile(filepath.Join(runDir, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	out := filepath.Join(t.TempDir(), "chaintree.jsonl")
	for _, src := range []string{"testdata/traces.jsonl", runDir} {
		_, stderr, err := execResults(t, "--format", "chaintree", "--traces", src, "--out", out)
		if err != nil {
			t.Fatalf("--traces %s: %v", src, err)
		}
		if stderr != want {
			t.Errorf("--traces %s: stderr %q, want %q", src, stderr, want)
		}
		b, err := os.ReadFile(out)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Contains(b, []byte(`"trace":`)) {
			t.Errorf("--traces %s: no backtrack carries its branch summary", src)
		}
		lines := bytes.Split(bytes.TrimSpace(b), []byte("\n"))
		if len(lines) != 11 {
			t.Errorf("--traces %s: %d lines, want 11", src, len(lines))
		}
		for _, l := range lines {
			if err := chaintree.Validate(l); err != nil {
				t.Errorf("--traces %s: %v", src, err)
			}
		}
	}

	// A copy of the artifacts PVC: one file per shard, to standard output,
	// without the branch summaries.
	pvc := t.TempDir()
	half := bytes.SplitAfterN(fixture, []byte("\n"), 2)
	for i, b := range half {
		if err := os.WriteFile(filepath.Join(pvc, "m-shard-"+string(rune('0'+i))+".jsonl"), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	stdout, stderr, err := execResults(t, "--format", "chaintree", "--traces", pvc, "--backtrack-trace=false")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(stderr, "11 examples from 2 trace files") || strings.Count(stdout, "\n") != 11 {
		t.Errorf("PVC copy: stderr %q, %d lines", stderr, strings.Count(stdout, "\n"))
	}
	if strings.Contains(stdout, `"trace":`) {
		t.Errorf("--backtrack-trace=false still wrote branch summaries")
	}
}

func TestResultsExportFlagErrors(t *testing.T) {
	empty := t.TempDir()
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--format", "chaintree"}, "needs --evaluation NAME"},
		{[]string{"--format", "chaintree", "--evaluation", "e", "--traces", "x"}, "not both"},
		{[]string{"--format", "chaintree", "--schedule", "s"}, "not a schedule"},
		{[]string{"--format", "traces"}, "--format traces needs --evaluation NAME"},
		{[]string{"--format", "traces", "--evaluation", "e", "--traces", "x"}, "without --schedule or --traces"},
		{[]string{"--format", "chaintree", "--traces", empty}, "holds no traces.jsonl"},
		{[]string{"--format", "parquet", "--evaluation", "e"}, `unknown --format "parquet"`},
		{[]string{"--evaluation", "e", "--traces", "x", "--out", "d"}, "--traces applies to --format chaintree only"},
	} {
		_, _, err := execResults(t, tc.args...)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: err = %v, want %q", tc.args, err, tc.want)
		}
	}
}
