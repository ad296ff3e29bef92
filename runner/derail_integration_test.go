package runner

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"repot.dev/repot-operator/analysis/summary"
	"repot.dev/repot-operator/contract"
	"repot.dev/repot-operator/runner/methods"
	"repot.dev/repot-operator/runner/model"
	"repot.dev/repot-operator/runner/runnertest"
)

// runDerailSuite runs every published case under every condition against
// the simulated strong model, through the real client and sandbox, into
// dir, and returns the summary.
func runDerailSuite(t *testing.T, tasks []methods.DerailTask, conds []string, statement, dir string) summary.Summary {
	t.Helper()
	hs := startSim(t, simOptions(t, 3, 0), nil)
	out, err := OpenOutput(dir, "", false)
	if err != nil {
		t.Fatal(err)
	}
	defer out.Close()
	opts := methods.DefaultOptions()
	opts.Model, opts.CheckpointStatement = "sim-strong", statement
	cfg := Config{
		Derail: tasks, Methods: conds, Options: opts,
		Deps: methods.Deps{Client: simClient(t, hs, 3), Sandbox: realSandbox(t), Clock: model.SystemClock},
	}
	res, s, err := Execute(context.Background(), cfg, out)
	if err != nil {
		t.Fatal(err)
	}
	if want := len(tasks) * len(conds); res.Aborted || len(res.Records) != want {
		t.Fatalf("%d of %d runs (aborted %v)", len(res.Records), want, res.Aborted)
	}
	return s
}

// TestDerail550AgainstSimServer is the done-when run: all 550 cases
// x 7 conditions against the simulated server under the paper's
// checkpoint statement, then the two conditions the statement changes
// (repot-full, repot-no-prefix) under the full one. The simulated profile
// makes recovery grow with what the prompt carries and makes a first call
// that sees no state fail, so the summary must order: no_feedback <=
// error_only < state_feedback <= state_plus_legal_actions; under the
// paper's statement repot-full < repot-restart; and the full statement
// lifts repot-full.
func TestDerail550AgainstSimServer(t *testing.T) {
	if testing.Short() {
		t.Skip("4950 runs through the real sandbox; skipped with -short")
	}
	tasks := loadDerail(t)
	rates := map[string]map[string]int{}
	runs := map[string][]string{
		contract.StatementPaper: contract.DerailConditions,
		contract.StatementFull:  {contract.CondRePoTFull, contract.CondRePoTNoPrefix},
	}
	for _, st := range contract.DerailStatements {
		dir := t.TempDir()
		s := runDerailSuite(t, tasks, runs[st], st, dir)
		if len(s.Models) != 0 || len(s.Derail) != 1 {
			t.Fatalf("%s: summary has %d method models and %d derail entries", st, len(s.Models), len(s.Derail))
		}
		d := s.Derail[0]
		wantCmp := len(runs[st]) - 1
		if st == contract.StatementFull {
			wantCmp = 0 // no error_only to compare with
		}
		if d.Cases != 550 || d.CheckpointStatement != st || len(d.Conditions) != len(runs[st]) || len(d.VsErrorOnly) != wantCmp {
			t.Fatalf("%s: derail summary shape: cases %d conditions %d comparisons %d", st, d.Cases, len(d.Conditions), len(d.VsErrorOnly))
		}
		rates[st] = map[string]int{}
		for _, c := range d.Conditions {
			rates[st][c.Condition] = c.Permille
			if c.Total != 550 || c.InfraErrors != 0 || c.Interval == "" || len(c.ByEnvironment) != 3 || len(c.ByInjectionType) != 2 || len(c.StopReasons) == 0 || c.TokensPerRun.Prompt == 0 {
				t.Errorf("%s/%s: incomplete figures %+v", st, c.Condition, c)
			}
		}
		var table strings.Builder
		if err := summary.WriteTable(&table, s); err != nil {
			t.Fatal(err)
		}
		t.Logf("checkpoint statement %s:\n%s", st, table.String())
		if b, err := os.ReadFile(filepath.Join(dir, contract.SummaryFile)); err != nil || !strings.Contains(string(b), `"checkpoint_statement": "`+st+`"`) {
			t.Errorf("summary.json lacks the derail section: %v", err)
		}
	}
	// The published cases come 25 to a level, and a level's 25 prompts are
	// identical (PuzzleZoo problems are fully determined by environment and
	// complexity), so a deterministic model sees 22 distinct cases: more
	// information never lowers recovery in the simulation, and the
	// checkpoint lifts it clearly above the error signal alone.
	p := rates[contract.StatementPaper]
	order := []string{contract.CondNoFeedback, contract.CondErrorOnly, contract.CondStateFeedback, contract.CondStateLegal}
	for i := 1; i < len(order); i++ {
		if p[order[i]] < p[order[i-1]] {
			t.Errorf("%s (%d per mille) should recover at least as often as %s (%d)", order[i], p[order[i]], order[i-1], p[order[i-1]])
		}
	}
	if p[contract.CondStateFeedback] <= p[contract.CondErrorOnly] || p[contract.CondErrorOnly] <= p[contract.CondNoFeedback] && p[contract.CondStateLegal] <= p[contract.CondErrorOnly] {
		t.Errorf("the checkpoint should lift recovery above error_only: %v", p)
	}
	if p[contract.CondRePoTFull] >= p[contract.CondRePoTRestart] {
		t.Errorf("paper statement: repot-full %d should be below repot-restart %d (its first call sees no state)", p[contract.CondRePoTFull], p[contract.CondRePoTRestart])
	}
	if f := rates[contract.StatementFull]; f[contract.CondRePoTFull] <= p[contract.CondRePoTFull] {
		t.Errorf("the full statement should lift repot-full: %d vs %d", f[contract.CondRePoTFull], p[contract.CondRePoTFull])
	}
}

// TestDerailRefusesLegacyRecords: a records file with Derail records of the
// earlier protocol is not resumed into.
func TestDerailRefusesLegacyRecords(t *testing.T) {
	tasks := loadDerail(t)[:1]
	dir := t.TempDir()
	legacy := `{"model":"sim-strong","problem_id":"` + tasks[0].Case.CaseID + `","method":"repot-restart","success":true,"stopped_reason":"goal","route":"suffix_repair","calls":1}` + "\n"
	if err := os.WriteFile(filepath.Join(dir, contract.RecordsFile), []byte(legacy), 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := OpenOutput(dir, "", true)
	if err != nil {
		t.Fatal(err)
	}
	defer out.Close()
	cfg := Config{Derail: tasks, Methods: contract.DerailConditions, Options: methods.DefaultOptions(),
		Deps: methods.Deps{Client: &runnertest.ScriptedClient{}, Sandbox: runnertest.FakeSandbox}}
	if _, _, err := Execute(context.Background(), cfg, out); err == nil || !strings.Contains(err.Error(), "earlier protocol") {
		t.Errorf("err = %v, want a refusal naming the earlier protocol", err)
	}
}
