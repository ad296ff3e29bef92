package planning

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	repotv1 "repot.dev/repot-operator/api/v1alpha1"
	revtesting "repot.dev/repot-operator/api/v1alpha1/testing"
	"repot.dev/repot-operator/controllers/build"
)

// crashingPod is a server pod whose container cannot pull its image: it
// is bound to a node and holds its GPU.
func crashingPod(eval, model string) corev1.Pod {
	return corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: build.ServerName(eval, model) + "-abc", Labels: build.ChildLabels(eval, model, build.ComponentServer)},
		Spec:       corev1.PodSpec{NodeName: "gpu-1"},
		Status: corev1.PodStatus{Phase: corev1.PodPending, ContainerStatuses: []corev1.ContainerStatus{{Name: "server", State: corev1.ContainerState{
			Waiting: &corev1.ContainerStateWaiting{Reason: "ImagePullBackOff", Message: `Back-off pulling image "vllm/vllm-openai:nope"`},
		}}}},
	}
}

// TestStalledServerReleasesItsGPUs: a server that stays Stalled for
// spec.stalledAfterSeconds is scaled to zero, the status says so and why,
// suspending and resuming starts it again.
func TestStalledServerReleasesItsGPUs(t *testing.T) {
	e := revtesting.MakeEvaluation("ev", "ns").Simulated("sim", "strong", 1).Obj()
	e.Spec.StalledAfterSeconds = ptr.To[int32](300)
	w := newWorld()
	settle(e, w, t0)
	name := build.ServerName("ev", "sim")
	w.ServerPods = []corev1.Pod{crashingPod("ev", "sim")}
	replicas := func() int32 { return ptr.Deref(w.deployment(name).Spec.Replicas, 1) }

	type seen struct {
		Replicas int32
		Server   string
		Requeue  time.Duration
	}
	look := func(now time.Time) seen {
		p := step(e, w, now)
		return seen{replicas(), string(e.Status.Models[0].Server.State) + "/" + e.Status.Models[0].Server.Reason, p.RequeueAfter}
	}
	got := []seen{look(t0.Add(time.Second)), look(t0.Add(299 * time.Second)), look(t0.Add(302 * time.Second))}
	want := []seen{
		{1, "Stalled/ImagePullFailed", 300 * time.Second},
		{1, "Stalled/ImagePullFailed", 2 * time.Second},
		{0, "Stalled/ImagePullFailed", 0},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("replicas, server state and requeue over the stall (-want +got):\n%s", diff)
	}
	if msg := e.Status.Models[0].Server.Message; !strings.Contains(msg, "scaled to zero") || !strings.Contains(msg, "vllm/vllm-openai:nope") {
		t.Errorf("server message %q: want it to say it was scaled to zero, and the cause", msg)
	}
	if e.Status.Summary.State != repotv1.StateStalled {
		t.Errorf("state %s, want Stalled", e.Status.Summary.State)
	}
	// The pod goes with the scale-down; the server stays released.
	w.ServerPods = nil
	if s := look(t0.Add(400 * time.Second)); s.Replicas != 0 || s.Server != "Stalled/ImagePullFailed" {
		t.Errorf("after the pod went: %+v, want the server kept at zero and Stalled", s)
	}
	// Suspend, then resume: the server starts again.
	e.Spec.Suspend = ptr.To(true)
	step(e, w, t0.Add(500*time.Second))
	if _, ok := w.deployment(name).Annotations[build.AnnotationReleased]; ok {
		t.Error("suspending kept the release")
	}
	e.Spec.Suspend = ptr.To(false)
	if s := look(t0.Add(600 * time.Second)); s.Replicas != 1 {
		t.Errorf("after resuming: %+v, want one replica", s)
	}
}

// TestRecoveredServerForgetsItsStall: a server that recovers before
// stalledAfterSeconds loses its stalled-since mark, so a later stall counts
// from its own start.
func TestRecoveredServerForgetsItsStall(t *testing.T) {
	e := revtesting.MakeEvaluation("ev", "ns").Simulated("sim", "strong", 1).Obj()
	w := newWorld()
	settle(e, w, t0)
	name := build.ServerName("ev", "sim")
	w.ServerPods = []corev1.Pod{crashingPod("ev", "sim")}
	step(e, w, t0.Add(time.Second))
	if _, ok := w.deployment(name).Annotations[build.AnnotationStalledSince]; !ok {
		t.Fatal("no stalled-since mark on a Stalled server")
	}
	w.ServerPods = nil
	setServerReady(w, "ev", "sim", true)
	step(e, w, t0.Add(10*time.Second))
	if _, ok := w.deployment(name).Annotations[build.AnnotationStalledSince]; ok {
		t.Error("a recovered server kept its stalled-since mark")
	}
}

// TestCrashLoopKeepsItsStallClock: a crash-looping server reads Stalled
// while it waits to restart and Starting while it runs again; only an
// answer ends the stall, so it is released spec.stalledAfterSeconds after
// its first crash, and its runner Job is suspended with it.
func TestCrashLoopKeepsItsStallClock(t *testing.T) {
	e := revtesting.MakeEvaluation("ev", "ns").Simulated("sim", "strong", 1).Shards(1).Obj()
	e.Spec.StalledAfterSeconds = ptr.To[int32](300)
	w := newWorld()
	settle(e, w, t0)
	setServerReady(w, "ev", "sim", true)
	settle(e, w, t0) // the runner Job starts
	setServerReady(w, "ev", "sim", false)
	name := build.ServerName("ev", "sim")
	crashed := crashingPod("ev", "sim")
	crashed.Status.ContainerStatuses[0].State.Waiting.Reason = "CrashLoopBackOff"
	restarted := corev1.Pod{ObjectMeta: crashed.ObjectMeta, Spec: crashed.Spec, Status: corev1.PodStatus{Phase: corev1.PodRunning,
		ContainerStatuses: []corev1.ContainerStatus{{Name: "server", State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: metav1.NewTime(t0)}}}}}}
	for i, at := range []time.Duration{10, 100, 200, 290, 311} {
		pod := crashed
		if i%2 == 1 {
			pod = restarted
		}
		w.ServerPods = []corev1.Pod{pod}
		step(e, w, t0.Add(at*time.Second))
	}
	if got := ptr.Deref(w.deployment(name).Spec.Replicas, 1); got != 0 {
		t.Fatalf("replicas %d 301 s after the first crash, with restarts between; want the server released", got)
	}
	step(e, w, t0.Add(310*time.Second))
	if j := w.job(build.RunnerJobName("ev", "sim")); j == nil || !ptr.Deref(j.Spec.Suspend, false) {
		t.Errorf("runner Job %v: want it suspended while its server is released", j)
	}
}
