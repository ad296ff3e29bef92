package planning

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	repotv1 "repot.dev/repot-operator/api/v1alpha1"
	revtesting "repot.dev/repot-operator/api/v1alpha1/testing"
	"repot.dev/repot-operator/contract"
	"repot.dev/repot-operator/controllers/build"
)

// TestPlanSeal: the ledgers (and spills) of an evaluation are sealed once
// its stored status records the end, never on the pass that first writes
// it, never twice, and not when the TTL deletes the evaluation now. The
// status does not depend on the seal.
func TestPlanSeal(t *testing.T) {
	sealOf := func(names ...string) []string {
		var out []string
		for _, n := range names {
			out = append(out, "ConfigMap/"+n+" annotate="+build.AnnotationSealed)
		}
		return out
	}
	ledger0, ledger1 := build.LedgerName("ev", "sim", 0), build.LedgerName("ev", "sim", 1)
	cases := []struct {
		name  string
		eval  *repotv1.RepotEvaluation
		setup func(e *repotv1.RepotEvaluation, w *World)
		now   time.Time
		want  []string
		// requeue, when set, is the plan's RequeueAfter.
		requeue time.Duration
	}{{
		name:  "a running evaluation's ledgers stay unsealed",
		eval:  revtesting.MakeEvaluation("ev", "ns").Simulated("sim", "strong", 1).Shards(2).Obj(),
		setup: func(e *repotv1.RepotEvaluation, w *World) { runToRunning(e, w) },
	}, {
		name: "the pass that first records the end seals nothing",
		eval: revtesting.MakeEvaluation("ev", "ns").Simulated("sim", "strong", 1).Shards(2).Obj(),
		setup: func(e *repotv1.RepotEvaluation, w *World) {
			runToRunning(e, w)
			finishJob(w, build.RunnerJobName("ev", "sim"), batchv1.JobComplete, "CompletionsReached")
		},
		// ... but asks for the pass that seals.
		requeue: sealAfter,
	}, {
		name: "once the stored status records completion, every ledger is sealed",
		eval: revtesting.MakeEvaluation("ev", "ns").Simulated("sim", "strong", 1).Shards(2).Obj(),
		setup: func(e *repotv1.RepotEvaluation, w *World) {
			runToRunning(e, w)
			finishJob(w, build.RunnerJobName("ev", "sim"), batchv1.JobComplete, "CompletionsReached")
			step(e, w, t0)
		},
		want: sealOf(ledger0, ledger1),
	}, {
		name: "spills are sealed with their ledger",
		// Custom problems of unknown count: each shard's ledger gets spills.
		eval: revtesting.MakeEvaluation("ev", "ns").Simulated("sim", "strong", 1).Shards(1).ProblemsConfigMap("probs", "").Obj(),
		setup: func(e *repotv1.RepotEvaluation, w *World) {
			w.Problems = problemsInfo{Count: 10}
			runToRunning(e, w)
			finishJob(w, build.RunnerJobName("ev", "sim"), batchv1.JobComplete, "CompletionsReached")
			step(e, w, t0)
		},
		want: func() []string {
			e := revtesting.MakeEvaluation("ev", "ns").Simulated("sim", "strong", 1).Shards(1).ProblemsConfigMap("probs", "").Obj()
			var names []string
			for _, cm := range build.LedgerConfigMaps(e, &e.Spec.Models[0]) {
				names = append(names, cm.Name)
			}
			if len(names) < 2 {
				t.Fatalf("the evaluation has no spills: %v", names)
			}
			return sealOf(names...)
		}(),
	}, {
		name: "a failed evaluation is sealed too",
		eval: revtesting.MakeEvaluation("ev", "ns").Simulated("sim", "strong", 1).Shards(2).ActiveDeadline(600).Obj(),
		setup: func(e *repotv1.RepotEvaluation, w *World) {
			runToRunning(e, w)
			step(e, w, t0.Add(700*time.Second))
		},
		now:  t0.Add(800 * time.Second),
		want: sealOf(ledger0, ledger1),
	}, {
		name: "only the ledgers not sealed yet",
		eval: revtesting.MakeEvaluation("ev", "ns").Simulated("sim", "strong", 1).Shards(2).Obj(),
		setup: func(e *repotv1.RepotEvaluation, w *World) {
			runToRunning(e, w)
			finishJob(w, build.RunnerJobName("ev", "sim"), batchv1.JobComplete, "CompletionsReached")
			step(e, w, t0)
			seal(byName[corev1.ConfigMap](w.Ledgers, ledger0))
		},
		want: sealOf(ledger1),
	}, {
		name: "sealed ledgers are left alone",
		eval: revtesting.MakeEvaluation("ev", "ns").Simulated("sim", "strong", 1).Shards(2).Obj(),
		setup: func(e *repotv1.RepotEvaluation, w *World) {
			runToRunning(e, w)
			finishJob(w, build.RunnerJobName("ev", "sim"), batchv1.JobComplete, "CompletionsReached")
			step(e, w, t0)
			step(e, w, t0)
		},
	}, {
		name: "the TTL deletes the evaluation without sealing it",
		eval: revtesting.MakeEvaluation("ev", "ns").Simulated("sim", "strong", 1).Shards(2).TTL(60).Obj(),
		setup: func(e *repotv1.RepotEvaluation, w *World) {
			runToRunning(e, w)
			finishJob(w, build.RunnerJobName("ev", "sim"), batchv1.JobComplete, "CompletionsReached")
			step(e, w, t0)
		},
		now: t0.Add(61 * time.Second),
	}}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			e, w := tc.eval, newWorld()
			tc.setup(e, w)
			now := tc.now
			if now.IsZero() {
				now = t0
			}
			w.Now = now
			p := PlanEvaluation(e, w, testOpts)
			var got []string
			for _, a := range p.Annotate {
				got = append(got, kindName(a.Object)+" annotate="+build.AnnotationSealed)
				if a.Annotations[build.AnnotationSealed] != build.SealedValue || len(a.Annotations) != 1 {
					t.Errorf("%s: annotations %v", a.Object.GetName(), a.Annotations)
				}
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("sealed (-want +got):\n%s", diff)
			}
			if tc.requeue != 0 && p.RequeueAfter != tc.requeue {
				t.Errorf("requeue after %s, want %s", p.RequeueAfter, tc.requeue)
			}
		})
	}
}

