package planning

import (
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"

	repotv1 "repot.dev/repot-operator/api/v1alpha1"
	revtesting "repot.dev/repot-operator/api/v1alpha1/testing"
	"repot.dev/repot-operator/contract"
	"repot.dev/repot-operator/controllers/build"
)

func TestDerailRunArgs(t *testing.T) {
	ev := revtesting.MakeEvaluation("ev", "ns").Simulated("m", "strong", 1).Suite(repotv1.SuiteDerail550).
		ProblemsURL("https://example.com/d.jsonl").Derail(repotv1.StatementFull, repotv1.DerailErrorOnly, repotv1.DerailRePoTFull).Obj()
	args := build.RunArgs(ev, &ev.Spec.Models[0])
	want := map[string]string{"--conditions": "error_only,repot-full", "--checkpoint-statement": "full", "--suite": "derail-550"}
	got := map[string]string{}
	for i := 0; i+1 < len(args); i++ {
		if _, ok := want[args[i]]; ok {
			got[args[i]] = args[i+1]
		}
		if args[i] == "--methods" {
			t.Errorf("a derail-550 runner got --methods: %v", args)
		}
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("args (-want +got):\n%s\n%v", d, args)
	}
	plain := revtesting.MakeEvaluation("ev", "ns").Simulated("m", "strong", 1).Obj()
	for _, a := range build.RunArgs(plain, &plain.Spec.Models[0]) {
		if a == "--conditions" || a == "--checkpoint-statement" {
			t.Errorf("open-source-120 runner got %s", a)
		}
	}
}

// derailRecord is one schema-2 record.
func derailRecord(model, cs, cond, statement, env, typ string, ok bool) contract.Record {
	stop := "invalid_move"
	if ok {
		stop = "goal"
	}
	return contract.Record{Model: model, ProblemID: cs, Environment: env, Method: cond, Success: ok, StoppedReason: stop, Calls: 1,
		PromptTokens: 100, CompletionTokens: 10,
		Derail: &contract.DerailRecord{Schema: contract.DerailSchema, CheckpointStatement: statement, InjectionType: typ}}
}

func TestDerailStatus(t *testing.T) {
	ev := revtesting.MakeEvaluation("ev", "ns").Simulated("m", "strong", 1).Suite(repotv1.SuiteDerail550).
		ProblemsURL("https://example.com/d.jsonl").Derail("", repotv1.DerailErrorOnly, repotv1.DerailStateLegal, repotv1.DerailRePoTRestart).Obj()
	var recs []contract.Record
	for i := 0; i < 10; i++ {
		cs, env := fmt.Sprintf("derail_%02d", i), []string{"blocksworld", "checker_jumping"}[i%2]
		recs = append(recs,
			derailRecord("m", cs, "error_only", "paper", env, "legal_wrong_action", i < 1),
			derailRecord("m", cs, "state_plus_legal_actions", "paper", env, "legal_wrong_action", i < 8),
			// a record of the other statement and one of another model never count
			derailRecord("m", cs, "state_plus_legal_actions", "full", env, "legal_wrong_action", false),
			derailRecord("other", cs, "error_only", "paper", env, "legal_wrong_action", true),
		)
	}
	// a record of the earlier protocol (no schema) is not a Derail result
	recs = append(recs, contract.Record{Model: "m", ProblemID: "derail_00", Method: "repot-restart", Success: true, StoppedReason: "goal"})
	res := ComputeResults(ev, recs)
	got := derailResults(ev, res.Derail["m"])
	if len(got) != 3 {
		t.Fatalf("%d results, want 3", len(got))
	}
	eo, sla, rst := got[0], got[1], got[2]
	if eo.Condition != repotv1.DerailErrorOnly || eo.Recovered != 1 || eo.Total != 10 || eo.Rate != "10.0%" || eo.VsErrorOnly != nil {
		t.Errorf("error_only %+v", eo)
	}
	if sla.Recovered != 8 || sla.Total != 10 || sla.VsErrorOnly == nil || sla.VsErrorOnly.ConditionOnly != 7 || sla.VsErrorOnly.DiffPoints != "+70.0" {
		t.Errorf("state_plus_legal_actions %+v (vs %+v)", sla, sla.VsErrorOnly)
	}
	if d := cmp.Diff([]repotv1.RateSplit{{Name: "blocksworld", Recovered: 4, Total: 5, Rate: "80.0%"}, {Name: "checker_jumping", Recovered: 4, Total: 5, Rate: "80.0%"}}, sla.ByEnvironment); d != "" {
		t.Errorf("split by environment (-want +got):\n%s", d)
	}
	if rst.Total != 0 || rst.Rate != "" {
		t.Errorf("repot-restart counted records of the earlier protocol: %+v", rst)
	}
	if col := derailColumn(ev, res); col != "eo 10.0% sla 80.0% rst -" {
		t.Errorf("column %q", col)
	}
	if ms := MethodResults(ev, res.Models["m"]); ms != nil {
		t.Errorf("method results for a derail evaluation: %+v", ms)
	}
	if res.RunsDone["m"] != 20 {
		t.Errorf("runs done %d, want 20 (other statements and the earlier protocol excluded)", res.RunsDone["m"])
	}
	if n := len(ev.Spec.MethodsOrDefault()); n != 3 {
		t.Errorf("runs per case %d, want the 3 conditions", n)
	}
}
