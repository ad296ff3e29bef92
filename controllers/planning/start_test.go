package planning

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	kueue "sigs.k8s.io/kueue/apis/kueue/v1beta2"

	repotv1 "repot.dev/repot-operator/api/v1alpha1"
	revtesting "repot.dev/repot-operator/api/v1alpha1/testing"
	"repot.dev/repot-operator/controllers/build"
	"repot.dev/repot-operator/controllers/kueueadapter"
)

// queuedEval is a one-model evaluation in the Kueue queue gpus with a
// one-minute activeDeadlineSeconds.
func queuedEval() *repotv1.RepotEvaluation {
	return revtesting.MakeEvaluation("ev", "ns").Simulated("sim", "strong", 1).Shards(1).ActiveDeadline(60).
		Label(kueueadapter.QueueNameLabel, "gpus").Obj()
}

// queuedPass plans one pass of a queued evaluation as the reconciler does
// (world.Admitted from the Workloads) and applies it, the Workloads it
// submits included.
func queuedPass(e *repotv1.RepotEvaluation, w *World, now time.Time) Plan {
	if w.Kueue.Workloads == nil {
		w.Kueue.Workloads = map[string]*kueue.Workload{}
	}
	w.Admitted = AdmittedModels(e, w)
	p := step(e, w, now)
	for _, op := range p.Queue {
		if op.Kind == kueueadapter.QueueSubmit {
			w.Kueue.Workloads[op.Workload.Labels[build.LabelModel]] = op.Workload
		}
	}
	return p
}

// admit marks a model's Workload admitted as Kueue would.
func admit(w *World, model string) {
	wl := w.Kueue.Workloads[model]
	wl.Status.Admission = &kueue.Admission{ClusterQueue: "gpus", PodSetAssignments: []kueue.PodSetAssignment{
		{Name: kueueadapter.PodSetServer, Flavors: map[corev1.ResourceName]kueue.ResourceFlavorReference{"nvidia.com/gpu": "h100"}},
		{Name: kueueadapter.PodSetRunners, Flavors: map[corev1.ResourceName]kueue.ResourceFlavorReference{corev1.ResourceCPU: "h100"}}}}
	wl.Status.Conditions = []metav1.Condition{cond(kueue.WorkloadQuotaReserved, metav1.ConditionTrue, ""), cond(kueue.WorkloadAdmitted, metav1.ConditionTrue, "")}
	w.Kueue.Flavors = map[string]*kueue.ResourceFlavor{"h100": {ObjectMeta: metav1.ObjectMeta{Name: "h100"}}}
}

// status.startTime is the creation of the first child that costs something
// (a server Deployment or a runner Job), not of the runner's access objects
// or a Workload: a queued evaluation has not started, its spec stays
// editable and spec.activeDeadlineSeconds does not count its time in the
// queue.
func TestStartTimeIsTheFirstServerOrRunner(t *testing.T) {
	server := "Deployment/" + build.ServerName("ev", "sim")
	type want struct {
		Started   bool
		StartedAt time.Time
		State     repotv1.EvaluationState
		Failed    string
		Creates   bool // whether the last pass created the server
	}
	cases := []struct {
		name   string
		eval   *repotv1.RepotEvaluation
		opts   func(o *build.Options)
		passes func(e *repotv1.RepotEvaluation, w *World) Plan
		want   want
	}{{
		name: "a pass that creates only the runner's access does not start the evaluation",
		eval: revtesting.MakeEvaluation("ev", "ns").Simulated("sim", "strong", 1).ActiveDeadline(60).Obj(),
		opts: func(o *build.Options) { o.CreatesPerPass = 3 },
		passes: func(e *repotv1.RepotEvaluation, w *World) Plan {
			return step(e, w, t0)
		},
		want: want{State: repotv1.StatePending, Failed: "False/InProgress"},
	}, {
		name: "the pass that creates the server starts it",
		eval: revtesting.MakeEvaluation("ev", "ns").Simulated("sim", "strong", 1).ActiveDeadline(60).Obj(),
		opts: func(o *build.Options) { o.CreatesPerPass = 3 },
		passes: func(e *repotv1.RepotEvaluation, w *World) Plan {
			// Three creates a pass: the access first, the server last.
			step(e, w, t0)
			step(e, w, t0.Add(time.Minute))
			return step(e, w, t0.Add(time.Hour))
		},
		want: want{Started: true, StartedAt: t0.Add(time.Hour), State: repotv1.StatePending, Failed: "False/InProgress", Creates: true},
	}, {
		name: "queued and not admitted: the Workload and the access exist, the evaluation has not started",
		eval: queuedEval(),
		passes: func(e *repotv1.RepotEvaluation, w *World) Plan {
			queuedPass(e, w, t0)
			return queuedPass(e, w, t0.Add(time.Second))
		},
		want: want{State: repotv1.StatePending, Failed: "False/InProgress"},
	}, {
		name: "queued past activeDeadlineSeconds without admission: not failed, not started",
		eval: queuedEval(),
		passes: func(e *repotv1.RepotEvaluation, w *World) Plan {
			queuedPass(e, w, t0)
			queuedPass(e, w, t0.Add(time.Second))
			return queuedPass(e, w, t0.Add(2*time.Hour))
		},
		want: want{State: repotv1.StatePending, Failed: "False/InProgress"},
	}, {
		name: "admission after hours in the queue: the pass that creates the server starts it",
		eval: queuedEval(),
		passes: func(e *repotv1.RepotEvaluation, w *World) Plan {
			queuedPass(e, w, t0)
			queuedPass(e, w, t0.Add(time.Second))
			admit(w, "sim")
			return queuedPass(e, w, t0.Add(2*time.Hour))
		},
		want: want{Started: true, StartedAt: t0.Add(2 * time.Hour), State: repotv1.StatePending, Failed: "False/InProgress", Creates: true},
	}, {
		name: "the deadline counts from the admission's start",
		eval: queuedEval(),
		passes: func(e *repotv1.RepotEvaluation, w *World) Plan {
			queuedPass(e, w, t0)
			admit(w, "sim")
			queuedPass(e, w, t0.Add(2*time.Hour))
			return queuedPass(e, w, t0.Add(2*time.Hour+61*time.Second))
		},
		want: want{Started: true, StartedAt: t0.Add(2 * time.Hour), State: repotv1.StateFailed, Failed: "True/DeadlineExceeded"},
	}}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			saved := testOpts
			defer func() { testOpts = saved }()
			if tc.opts != nil {
				tc.opts(&testOpts)
			}
			e, w := tc.eval, newWorld()
			p := tc.passes(e, w)
			got := want{Started: p.Status.StartTime != nil, State: p.Status.Summary.State}
			if p.Status.StartTime != nil {
				got.StartedAt = p.Status.StartTime.Time
			}
			for _, c := range p.Status.Conditions {
				if c.Type == repotv1.ConditionFailed {
					got.Failed = string(c.Status) + "/" + c.Reason
				}
			}
			for _, o := range p.Create {
				if kindName(o) == server {
					got.Creates = true
				}
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
			// The decision says it starts the evaluation exactly on the
			// pass that creates the first server: the shell records the
			// start before that creation (recordStart).
			if p.StartsEvaluation() != tc.want.Creates {
				t.Errorf("StartsEvaluation() = %t on a pass that creates the server: %t", p.StartsEvaluation(), tc.want.Creates)
			}
		})
	}
}
