package planning

import (
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	repotv1 "repot.dev/repot-operator/api/v1alpha1"
	revtesting "repot.dev/repot-operator/api/v1alpha1/testing"
	"repot.dev/repot-operator/controllers/build"
	"repot.dev/repot-operator/controllers/kueueadapter"
)

// review42: a queued evaluation whose only unfinished model the operator
// itself released for a stall (its Workload deleted, not submitted again
// while it stays released) is not waiting in Kueue's queue: nothing will
// ever make it progress. deadlinePaused reads "no unfinished model
// admitted" as a queue pause, so spec.activeDeadlineSeconds never ends
// the evaluation: it stays Active forever, while the same stall on an
// evaluation without a queue ends in DeadlineExceeded.
func TestReview42DeadlineEndsAQueuedEvaluationReleasedForAStall(t *testing.T) {
	for _, queued := range []bool{false, true} {
		name := "not queued"
		if queued {
			name = "queued"
		}
		t.Run(name, func(t *testing.T) {
			b := revtesting.MakeEvaluation("ev", "ns").Simulated("sim", "strong", 1).Shards(1).StalledAfter(300).ActiveDeadline(600)
			if queued {
				b = b.Label(kueueadapter.QueueNameLabel, "gpus")
			}
			e := b.Obj()
			k := &kueueWorld{t: t, e: e, w: newWorld()}
			w := k.w
			pass := k.pass
			if !queued {
				pass = func(now time.Time) Plan { return step(e, w, now) }
			}
			pass(t0)
			if queued {
				admit(w, "sim")
			}
			settleAt := func(now time.Time) {
				p := pass(now)
				for i := 0; i < 10 && len(p.Create) > 0; i++ {
					p = pass(now)
				}
			}
			settleAt(t0)
			setServerReady(w, "ev", "sim", true)
			settleAt(t0)
			if w.job(build.RunnerJobName("ev", "sim")) == nil {
				t.Fatal("no runner Job: the setup did not start the model")
			}
			// The server crashes from then on: a stall, released after 300s.
			setServerReady(w, "ev", "sim", false)
			w.ServerPods = []corev1.Pod{crashingPod("ev", "sim")}
			w.RunnerPods = []corev1.Pod{runnerPod("ev", "sim", t0.Add(-time.Hour), corev1.PodStatus{Phase: corev1.PodRunning})}
			pass(t0.Add(time.Second))
			pass(t0.Add(302 * time.Second))
			pass(t0.Add(303 * time.Second))
			w.ServerPods, w.RunnerPods = nil, nil
			pass(t0.Add(305 * time.Second))
			k.gone("sim")
			pass(t0.Add(307 * time.Second))
			pass(t0.Add(700 * time.Second))
			p := pass(t0.Add(2 * time.Hour))
			got := "none"
			for _, c := range p.Status.Conditions {
				if c.Type == repotv1.ConditionFailed {
					got = string(c.Status) + "/" + c.Reason
				}
			}
			if want := string(metav1.ConditionTrue) + "/" + repotv1.ReasonDeadlineExceeded; got != want {
				t.Errorf("two hours after the start, 600s deadline, model released for a stall: Failed = %s, want %s (deadlineStartTime %v)",
					got, want, p.Status.DeadlineStartTime)
			}
		})
	}
}
