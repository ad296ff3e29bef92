package planning

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"

	repotv1 "repot.dev/repot-operator/api/v1alpha1"
	revtesting "repot.dev/repot-operator/api/v1alpha1/testing"
	"repot.dev/repot-operator/contract"
	"repot.dev/repot-operator/controllers/build"
)

func TestBudgetCaps(t *testing.T) {
	tok := func(v int64) *contract.BudgetCap { return &contract.BudgetCap{CompletionTokens: ptr.To(v)} }
	both := func(tokens, calls int64) *contract.BudgetCap {
		return &contract.BudgetCap{CompletionTokens: ptr.To(tokens), ModelCalls: ptr.To(calls)}
	}
	model := func(name string, tokens, calls int64) ModelSpend {
		return ModelSpend{Name: name, Spend: Spend{CompletionTokens: tokens, ModelCalls: calls}}
	}
	shard := func(m string, tokens, calls int64, stored *contract.BudgetCap) CapShard {
		return CapShard{Model: m, Recorded: Spend{CompletionTokens: tokens, ModelCalls: calls}, Stored: stored}
	}
	deref := func(cs []contract.BudgetCap) []*contract.BudgetCap {
		out := make([]*contract.BudgetCap, len(cs))
		for i := range cs {
			if !cs[i].IsZero() {
				out[i] = &cs[i]
			}
		}
		return out
	}
	for _, tc := range []struct {
		name    string
		budget  *repotv1.BudgetSpec
		models  []ModelSpend
		shards  []CapShard
		want    []*contract.BudgetCap // nil: no cap
		refresh bool
	}{{
		name:   "no budget: no caps, nothing to write",
		models: []ModelSpend{model("a", 10, 1)},
		shards: []CapShard{shard("a", 10, 1, nil)},
		want:   []*contract.BudgetCap{nil},
	}, {
		name:   "a GPU limit alone caps no call",
		budget: &repotv1.BudgetSpec{BudgetLimits: repotv1.BudgetLimits{MaxGPUHours: "1"}},
		models: []ModelSpend{model("a", 10, 1)},
		shards: []CapShard{shard("a", 10, 1, nil)},
		want:   []*contract.BudgetCap{nil},
	}, {
		name:   "the evaluation's remainder split over running models, then shards, each on top of its record",
		budget: &repotv1.BudgetSpec{BudgetLimits: repotv1.BudgetLimits{MaxCompletionTokens: ptr.To[int64](1000)}},
		// b does not run (no shard) but its spending counts: 1000-700 = 300 left, 150 per model.
		models:  []ModelSpend{model("a", 200, 0), model("b", 400, 0), model("c", 100, 0)},
		shards:  []CapShard{shard("a", 150, 0, nil), shard("a", 50, 0, nil), shard("c", 100, 0, nil)},
		want:    []*contract.BudgetCap{tok(150 + 75), tok(50 + 75), tok(100 + 150)},
		refresh: true,
	}, {
		name:    "an uneven remainder goes to the first shards",
		budget:  &repotv1.BudgetSpec{BudgetLimits: repotv1.BudgetLimits{MaxModelCalls: ptr.To[int64](10)}},
		models:  []ModelSpend{model("a", 0, 5)},
		shards:  []CapShard{shard("a", 0, 2, nil), shard("a", 0, 2, nil), shard("a", 0, 1, nil)},
		want:    []*contract.BudgetCap{{ModelCalls: ptr.To[int64](4)}, {ModelCalls: ptr.To[int64](4)}, {ModelCalls: ptr.To[int64](2)}},
		refresh: true,
	}, {
		name: "the per-model limit when tighter than the evaluation's share",
		budget: &repotv1.BudgetSpec{
			BudgetLimits: repotv1.BudgetLimits{MaxCompletionTokens: ptr.To[int64](10000), MaxModelCalls: ptr.To[int64](100)},
			PerModel:     []repotv1.ModelBudget{{Model: "a", BudgetLimits: repotv1.BudgetLimits{MaxCompletionTokens: ptr.To[int64](600)}}},
		},
		models:  []ModelSpend{model("a", 400, 10), model("b", 0, 0)},
		shards:  []CapShard{shard("a", 400, 10, nil), shard("b", 0, 0, nil)},
		want:    []*contract.BudgetCap{both(600, 10+45), both(4800, 45)},
		refresh: true,
	}, {
		name:    "past the limit: no share, the cap is the record",
		budget:  &repotv1.BudgetSpec{BudgetLimits: repotv1.BudgetLimits{MaxCompletionTokens: ptr.To[int64](100)}},
		models:  []ModelSpend{model("a", 130, 0)},
		shards:  []CapShard{shard("a", 130, 0, nil)},
		want:    []*contract.BudgetCap{tok(130)},
		refresh: true,
	}, {
		name:   "stored caps of the same computation stay as the shards spend",
		budget: &repotv1.BudgetSpec{BudgetLimits: repotv1.BudgetLimits{MaxCompletionTokens: ptr.To[int64](1000)}},
		// Stored at 0 spent: 500 each. Shard 0 spent 100 since, shard 1 200.
		models: []ModelSpend{model("a", 300, 0)},
		shards: []CapShard{shard("a", 100, 0, tok(500)), shard("a", 200, 0, tok(500))},
		want:   []*contract.BudgetCap{tok(100 + 350), tok(200 + 350)},
	}, {
		name:   "a shard with less than half its new share left gets new caps",
		budget: &repotv1.BudgetSpec{BudgetLimits: repotv1.BudgetLimits{MaxCompletionTokens: ptr.To[int64](1000)}},
		// Shard 1 has 500-410 = 90 left; its new share is (1000-510)/2 = 245.
		models:  []ModelSpend{model("a", 510, 0)},
		shards:  []CapShard{shard("a", 100, 0, tok(500)), shard("a", 410, 0, tok(500))},
		want:    []*contract.BudgetCap{tok(100 + 245), tok(410 + 245)},
		refresh: true,
	}, {
		name:   "a lowered limit replaces caps that allow more than is left",
		budget: &repotv1.BudgetSpec{BudgetLimits: repotv1.BudgetLimits{MaxCompletionTokens: ptr.To[int64](400)}},
		models: []ModelSpend{model("a", 300, 0)},
		// Stored left 400+400 = 800 > 100 left.
		shards:  []CapShard{shard("a", 100, 0, tok(500)), shard("a", 200, 0, tok(600))},
		want:    []*contract.BudgetCap{tok(150), tok(250)},
		refresh: true,
	}, {
		// The runner identity may patch its ledgers' annotations, the cap
		// among them: a cap raised past what the budget has left is
		// written back on the pass the patch brings.
		name:   "a cap its runner raised is replaced",
		budget: &repotv1.BudgetSpec{BudgetLimits: repotv1.BudgetLimits{MaxCompletionTokens: ptr.To[int64](1000)}},
		models: []ModelSpend{model("a", 300, 0)},
		// Stored at 0 spent: 500 each; shard 0 raised its own to 900.
		shards:  []CapShard{shard("a", 100, 0, tok(900)), shard("a", 200, 0, tok(500))},
		want:    []*contract.BudgetCap{tok(100 + 350), tok(200 + 350)},
		refresh: true,
	}, {
		name:    "a cap its runner removed or garbled is written again",
		budget:  &repotv1.BudgetSpec{BudgetLimits: repotv1.BudgetLimits{MaxCompletionTokens: ptr.To[int64](1000)}},
		models:  []ModelSpend{model("a", 0, 0)},
		shards:  []CapShard{shard("a", 0, 0, nil)},
		want:    []*contract.BudgetCap{tok(1000)},
		refresh: true,
	}, {
		name:    "a removed limit clears the caps",
		budget:  &repotv1.BudgetSpec{},
		models:  []ModelSpend{model("a", 300, 0)},
		shards:  []CapShard{shard("a", 300, 0, tok(500))},
		want:    []*contract.BudgetCap{nil},
		refresh: true,
	}, {
		name:    "a shard without its cap gets one",
		budget:  &repotv1.BudgetSpec{BudgetLimits: repotv1.BudgetLimits{MaxCompletionTokens: ptr.To[int64](1000)}},
		models:  []ModelSpend{model("a", 0, 0)},
		shards:  []CapShard{shard("a", 0, 0, tok(500)), shard("a", 0, 0, nil)},
		want:    []*contract.BudgetCap{tok(500), tok(500)},
		refresh: true,
	}} {
		t.Run(tc.name, func(t *testing.T) {
			caps, refresh := BudgetCaps(tc.budget, tc.models, tc.shards)
			if d := cmp.Diff(tc.want, deref(caps)); d != "" {
				t.Errorf("caps (-want +got):\n%s", d)
			}
			if refresh != tc.refresh {
				t.Errorf("refresh = %v, want %v", refresh, tc.refresh)
			}
		})
	}
}

