package summary

import (
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"repot.dev/repot-operator/contract"
)

func drec(model, cs, cond, statement, env, typ string, ok bool, infra string) contract.Record {
	stop := "invalid_move"
	if ok {
		stop = "goal"
	}
	return contract.Record{Model: model, ProblemID: cs, Environment: env, Method: cond, Success: ok, StoppedReason: stop, Calls: 1,
		PromptTokens: 100, CompletionTokens: 10, InfraError: infra,
		Derail: &contract.DerailRecord{Schema: contract.DerailSchema, CheckpointStatement: statement, InjectionType: typ}}
}

func TestAggregateDerail(t *testing.T) {
	var recs []contract.Record
	for i := 0; i < 8; i++ {
		cs := fmt.Sprintf("c%d", i)
		env := []string{"blocksworld", "river_crossing"}[i%2]
		typ := "legal_wrong_action"
		if i == 7 {
			typ = "invalid_action"
		}
		recs = append(recs,
			drec("m", cs, contract.CondErrorOnly, contract.StatementPaper, env, typ, i == 0, ""),
			drec("m", cs, contract.CondStateLegal, contract.StatementPaper, env, typ, i < 6, ""),
			drec("m", cs, contract.CondRePoTFull, contract.StatementPaper, env, typ, i == 1, ""),
			drec("m", cs, contract.CondRePoTFull, contract.StatementFull, env, typ, i < 5, ""),
		)
	}
	recs = append(recs,
		// an infra error is counted apart
		drec("m", "c8", contract.CondErrorOnly, contract.StatementPaper, "blocksworld", "legal_wrong_action", false, "reset"),
		// a record of the earlier protocol stays out of the Derail figures
		contract.Record{Model: "m", ProblemID: "c0", Method: contract.MethodRePoTRestart, Success: true, StoppedReason: "goal", Calls: 1},
	)
	s := Aggregate(recs)
	if len(s.Models) != 1 || s.Models[0].Methods[0].Method != contract.MethodRePoTRestart || s.Models[0].Methods[0].Total != 1 {
		t.Errorf("the earlier protocol's record should stay a method record: %+v", s.Models)
	}
	if len(s.Derail) != 2 || s.Derail[0].CheckpointStatement != contract.StatementFull || s.Derail[1].CheckpointStatement != contract.StatementPaper {
		t.Fatalf("derail groups: %+v", s.Derail)
	}
	full, paper := s.Derail[0], s.Derail[1]
	if full.Cases != 8 || len(full.Conditions) != 1 || full.Conditions[0].Solved != 5 || len(full.VsErrorOnly) != 0 {
		t.Errorf("full statement: %+v", full)
	}
	var names []string
	for _, c := range paper.Conditions {
		names = append(names, c.Condition)
	}
	if d := cmp.Diff([]string{contract.CondErrorOnly, contract.CondStateLegal, contract.CondRePoTFull}, names); d != "" {
		t.Errorf("condition order (-want +got):\n%s", d)
	}
	eo, sla := paper.Conditions[0], paper.Conditions[1]
	if eo.Total != 8 || eo.Solved != 1 || eo.InfraErrors != 1 || eo.Percent != "12.5%" || eo.TokensPerRun.Prompt != 100 {
		t.Errorf("error_only: %+v", eo)
	}
	want := []Split{{Name: "invalid_action", Rate: newRate(0, 1)}, {Name: "legal_wrong_action", Rate: newRate(6, 7)}}
	if d := cmp.Diff(want, sla.ByInjectionType); d != "" {
		t.Errorf("split by injection type (-want +got):\n%s", d)
	}
	if d := cmp.Diff([]Split{{Name: "blocksworld", Rate: newRate(3, 4)}, {Name: "river_crossing", Rate: newRate(3, 4)}}, sla.ByEnvironment); d != "" {
		t.Errorf("split by environment (-want +got):\n%s", d)
	}
	if len(paper.VsErrorOnly) != 2 {
		t.Fatalf("comparisons: %+v", paper.VsErrorOnly)
	}
	c := paper.VsErrorOnly[0]
	if c.Method != contract.CondStateLegal || c.Baseline != contract.CondErrorOnly || c.Problems != 8 || c.MethodOnly != 5 || c.BaselineOnly != 0 || c.DiffPoints != "+62.5" || c.PValue != "0.0625" {
		t.Errorf("state_plus_legal_actions vs error_only: %+v", c)
	}
	// keys keep statements and the earlier protocol apart
	a := drec("m", "c0", contract.CondRePoTRestart, contract.StatementPaper, "", "", true, "")
	b := contract.Record{Model: "m", ProblemID: "c0", Method: contract.CondRePoTRestart}
	f := drec("m", "c0", contract.CondRePoTRestart, contract.StatementFull, "", "", true, "")
	if a.Key() == b.Key() || a.Key() == f.Key() {
		t.Errorf("keys collide: %q %q %q", a.Key(), b.Key(), f.Key())
	}
}

// TestDerailTableNewConditions: the step-by-step agent and the three VEX
// conditions get their own rows in contract.DerailConditions order (after
// the prompted ones and among the RePoT ones as listed there), with their
// own stop reasons, in the figures and in the printed table.
func TestDerailTableNewConditions(t *testing.T) {
	conds := []string{contract.CondVEXRestart, contract.CondStateGuard, contract.CondErrorOnly, contract.CondVEXNoPrefix, contract.CondRePoTFull, contract.CondVEXFull}
	var recs []contract.Record
	for i, cond := range conds {
		r := drec("m", "c0", cond, contract.StatementPaper, "blocksworld", "legal_wrong_action", i%2 == 0, "")
		if cond == contract.CondStateGuard {
			r.Success, r.StoppedReason = false, contract.StopRepetitionLoop
		}
		recs = append(recs, r)
	}
	s := Aggregate(recs)
	if len(s.Derail) != 1 {
		t.Fatalf("derail groups: %+v", s.Derail)
	}
	var names []string
	for _, c := range s.Derail[0].Conditions {
		names = append(names, c.Condition)
	}
	want := []string{contract.CondErrorOnly, contract.CondStateGuard, contract.CondRePoTFull, contract.CondVEXFull, contract.CondVEXNoPrefix, contract.CondVEXRestart}
	if d := cmp.Diff(want, names); d != "" {
		t.Errorf("condition rows (-want +got):\n%s", d)
	}
	var b strings.Builder
	if err := WriteDerailTable(&b, s.Derail); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(b.String(), "\n")
	at := 0
	for _, c := range want {
		for at < len(lines) && !strings.HasPrefix(lines[at], c+" ") {
			at++
		}
		if at == len(lines) {
			t.Fatalf("no row %s in order in the table:\n%s", c, b.String())
		}
		if c == contract.CondStateGuard && !strings.Contains(lines[at], contract.StopRepetitionLoop+" 1") {
			t.Errorf("stateguard row lacks its stop reason: %s", lines[at])
		}
	}
}
