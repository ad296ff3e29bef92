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

// runnerPod is a pod of the model's runner Job in the given state, created
// at created.
func runnerPod(eval, model string, created time.Time, status corev1.PodStatus) corev1.Pod {
	return corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: build.RunnerJobName(eval, model) + "-0-xyz", CreationTimestamp: metav1.NewTime(created),
			Labels: build.ChildLabels(eval, model, build.ComponentRunner)},
		Status: status,
	}
}

// TestModelStalledByAnythingReleasesItsServer: whatever keeps a model from
// progressing (not only its server) holds the server's GPUs for nothing,
// so the server is scaled to zero spec.stalledAfterSeconds after the cause
// is first seen, and its runner Job suspended; suspending and resuming
// starts it again.
func TestModelStalledByAnythingReleasesItsServer(t *testing.T) {
	pullFails := corev1.PodStatus{Phase: corev1.PodPending, ContainerStatuses: []corev1.ContainerStatus{{Name: "run", Image: "repot:typo",
		State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "ErrImagePull", Message: "not found"}}}}}
	unschedulable := corev1.PodStatus{Phase: corev1.PodPending, Conditions: []corev1.PodCondition{{Type: corev1.PodScheduled,
		Status: corev1.ConditionFalse, Message: "0/3 nodes match the node selector"}}}
	mountFails := corev1.PodStatus{Phase: corev1.PodPending, Conditions: []corev1.PodCondition{{Type: corev1.PodScheduled, Status: corev1.ConditionTrue}}}
	for _, tt := range []struct {
		name string
		// stall breaks the running evaluation at t0 (its runner Job runs
		// and its server answers).
		stall      func(w *World)
		wantReason string
	}{
		{"runner image cannot be pulled", func(w *World) {
			w.RunnerPods = []corev1.Pod{runnerPod("ev", "sim", t0, pullFails)}
		}, repotv1.ReasonRunnerImagePullFailed},
		{"runner pod no node takes", func(w *World) {
			w.RunnerPods = []corev1.Pod{runnerPod("ev", "sim", t0.Add(-300*time.Second), unschedulable)}
		}, repotv1.ReasonRunnerPending},
		{"runner volume does not mount", func(w *World) {
			pod := runnerPod("ev", "sim", t0.Add(-300*time.Second), mountFails)
			w.RunnerPods = []corev1.Pod{pod}
			w.MountFailures = map[string]string{pod.Name: `configmap "problems" not found`}
		}, repotv1.ReasonRunnerMountFailed},
		{"problems unreadable before the runner Job", func(w *World) {
			w.Jobs = nil
			w.Problems = problemsInfo{Unavailable: "spec.problems.configMap: ConfigMap \"p\" does not exist"}
		}, repotv1.ReasonProblemsUnavailable},
	} {
		t.Run(tt.name, func(t *testing.T) {
			e := revtesting.MakeEvaluation("ev", "ns").Simulated("sim", "strong", 1).Shards(1).Obj()
			e.Spec.StalledAfterSeconds = ptr.To[int32](300)
			w := newWorld()
			settle(e, w, t0)
			setServerReady(w, "ev", "sim", true)
			settle(e, w, t0)
			if w.job(build.RunnerJobName("ev", "sim")) == nil {
				t.Fatal("no runner Job: the setup did not start the model")
			}
			tt.stall(w)
			name := build.ServerName("ev", "sim")
			replicas := func() int32 { return ptr.Deref(w.deployment(name).Spec.Replicas, 1) }
			step(e, w, t0.Add(time.Second))
			if got := replicas(); got != 1 {
				t.Fatalf("replicas %d at once; want the server kept for spec.stalledAfterSeconds", got)
			}
			step(e, w, t0.Add(302*time.Second))
			if got := replicas(); got != 0 {
				t.Fatalf("replicas %d after spec.stalledAfterSeconds stalled by %s; want 0 (the GPUs released)", got, tt.wantReason)
			}
			step(e, w, t0.Add(303*time.Second)) // the pass that observes the release
			if j := w.job(build.RunnerJobName("ev", "sim")); j != nil && !ptr.Deref(j.Spec.Suspend, false) {
				t.Error("the runner Job runs on while its server is released")
			}
			srv := e.Status.Models[0].Server
			if srv.State != repotv1.ServerStalled || srv.Reason != tt.wantReason || !strings.Contains(srv.Message, "scaled to zero") {
				t.Errorf("server status %s/%s %q; want Stalled/%s saying it was scaled to zero", srv.State, srv.Reason, srv.Message, tt.wantReason)
			}
			if e.Status.Summary.State != repotv1.StateStalled {
				t.Errorf("state %s, want Stalled", e.Status.Summary.State)
			}
			e.Spec.Suspend = ptr.To(true)
			step(e, w, t0.Add(400*time.Second))
			e.Spec.Suspend = ptr.To(false)
			step(e, w, t0.Add(401*time.Second))
			if got := replicas(); got != 1 {
				t.Errorf("replicas %d after suspend and resume; want the server started again", got)
			}
		})
	}
}

// TestNoServerBeforeProblemsAreReadable: a server is not created while the
// problem set cannot be read; it could serve no runner.
func TestNoServerBeforeProblemsAreReadable(t *testing.T) {
	e := revtesting.MakeEvaluation("ev", "ns").Simulated("sim", "strong", 1).Shards(1).Obj()
	w := newWorld()
	w.Problems = problemsInfo{Unavailable: "spec.problems.configMap: ConfigMap \"p\" does not exist"}
	settle(e, w, t0)
	if d := w.deployment(build.ServerName("ev", "sim")); d != nil {
		t.Fatal("a server was created for problems that cannot be read")
	}
	w.Problems = problemsInfo{Count: 120}
	settle(e, w, t0.Add(time.Minute))
	if d := w.deployment(build.ServerName("ev", "sim")); d == nil {
		t.Fatal("no server once the problems are readable")
	}
}
