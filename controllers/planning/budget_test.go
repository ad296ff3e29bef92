package planning

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"k8s.io/utils/ptr"

	repotv1 "repot.dev/repot-operator/api/v1alpha1"
	revtesting "repot.dev/repot-operator/api/v1alpha1/testing"
	"repot.dev/repot-operator/contract"
	"repot.dev/repot-operator/controllers/build"
)

func TestOverBudget(t *testing.T) {
	limits := func(gpuHours string, tokens, calls int64) repotv1.BudgetLimits {
		l := repotv1.BudgetLimits{MaxGPUHours: gpuHours}
		if tokens > 0 {
			l.MaxCompletionTokens = ptr.To(tokens)
		}
		if calls > 0 {
			l.MaxModelCalls = ptr.To(calls)
		}
		return l
	}
	spend := func(name string, gpuSeconds, tokens, calls int64, gpus int32) ModelSpend {
		return ModelSpend{Name: name, Spend: Spend{GPUSeconds: gpuSeconds, CompletionTokens: tokens, ModelCalls: calls}, GPUs: gpus}
	}
	cases := []struct {
		name   string
		budget *repotv1.BudgetSpec
		models []ModelSpend
		want   BudgetDecision
	}{{
		name:   "no budget stops nothing",
		models: []ModelSpend{spend("a", 1e9, 1e9, 1e9, 8)},
		want:   BudgetDecision{Stop: []bool{false}},
	}, {
		name:   "tokens below the limit",
		budget: &repotv1.BudgetSpec{BudgetLimits: limits("", 1000, 0)},
		models: []ModelSpend{spend("a", 0, 400, 3, 0), spend("b", 0, 599, 3, 0)},
		want:   BudgetDecision{Stop: []bool{false, false}},
	}, {
		name:   "tokens summed over models reach the evaluation's limit: every model stops",
		budget: &repotv1.BudgetSpec{BudgetLimits: limits("", 1000, 0)},
		models: []ModelSpend{spend("a", 0, 400, 3, 0), spend("b", 0, 600, 3, 0)},
		want: BudgetDecision{Stop: []bool{true, true}, Reached: []string{
			"spec.budget.maxCompletionTokens 1000 reached (1000 used)"}},
	}, {
		name:   "calls and tokens both reached are both named",
		budget: &repotv1.BudgetSpec{BudgetLimits: limits("", 10, 5)},
		models: []ModelSpend{spend("a", 0, 40, 6, 0)},
		want: BudgetDecision{Stop: []bool{true}, Reached: []string{
			"spec.budget.maxCompletionTokens 10 reached (40 used)", "spec.budget.maxModelCalls 5 reached (6 made)"}},
	}, {
		name: "a model's own limit stops that model only",
		budget: &repotv1.BudgetSpec{BudgetLimits: limits("", 1e6, 0), PerModel: []repotv1.ModelBudget{
			{Model: "b", BudgetLimits: limits("", 0, 10)}, {Model: "c", BudgetLimits: limits("", 0, 100)}}},
		models: []ModelSpend{spend("a", 0, 500, 50, 0), spend("b", 0, 500, 10, 0), spend("c", 0, 500, 99, 0)},
		want: BudgetDecision{Stop: []bool{false, true, false}, Reached: []string{
			"spec.budget.perModel[b].maxModelCalls 10 reached (10 made)"}},
	}, {
		name:   "GPU-hours: 0.5 is 1800 GPU-seconds; below it, the time left at the GPUs running",
		budget: &repotv1.BudgetSpec{BudgetLimits: limits("0.5", 0, 0)},
		models: []ModelSpend{spend("a", 1000, 0, 0, 2), spend("b", 200, 0, 0, 0)},
		want:   BudgetDecision{Stop: []bool{false, false}, RecheckAfter: 300 * time.Second},
	}, {
		name:   "GPU-hours reached",
		budget: &repotv1.BudgetSpec{BudgetLimits: limits("0.5", 0, 0)},
		models: []ModelSpend{spend("a", 1600, 0, 0, 2), spend("b", 200, 0, 0, 0)},
		want: BudgetDecision{Stop: []bool{true, true}, Reached: []string{
			"spec.budget.maxGPUHours 0.5 reached (1800 GPU-seconds held)"}},
	}, {
		name:   "GPU-hours in thousandths: 0.001 is 3.6 GPU-seconds, 3 are not enough",
		budget: &repotv1.BudgetSpec{BudgetLimits: limits("0.001", 0, 0)},
		models: []ModelSpend{spend("a", 3, 0, 0, 1)},
		want:   BudgetDecision{Stop: []bool{false}, RecheckAfter: budgetRecheckFloor},
	}, {
		name: "a model's GPU limit: the recheck is the nearest limit",
		budget: &repotv1.BudgetSpec{BudgetLimits: limits("10", 0, 0), PerModel: []repotv1.ModelBudget{
			{Model: "a", BudgetLimits: limits("1", 0, 0)}}},
		models: []ModelSpend{spend("a", 3000, 0, 0, 4)},
		want:   BudgetDecision{Stop: []bool{false}, RecheckAfter: 150 * time.Second},
	}, {
		name:   "no GPU running: no recheck",
		budget: &repotv1.BudgetSpec{BudgetLimits: limits("1", 0, 0)},
		models: []ModelSpend{spend("a", 3000, 0, 0, 0)},
		want:   BudgetDecision{Stop: []bool{false}},
	}}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := OverBudget(tc.budget, tc.models)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("OverBudget (-want +got):\n%s", diff)
			}
		})
	}
}