func TestCompletedIndexes(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want map[int]bool
	}{
		{"", map[int]bool{}},
		{"2", map[int]bool{2: true}},
		{"0,3-5,7", map[int]bool{0: true, 3: true, 4: true, 5: true, 7: true}},
	} {
		got := completedIndexes(&batchv1.Job{Status: batchv1.JobStatus{CompletedIndexes: tc.in}})
		if d := cmp.Diff(tc.want, got); d != "" {
			t.Errorf("completedIndexes(%q) (-want +got):\n%s", tc.in, d)
		}
	}
}

// capAnnotations are a plan's budget cap annotations, by ledger name.
func capAnnotations(p Plan) map[string]string {
	out := map[string]string{}
	for _, a := range p.Annotate {
		if v, ok := a.Annotations[contract.LedgerBudgetCapAnnotation]; ok {
			out[a.Object.GetName()] = v
		}
	}
	return out
}

// The planner writes each running shard's cap on its ledger, leaves caps
// alone while they hold, and writes none for a shard its Job completed or
// for an evaluation without a limit of tokens or calls.
func TestPlanWritesBudgetCaps(t *testing.T) {
	e := revtesting.MakeEvaluation("ev", "ns").Simulated("sim", "strong", 1).Shards(2).Obj()
	e.Spec.Budget = &repotv1.BudgetSpec{BudgetLimits: repotv1.BudgetLimits{MaxCompletionTokens: ptr.To[int64](1000), MaxModelCalls: ptr.To[int64](50)}}
	w := newWorld()
	settle(e, w, t0)
	setServerReady(w, "ev", "sim", true)
	l0, l1 := build.LedgerName("ev", "sim", 0), build.LedgerName("ev", "sim", 1)
	// The pass that creates the runner Job writes the caps on its ledgers,
	// which exist already, so that its pods start under them.
	for p := step(e, w, t0); w.job(build.RunnerJobName("ev", "sim")) == nil; p = step(e, w, t0) {
		if len(p.Create) == 0 {
			t.Fatal("no runner Job")
		}
	}
	r := contract.Record{Model: "sim", ProblemID: "p1", Method: "pot", Environment: "tower_of_hanoi", Complexity: 3,
		Calls: 2, CompletionTokens: 100, Route: contract.RouteInitialSuccess, Success: true}
	line, _ := json.Marshal(r)
	byName[corev1.ConfigMap](w.Ledgers, l0).Data = map[string]string{contract.LedgerRecordsKey: string(line) + "\n"}
	w.Records = []contract.Record{r}

	// The budget split over the two shards.
	for _, l := range []string{l0, l1} {
		if got, want := byName[corev1.ConfigMap](w.Ledgers, l).Annotations[contract.LedgerBudgetCapAnnotation], `{"completionTokens":500,"modelCalls":25}`; got != want {
			t.Errorf("%s: cap %s, want %s", l, got, want)
		}
	}
	// Shard 0 spent within its cap: the caps hold.
	if got := capAnnotations(step(e, w, t0)); len(got) != 0 {
		t.Errorf("caps rewritten while they hold: %v", got)
	}

	// Shard 1 completed: shard 0 takes what is left, as its cap runs low.
	w.job(build.RunnerJobName("ev", "sim")).Status.CompletedIndexes = "1"
	byName[corev1.ConfigMap](w.Ledgers, l0).Annotations[contract.LedgerBudgetCapAnnotation] = `{"completionTokens":120,"modelCalls":3}`
	want := map[string]string{l0: `{"completionTokens":1000,"modelCalls":50}`}
	if d := cmp.Diff(want, capAnnotations(step(e, w, t0))); d != "" {
		t.Errorf("caps after shard 1 completed (-want +got):\n%s", d)
	}

	e.Spec.Budget = &repotv1.BudgetSpec{BudgetLimits: repotv1.BudgetLimits{MaxGPUHours: "5"}}
	want = map[string]string{l0: `{}`}
	if d := cmp.Diff(want, capAnnotations(step(e, w, t0))); d != "" {
		t.Errorf("caps after the limits of tokens and calls went (-want +got):\n%s", d)
	}
	if got := capAnnotations(step(e, w, t0)); len(got) != 0 {
		t.Errorf("caps written without a limit of tokens or calls: %v", got)
	}
}
