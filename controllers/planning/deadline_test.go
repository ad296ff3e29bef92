package planning

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	batchv1 "k8s.io/api/batch/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	kueue "sigs.k8s.io/kueue/apis/kueue/v1beta2"

	repotv1 "repot.dev/repot-operator/api/v1alpha1"
	revtesting "repot.dev/repot-operator/api/v1alpha1/testing"
	"repot.dev/repot-operator/controllers/build"
)

// preempt takes a model's admission away as Kueue does when a workload of
// higher priority preempts it: the quota is released and the Workload
// evicted.
func preempt(w *World, model string) {
	wl := w.Kueue.Workloads[model]
	wl.Status.Admission = nil
	wl.Status.Conditions = []metav1.Condition{
		cond(kueue.WorkloadQuotaReserved, metav1.ConditionFalse, "Preempted"),
		cond(kueue.WorkloadAdmitted, metav1.ConditionFalse, "Preempted"),
		cond(kueue.WorkloadEvicted, metav1.ConditionTrue, kueue.WorkloadEvictedByPreemption),
	}
}

// spec.activeDeadlineSeconds counts as a batch/v1 Job's deadline does:
// only time admitted and not suspended, afresh after each pause
// (status.deadlineStartTime). Each case is a one-minute deadline.
func TestDeadlineCountsOnlyAdmittedUnsuspendedTime(t *testing.T) {
	type want struct {
		Failed        string
		DeadlineStart *time.Time
	}
	at := func(d time.Duration) *time.Time { t := t0.Add(d); return &t }
	cases := []struct {
		name   string
		eval   *repotv1.RepotEvaluation
		passes func(e *repotv1.RepotEvaluation, w *World) Plan
		want   want
	}{{
		name: "not queued, never paused: the deadline counts from the start",
		eval: revtesting.MakeEvaluation("ev", "ns").Simulated("sim", "strong", 1).Shards(1).ActiveDeadline(60).Obj(),
		passes: func(e *repotv1.RepotEvaluation, w *World) Plan {
			settle(e, w, t0)
			return step(e, w, t0.Add(61*time.Second))
		},
		want: want{Failed: "True/DeadlineExceeded", DeadlineStart: at(0)},
	}, {
		name: "suspended for two hours after 30s: 30s more do not reach the deadline",
		eval: revtesting.MakeEvaluation("ev", "ns").Simulated("sim", "strong", 1).Shards(1).ActiveDeadline(60).Obj(),
		passes: func(e *repotv1.RepotEvaluation, w *World) Plan {
			settle(e, w, t0)
			e.Spec.Suspend = ptr.To(true)
			step(e, w, t0.Add(30*time.Second))
			step(e, w, t0.Add(2*time.Hour))
			e.Spec.Suspend = ptr.To(false)
			step(e, w, t0.Add(2*time.Hour+time.Second))
			return step(e, w, t0.Add(2*time.Hour+31*time.Second))
		},
		want: want{Failed: "False/InProgress", DeadlineStart: at(2*time.Hour + time.Second)},
	}, {
		name: "suspended: the deadline does not count while paused",
		eval: revtesting.MakeEvaluation("ev", "ns").Simulated("sim", "strong", 1).Shards(1).ActiveDeadline(60).Obj(),
		passes: func(e *repotv1.RepotEvaluation, w *World) Plan {
			settle(e, w, t0)
			e.Spec.Suspend = ptr.To(true)
			step(e, w, t0.Add(30*time.Second))
			return step(e, w, t0.Add(2*time.Hour))
		},
		want: want{Failed: "False/InProgress"},
	}, {
		name: "resumed: the deadline counts afresh from the resume",
		eval: revtesting.MakeEvaluation("ev", "ns").Simulated("sim", "strong", 1).Shards(1).ActiveDeadline(60).Obj(),
		passes: func(e *repotv1.RepotEvaluation, w *World) Plan {
			settle(e, w, t0)
			e.Spec.Suspend = ptr.To(true)
			step(e, w, t0.Add(30*time.Second))
			e.Spec.Suspend = ptr.To(false)
			step(e, w, t0.Add(2*time.Hour))
			return step(e, w, t0.Add(2*time.Hour+61*time.Second))
		},
		want: want{Failed: "True/DeadlineExceeded", DeadlineStart: at(2 * time.Hour)},
	}, {
		name: "preempted after 50s and readmitted two hours later: the time in the queue does not count",
		eval: queuedEval(),
		passes: func(e *repotv1.RepotEvaluation, w *World) Plan {
			queuedPass(e, w, t0)
			admit(w, "sim")
			queuedPass(e, w, t0.Add(time.Second))
			queuedPass(e, w, t0.Add(50*time.Second))
			preempt(w, "sim")
			queuedPass(e, w, t0.Add(51*time.Second))
			queuedPass(e, w, t0.Add(2*time.Hour))
			admit(w, "sim")
			queuedPass(e, w, t0.Add(2*time.Hour+time.Second))
			return queuedPass(e, w, t0.Add(2*time.Hour+31*time.Second))
		},
		want: want{Failed: "False/InProgress", DeadlineStart: at(2*time.Hour + time.Second)},
	}, {
		name: "readmitted after a preemption: the deadline still ends the evaluation",
		eval: queuedEval(),
		passes: func(e *repotv1.RepotEvaluation, w *World) Plan {
			queuedPass(e, w, t0)
			admit(w, "sim")
			queuedPass(e, w, t0.Add(time.Second))
			preempt(w, "sim")
			queuedPass(e, w, t0.Add(50*time.Second))
			admit(w, "sim")
			queuedPass(e, w, t0.Add(2*time.Hour))
			return queuedPass(e, w, t0.Add(2*time.Hour+61*time.Second))
		},
		want: want{Failed: "True/DeadlineExceeded", DeadlineStart: at(2 * time.Hour)},
	}, {
		name: "queued, its runs all recorded: the deadline's start stays through completion",
		eval: queuedEval(),
		passes: func(e *repotv1.RepotEvaluation, w *World) Plan {
			queuedPass(e, w, t0)
			admit(w, "sim")
			queuedPass(e, w, t0.Add(time.Second))
			setServerReady(w, "ev", "sim", true)
			queuedPass(e, w, t0.Add(2*time.Second))
			queuedPass(e, w, t0.Add(3*time.Second))
			// Every run recorded; Kueue may take the admission back as the
			// Workload finishes.
			w.Results = &EvaluationResults{RunsDone: map[string]int{"sim": modelRunsTotal(e, w, "sim")}}
			queuedPass(e, w, t0.Add(4*time.Second))
			preempt(w, "sim")
			queuedPass(e, w, t0.Add(5*time.Second))
			finishJob(w, build.RunnerJobName("ev", "sim"), batchv1.JobComplete, "CompletionsReached")
			return queuedPass(e, w, t0.Add(6*time.Second))
		},
		want: want{Failed: "False/AllRunsRecorded", DeadlineStart: at(time.Second)},
	}}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			e, w := tc.eval, newWorld()
			p := tc.passes(e, w)
			var got want
			if s := p.Status.DeadlineStartTime; s != nil {
				got.DeadlineStart = &s.Time
			}
			for _, c := range p.Status.Conditions {
				if c.Type == repotv1.ConditionFailed {
					got.Failed = string(c.Status) + "/" + c.Reason
				}
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}