func TestSpendCountsDistinctRuns(t *testing.T) {
	ev := revtesting.MakeEvaluation("ev", "ns").Simulated("m", "strong", 1).Methods(repotv1.MethodPoT).Obj()
	r := contract.Record{Model: "m", ProblemID: "p1", Method: "pot", Environment: "tower_of_hanoi", Complexity: 3,
		Calls: 2, CompletionTokens: 30, Route: contract.RouteInitialSuccess, Success: true}
	r2 := r
	r2.ProblemID = "p2"
	stray := r
	stray.Model = "other"
	res := ComputeResults(ev, []contract.Record{r, r, r2, stray})
	want := map[string]Spend{"m": {CompletionTokens: 60, ModelCalls: 4}}
	if diff := cmp.Diff(want, res.Spend); diff != "" {
		t.Errorf("spend (-want +got):\n%s", diff)
	}
}

// The calls of an aborted attempt that returned before its runner stopped
// count toward the spend, each attempt once, and change no result.
func TestSpendCountsAbortedAttempts(t *testing.T) {
	ev := revtesting.MakeEvaluation("ev", "ns").Simulated("m", "strong", 1).Methods(repotv1.MethodPoT).Obj()
	r := contract.Record{Model: "m", ProblemID: "p1", Method: "pot", Environment: "tower_of_hanoi", Complexity: 3,
		Calls: 2, CompletionTokens: 30, Route: contract.RouteInitialSuccess, Success: true}
	aborted := contract.Record{Model: "m", ProblemID: "p1", Method: "pot", Environment: "tower_of_hanoi", Complexity: 3,
		Aborted: true, StartedUnixMilli: 1000, Calls: 1, CompletionTokens: 70}
	other := aborted
	other.ProblemID, other.StartedUnixMilli = "p2", 2000
	without := ComputeResults(ev, []contract.Record{r})
	res := ComputeResults(ev, []contract.Record{aborted, r, aborted, other})
	want := map[string]Spend{"m": {CompletionTokens: 170, ModelCalls: 4}}
	if diff := cmp.Diff(want, res.Spend); diff != "" {
		t.Errorf("spend (-want +got):\n%s", diff)
	}
	res.Spend, without.Spend = nil, nil
	if diff := cmp.Diff(without, res); diff != "" {
		t.Errorf("aborted attempts changed the results (-without +with):\n%s", diff)
	}
}

