package repot

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"repot.dev/repot-operator/analysis/report"
	"repot.dev/repot-operator/contract"
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

// TestReportLinksTraces: a run directory's failed run links to its trace
// page, and the command says how many it linked; an evaluation whose store
// fails still gets its report, with a warning.
func TestReportLinksTraces(t *testing.T) {
	dir := t.TempDir()
	recs := `{"model":"m","problem_id":"p1","environment":"tower_of_hanoi","complexity":3,"method":"pot","success":true,"stopped_reason":"goal","route":"initial_pot_success","calls":1,"initial_success":true}
{"model":"m","problem_id":"../p2","environment":"tower_of_hanoi","complexity":4,"method":"pot","success":false,"stopped_reason":"invalid_move","route":"no_extra_call","calls":1}
`
	traces := `{"problem_id":"../p2","model":"m","method":"pot","success":false,"stopped_reason":"invalid_move","calls":[{"index":0,"purpose":"initial","completion":"<script>alert(1)</script>"}]}
`
	for name, content := range map[string]string{"records.jsonl": recs, "traces.jsonl": traces} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	var gotEndpoint string
	cmd := reportCommand(func(_ context.Context, _, _ string, evaluations []string, _, storeEndpoint string) (*report.Schedule, []report.Source, error) {
		gotEndpoint = storeEndpoint
		s := report.FromRecords("ns/"+evaluations[0], report.OriginEvaluation, []contract.Record{{Model: "m", ProblemID: "q", Method: "pot", StoppedReason: "no_plan"}})
		s.Traces = report.Traces{Problem: "the artifact store of ns/ev: connection refused"}
		return nil, []report.Source{s}, nil
	})
	page := filepath.Join(t.TempDir(), "r.html")
	var stdout, stderr bytes.Buffer
	cmd.SetOut(&stdout)
	cmd.SetErr(&stderr)
	cmd.SetArgs([]string{dir, "--evaluation", "ev", "--store-endpoint", "localhost:9000", "-o", page})
	if err := cmd.Execute(); err != nil {
		t.Fatal(err)
	}
	if gotEndpoint != "localhost:9000" {
		t.Errorf("the cluster sources got store endpoint %q", gotEndpoint)
	}
	if want := "1 of 2 failed runs linked to their traces (trace pages in " + filepath.Join(filepath.Dir(page), "r-traces") + ")"; !strings.Contains(stdout.String(), want) {
		t.Errorf("output %q lacks %q", stdout.String(), want)
	}
	if !strings.Contains(stderr.String(), "warning: ns/ev: The failed runs are not linked to their traces: the artifact store of ns/ev: connection refused") {
		t.Errorf("stderr %q lacks the store's warning", stderr.String())
	}
	b, err := os.ReadFile(page)
	if err != nil {
		t.Fatal(err)
	}
	html := string(b)
	m := regexp.MustCompile(`<a href="(\./r-traces/[^"]+)">\.\./p2</a>`).FindStringSubmatch(html)
	if m == nil {
		t.Fatalf("the report has no link of ../p2:\n%s", html)
	}
	tp, err := os.ReadFile(filepath.Join(filepath.Dir(page), filepath.FromSlash(m[1])))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(tp), "&lt;script&gt;alert(1)&lt;/script&gt;") {
		t.Errorf("the trace page does not show the completion escaped:\n%s", tp)
	}
	if !strings.Contains(html, "connection refused") {
		t.Errorf("the report does not say what failed")
	}
}
