package planning

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	repotv1 "repot.dev/repot-operator/api/v1alpha1"
)

func TestDiagnoseServer(t *testing.T) {
	budget := 10 * time.Minute
	running := func(started time.Duration, ready bool) corev1.Pod {
		st := corev1.ConditionFalse
		if ready {
			st = corev1.ConditionTrue
		}
		return corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: "p"},
			Status: corev1.PodStatus{
				Phase:      corev1.PodRunning,
				Conditions: []corev1.PodCondition{{Type: corev1.PodReady, Status: st}},
				ContainerStatuses: []corev1.ContainerStatus{{Name: "server", State: corev1.ContainerState{
					Running: &corev1.ContainerStateRunning{StartedAt: metav1.NewTime(t0.Add(-started))},
				}}},
			},
		}
	}
	waiting := func(reason string) corev1.Pod {
		return corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p"}, Status: corev1.PodStatus{
			Phase: corev1.PodPending,
			ContainerStatuses: []corev1.ContainerStatus{{Name: "server", State: corev1.ContainerState{
				Waiting: &corev1.ContainerStateWaiting{Reason: reason, Message: "m"},
			}}},
		}}
	}
	deleting := unschedulablePod("ev", "m")
	deleting.DeletionTimestamp = &metav1.Time{Time: t0}
	cases := []struct {
		name        string
		pods        []corev1.Pod
		wantCause   string
		wantRecheck time.Duration
		wantInMsg   string
	}{
		{name: "no pods yet", pods: nil},
		{name: "unschedulable past stalledAfter", pods: []corev1.Pod{unschedulablePod("ev", "m")}, wantCause: repotv1.ReasonUnschedulable, wantInMsg: "Insufficient nvidia.com/gpu"},
		{name: "unschedulable within stalledAfter waits for capacity", pods: []corev1.Pod{unschedulableFor("ev", "m", 4*time.Minute)}, wantCause: repotv1.ReasonWaitingForCapacity, wantRecheck: 6 * time.Minute, wantInMsg: "Insufficient nvidia.com/gpu"},
		{name: "a deleted unschedulable pod is ignored", pods: []corev1.Pod{deleting}},
		{name: "image pull back-off", pods: []corev1.Pod{waiting("ImagePullBackOff")}, wantCause: repotv1.ReasonImagePullFailed},
		{name: "image pull error", pods: []corev1.Pod{waiting("ErrImagePull")}, wantCause: repotv1.ReasonImagePullFailed},
		{name: "crash loop", pods: []corev1.Pod{waiting("CrashLoopBackOff")}, wantCause: repotv1.ReasonCrashLoop},
		{name: "container creating is normal", pods: []corev1.Pod{waiting("ContainerCreating")}},
		{name: "running unready within budget asks to look again", pods: []corev1.Pod{running(4*time.Minute, false)}, wantRecheck: 6 * time.Minute},
		{name: "running unready past budget is a probe timeout", pods: []corev1.Pod{running(10*time.Minute, false)}, wantCause: repotv1.ReasonProbeTimeout},
		{name: "running and ready is fine", pods: []corev1.Pod{running(time.Hour, true)}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := diagnoseServer("m", tc.pods, t0, budget, 10*time.Minute)
			if diff := cmp.Diff(tc.wantCause, got.Cause); diff != "" {
				t.Errorf("cause (-want +got): %s (message %q)", diff, got.Message)
			}
			if got.RecheckAfter != tc.wantRecheck {
				t.Errorf("recheck = %s, want %s", got.RecheckAfter, tc.wantRecheck)
			}
			if tc.wantCause != "" && !strings.Contains(got.Message, "model m") {
				t.Errorf("message %q does not name the model", got.Message)
			}
			if tc.wantInMsg != "" && !strings.Contains(got.Message, tc.wantInMsg) {
				t.Errorf("message %q lacks %q", got.Message, tc.wantInMsg)
			}
		})
	}
}
