package planning

import (
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	repotv1 "repot.dev/repot-operator/api/v1alpha1"
	revtesting "repot.dev/repot-operator/api/v1alpha1/testing"
	"repot.dev/repot-operator/controllers/build"
)

// runnerPod is a runner pod of model m created age before t0.
func runnerPodAt(name string, age time.Duration, phase corev1.PodPhase) corev1.Pod {
	return corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, CreationTimestamp: metav1.NewTime(t0.Add(-age)), Labels: build.ChildLabels("ev", "m", build.ComponentRunner)},
		Status:     corev1.PodStatus{Phase: phase},
	}
}

func TestDiagnoseRunners(t *testing.T) {
	grace := 10 * time.Minute
	pull := runnerPodAt("r-0", time.Minute, corev1.PodPending)
	pull.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: "run", Image: "registry.example.com/repot:v9",
		State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "ImagePullBackOff", Message: "pull access denied"}}}}
	unsched := runnerPodAt("r-1", 11*time.Minute, corev1.PodPending)
	unsched.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodScheduled, Status: corev1.ConditionFalse, Reason: corev1.PodReasonUnschedulable,
		Message: "0/2 nodes are available: 2 node(s) didn't match Pod's node affinity/selector."}}
	mount := runnerPodAt("r-2", 11*time.Minute, corev1.PodPending)
	mount.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodScheduled, Status: corev1.ConditionTrue}}
	finishedLongAgo := runnerPodAt("r-3", time.Hour, corev1.PodSucceeded)
	cases := []struct {
		name        string
		pods        []corev1.Pod
		mounts      map[string]string
		refused     string
		wantCause   string
		wantInMsg   []string
		wantRecheck time.Duration
	}{
		{name: "no pods", pods: nil},
		{name: "finished pods are fine", pods: []corev1.Pod{finishedLongAgo}},
		{name: "image pull back-off at once", pods: []corev1.Pod{pull}, wantCause: repotv1.ReasonRunnerImagePullFailed,
			wantInMsg: []string{"registry.example.com/repot:v9", "pull access denied", "spec.placement.imagePullSecrets"}},
		{name: "pending within grace asks to look again", pods: []corev1.Pod{runnerPodAt("r-4", 4*time.Minute, corev1.PodPending)}, wantRecheck: 6 * time.Minute},
		{name: "unschedulable past grace", pods: []corev1.Pod{unsched}, wantCause: repotv1.ReasonRunnerPending,
			wantInMsg: []string{"node affinity/selector", "spec.placement.runner.nodeSelector"}},
		{name: "scheduled, pending past grace with a failed mount", pods: []corev1.Pod{mount},
			mounts:    map[string]string{"r-2": `MountVolume.SetUp failed for volume "artifacts" : persistentvolumeclaim "traces" not found`},
			wantCause: repotv1.ReasonRunnerMountFailed, wantInMsg: []string{`persistentvolumeclaim "traces" not found`, "spec.artifacts.pvcName"}},
		{name: "scheduled, pending past grace without an event", pods: []corev1.Pod{mount}, wantCause: repotv1.ReasonRunnerPending,
			wantInMsg: []string{"containers have not started"}},
		{name: "no pod, and the API server refuses them: at once, in its words", refused: `Error creating: pods "ev-m-run-x" is forbidden: exceeded quota: tenant-a, requested: limits.memory=8Gi, used: limits.memory=60Gi, limited: limits.memory=64Gi`,
			wantCause: repotv1.ReasonRunnerPodsRefused, wantInMsg: []string{"exceeded quota: tenant-a", "ResourceQuota"}},
		{name: "a pod runs: an earlier refusal is no cause", pods: []corev1.Pod{runnerPodAt("r-5", time.Minute, corev1.PodRunning)}, refused: "Error creating: forbidden"},
		{name: "only finished pods, and the rest refused", pods: []corev1.Pod{finishedLongAgo}, refused: "Error creating: forbidden", wantCause: repotv1.ReasonRunnerPodsRefused,
			wantInMsg: []string{"Error creating: forbidden"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := diagnoseRunners("m", tc.pods, tc.mounts, tc.refused, t0, grace)
			if got.Cause != tc.wantCause || got.RecheckAfter != tc.wantRecheck {
				t.Errorf("got cause %q recheck %s, want %q %s (message %q)", got.Cause, got.RecheckAfter, tc.wantCause, tc.wantRecheck, got.Message)
			}
			for _, s := range tc.wantInMsg {
				if !strings.Contains(got.Message, s) {
					t.Errorf("message %q lacks %q", got.Message, s)
				}
			}
		})
	}
}

// A runner problem stalls the evaluation with a reason that says what to fix.
func TestRunnerProblemStallsEvaluation(t *testing.T) {
	e := revtesting.MakeEvaluation("ev", "ns").Simulated("m", "strong", 1).Shards(1).Obj()
	w := newWorld()
	step(e, w, t0)
	setServerReady(w, "ev", "m", true)
	step(e, w, t0)
	pod := runnerPodAt("ev-m-run-0", time.Minute, corev1.PodPending)
	pod.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: "run", Image: "x",
		State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "ErrImagePull"}}}}
	w.RunnerPods = []corev1.Pod{pod}
	p := step(e, w, t0.Add(time.Second))
	st := findCondition(p.Status.Conditions, repotv1.ConditionStalled)
	if st.Status != metav1.ConditionTrue || st.Reason != repotv1.ReasonRunnerImagePullFailed {
		t.Errorf("Stalled = %s/%s, want True/RunnerImagePullFailed", st.Status, st.Reason)
	}
	if p.Status.Summary.State != repotv1.StateStalled {
		t.Errorf("state %s, want Stalled", p.Status.Summary.State)
	}
}

// LatestCreateFailure is the latest FailedCreate message seen within
// runnerCreateFailuresWindow, whichever of an event's times is newest.
func TestLatestCreateFailure(t *testing.T) {
	ev := func(msg string, last time.Time, series *time.Time) corev1.Event {
		e := corev1.Event{Message: msg, LastTimestamp: metav1.NewTime(last)}
		if series != nil {
			e.Series = &corev1.EventSeries{LastObservedTime: metav1.NewMicroTime(*series)}
		}
		return e
	}
	recent := t0.Add(-time.Minute)
	cases := []struct {
		name  string
		evs   []corev1.Event
		since time.Time
		want  string
	}{
		{name: "none", want: ""},
		{name: "older than the newest pod: that pod was accepted", evs: []corev1.Event{ev("before", t0.Add(-5*time.Minute), nil)}, since: t0.Add(-4 * time.Minute), want: ""},
		{name: "after the newest pod", evs: []corev1.Event{ev("after", t0.Add(-3*time.Minute), nil)}, since: t0.Add(-4 * time.Minute), want: "after"},
		{name: "only stale", evs: []corev1.Event{ev("old", t0.Add(-time.Hour), nil)}, want: ""},
		{name: "the newest wins", evs: []corev1.Event{ev("first", t0.Add(-5*time.Minute), nil), ev("second", recent, nil)}, want: "second"},
		{name: "a series' last observation counts", evs: []corev1.Event{ev("series", t0.Add(-time.Hour), &recent), ev("single", t0.Add(-3*time.Minute), nil)}, want: "series"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := LatestCreateFailure(tc.evs, t0, tc.since); got != tc.want {
				t.Errorf("LatestCreateFailure = %q, want %q", got, tc.want)
			}
		})
	}
}
