package planning

import (
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	repotv1 "repot.dev/repot-operator/api/v1alpha1"
	"repot.dev/repot-operator/controllers/build"
)

// TestTerminatingServerPodHoldsTheSlot: a Done model's server Deployment
// is gone but its pod still terminates (its grace period): the GPU is not
// free, so the next model does not start until the pod is gone.
func TestTerminatingServerPodHoldsTheSlot(t *testing.T) {
	e := sweep()
	w := newWorld()
	w.Problems.Count = 2
	now := t0
	settle(e, w, now)
	setServerReady(w, "ev", "m1", true)
	setServerReady(w, "ev", "m2", true)
	settle(e, w, now)
	w.Records = append(w.Records, runs("m1", 2, t0)...)
	settle(e, w, now) // m1 Done: its server Deployment is deleted
	if w.deployment(build.ServerName("ev", "m1")) != nil {
		t.Fatal("m1's server was not deleted once its runs were recorded")
	}
	pod := corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: build.ServerName("ev", "m1") + "-x", Labels: build.ChildLabels("ev", "m1", build.ComponentServer),
			DeletionTimestamp: &metav1.Time{Time: now}},
		Spec:   corev1.PodSpec{NodeName: "gpu-1"},
		Status: corev1.PodStatus{Phase: corev1.PodRunning},
	}
	w.ServerPods = []corev1.Pod{pod}
	p := settle(e, w, now.Add(time.Second))
	if got := phases(p.Status); got[2] != "m3="+string(repotv1.ModelQueued) {
		t.Errorf("with m1's server pod terminating: %v, want m3 Queued", got)
	}
	w.ServerPods = nil
	p = settle(e, w, now.Add(2*time.Second))
	if got := phases(p.Status); got[2] != "m3="+string(repotv1.ModelStarting) {
		t.Errorf("with m1's server pod gone: %v, want m3 Starting", got)
	}
}

// TestFinishedModelStaysFinishedWhenTheProblemsChange: the run total is the
// one recorded at the start; a problem set that grows (or goes) after a
// model's runs are all recorded does not make it unfinished, and its server
// is not started again beside the next model's.
func TestFinishedModelStaysFinishedWhenTheProblemsChange(t *testing.T) {
	e := sweep()
	w := newWorld()
	w.Problems.Count = 2
	settle(e, w, t0)
	setServerReady(w, "ev", "m1", true)
	setServerReady(w, "ev", "m2", true)
	settle(e, w, t0)
	if got := e.Status.Models[0].RunsTotal; got != 8 {
		t.Fatalf("m1 runsTotal %d, want 8", got)
	}
	// All of m1's runs are in the ledger, and in the same moment the
	// problem set grows to 3.
	w.Records = append(w.Records, runs("m1", 2, t0)...)
	w.Problems.Count = 3
	p := settle(e, w, t0.Add(time.Minute))
	if got := phases(p.Status); got[0] != "m1="+string(repotv1.ModelDone) {
		t.Errorf("phases %v: want m1 Done (its recorded total 8 is recorded)", got)
	}
	if w.deployment(build.ServerName("ev", "m1")) != nil {
		t.Error("m1's server kept although its recorded total was reached")
	}
	if got := e.Status.Models[0].RunsTotal; got != 8 {
		t.Errorf("m1 runsTotal %d after the problem set grew, want the recorded 8", got)
	}
}