// TestSealKeepsStatus: an ended evaluation's status is the same whether its
// ledgers are sealed or not (the snapshot reads sealed ledgers from the API
// server, so the world holds the same records).
func TestSealKeepsStatus(t *testing.T) {
	e := revtesting.MakeEvaluation("ev", "ns").Simulated("sim", "strong", 1).Shards(2).Obj()
	w := newWorld()
	runToRunning(e, w)
	w.Records = []contract.Record{
		{Model: "sim", ProblemID: "p1", Method: "pot", Success: true, Route: contract.RouteInitialSuccess, Calls: 1, PromptTokens: 100},
		{Model: "sim", ProblemID: "p2", Method: "repot", Route: contract.RouteSuffixRepair, Calls: 2, CompletionTokens: 80},
	}
	finishJob(w, build.RunnerJobName("ev", "sim"), batchv1.JobComplete, "CompletionsReached")
	step(e, w, t0)
	w.Now = t0.Add(time.Minute)
	before := PlanEvaluation(e, w, testOpts)
	if len(before.Annotate) == 0 {
		t.Fatal("nothing sealed")
	}
	applyToWorld(e, w, before)
	for i := range w.Ledgers {
		if !IsSealed(&w.Ledgers[i]) {
			t.Fatalf("%s not sealed", w.Ledgers[i].Name)
		}
	}
	after := PlanEvaluation(e, w, testOpts)
	if len(after.Annotate)+len(after.Create)+len(after.Update)+len(after.Delete) != 0 {
		t.Errorf("a sealed evaluation's pass changes children: %+v", digest(after))
	}
	if diff := cmp.Diff(before.Status, after.Status); diff != "" {
		t.Errorf("status after sealing (-before +after):\n%s", diff)
	}
	if diff := cmp.Diff(e.Status, after.Status, cmp.Transformer("second", func(t metav1.Time) time.Time { return t.Truncate(time.Second) })); diff != "" {
		t.Errorf("a sealed evaluation's status differs from the stored one (-stored +planned):\n%s", diff)
	}
}

func seal(cm *corev1.ConfigMap) {
	if cm.Annotations == nil {
		cm.Annotations = map[string]string{}
	}
	cm.Annotations[build.AnnotationSealed] = build.SealedValue
}