// TestPlanStopsAndResumesOnBudget follows a one-model evaluation through
// its budget: running, the limit reached (runner Job and server deleted),
// BudgetExhausted with the recorded runs kept, and resumed by a raised
// limit.
func TestPlanStopsAndResumesOnBudget(t *testing.T) {
	e := revtesting.MakeEvaluation("ev", "ns").Simulated("sim", "strong", 1).Shards(1).Obj()
	e.Spec.Budget = &repotv1.BudgetSpec{BudgetLimits: repotv1.BudgetLimits{MaxCompletionTokens: ptr.To[int64](100)}}
	w := newWorld()
	settle(e, w, t0)
	setServerReady(w, "ev", "sim", true)
	settle(e, w, t0)
	job, server := build.RunnerJobName("ev", "sim"), build.ServerName("ev", "sim")
	if w.job(job) == nil {
		t.Fatal("no runner Job before the budget is reached")
	}
	rec := func(p string, tokens int) contract.Record {
		return contract.Record{Model: "sim", ProblemID: p, Method: "pot", Environment: "tower_of_hanoi", Complexity: 3,
			Calls: 1, CompletionTokens: tokens, Route: contract.RouteInitialSuccess, Success: true}
	}
	w.Records = []contract.Record{rec("p1", 60)}
	if d := digest(step(e, w, t0)); len(d.Delete) != 0 || d.State != repotv1.StateRunning {
		t.Fatalf("below the limit: deletes %v, state %s; want none, Running", d.Delete, d.State)
	}

	w.Records = append(w.Records, rec("p2", 40))
	got := digest(step(e, w, t0))
	if diff := cmp.Diff([]string{"Deployment/" + server, "Service/" + server, "Job/" + job}, got.Delete); diff != "" {
		t.Errorf("deletes at the limit (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"BudgetExhausted"}, got.Events); diff != "" {
		t.Errorf("events at the limit (-want +got):\n%s", diff)
	}
	got = digest(step(e, w, t0))
	want := planDigest{
		State: repotv1.StateBudgetExhausted,
		Conditions: conds("False/ServersStopped", "False/BudgetExhausted", "False/BudgetExhausted", "False/BudgetExhausted",
			"False/BudgetExhausted", "False/BudgetExhausted", "True/BudgetExhausted"),
		Servers: []string{"sim=Stopped/BudgetExhausted"},
		Started: true,
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("exhausted (-want +got):\n%s", diff)
	}
	wantBudget := &repotv1.BudgetStatus{
		Exhausted: true, Partial: true, RunsNotStarted: 120*4 - 2,
		Used:    repotv1.BudgetUsage{CompletionTokens: 100, ModelCalls: 2},
		Models:  []repotv1.ModelBudgetStatus{{Name: "sim", Used: repotv1.BudgetUsage{CompletionTokens: 100, ModelCalls: 2}, Stopped: true}},
		Message: "spec.budget.maxCompletionTokens 100 reached (100 used)",
	}
	if diff := cmp.Diff(wantBudget, e.Status.Budget); diff != "" {
		t.Errorf("status.budget (-want +got):\n%s", diff)
	}
	if e.Status.Progress.RunsDone != 2 || e.Status.CompletionTime != nil {
		t.Errorf("runsDone %d, completionTime %v; want 2 and none (the evaluation can resume)", e.Status.Progress.RunsDone, e.Status.CompletionTime)
	}
	if d := digest(step(e, w, t0)); len(d.Create) != 0 {
		t.Errorf("an exhausted evaluation creates %v", d.Create)
	}

	e.Spec.Budget.MaxCompletionTokens = ptr.To[int64](1000)
	e.Generation++
	got = digest(step(e, w, t0))
	if diff := cmp.Diff([]string{"Service/" + server, "Deployment/" + server}, got.Create); diff != "" {
		t.Errorf("creates after the budget was raised (-want +got):\n%s", diff)
	}
	if e.Status.Budget.Exhausted || e.Status.Budget.Partial {
		t.Errorf("status.budget after the raise: %+v", e.Status.Budget)
	}
}
