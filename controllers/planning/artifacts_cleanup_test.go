package planning

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	kueue "sigs.k8s.io/kueue/apis/kueue/v1beta2"

	repotv1 "repot.dev/repot-operator/api/v1alpha1"
	"repot.dev/repot-operator/controllers/build"
	"repot.dev/repot-operator/controllers/kueueadapter"
)

func TestWantsArtifactsFinalizer(t *testing.T) {
	no, yes := false, true
	for _, tc := range []struct {
		name   string
		edit   func(e *repotv1.RepotEvaluation)
		expect bool
	}{
		{"s3, retained by default", func(*repotv1.RepotEvaluation) {}, false},
		{"s3, retained", func(e *repotv1.RepotEvaluation) { e.Spec.Artifacts.RetainAfterDeletion = &yes }, false},
		{"s3, not retained", func(e *repotv1.RepotEvaluation) { e.Spec.Artifacts.RetainAfterDeletion = &no }, true},
		{"a PVC", func(e *repotv1.RepotEvaluation) {
			e.Spec.Artifacts = &repotv1.ArtifactsSpec{PVCName: "traces", RetainAfterDeletion: &no}
		}, false},
		{"no spec.artifacts (the operator's default store)", func(e *repotv1.RepotEvaluation) { e.Spec.Artifacts = nil }, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := storeEval()
			tc.edit(e)
			if got := WantsArtifactsFinalizer(e); got != tc.expect {
				t.Errorf("WantsArtifactsFinalizer = %v, want %v", got, tc.expect)
			}
		})
	}
}

func TestPlanDeletion(t *testing.T) {
	no, yes := false, true
	deleting := metav1.NewTime(t0)
	runnerJob := batchv1.Job{ObjectMeta: metav1.ObjectMeta{Name: "ev-sim-runner"}}
	goneJob := batchv1.Job{ObjectMeta: metav1.ObjectMeta{Name: "ev-old-runner", DeletionTimestamp: &deleting}}
	server := appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: build.ServerName("ev", "sim")}}
	cleanup := func(typ batchv1.JobConditionType, at time.Time) *batchv1.Job {
		j := &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Name: build.ArtifactsCleanupJobName("ev")}}
		if typ != "" {
			j.Status.Conditions = []batchv1.JobCondition{{Type: typ, Status: corev1.ConditionTrue, Reason: "BackoffLimitExceeded", LastTransitionTime: metav1.NewTime(at)}}
		}
		return j
	}
	verdict := func(msg string) []corev1.Pod {
		return []corev1.Pod{{Status: corev1.PodStatus{ContainerStatuses: []corev1.ContainerStatus{{
			State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 1, Message: msg, FinishedAt: metav1.NewTime(t0)}},
		}}}}}
	}
	type want struct {
		Delete          []string
		Create          string
		RemoveFinalizer bool
		Events          []string // "Reason: message substring"
		RequeueAfter    time.Duration
	}
	for _, tc := range []struct {
		name   string
		retain *bool
		world  DeletionWorld
		want   want
	}{{
		name:   "retained after all (the spec changed): let go at once",
		retain: &yes,
		world:  DeletionWorld{Jobs: []batchv1.Job{runnerJob}},
		want:   want{RemoveFinalizer: true},
	}, {
		name:   "still running: stop the runners and servers first",
		retain: &no,
		world:  DeletionWorld{Jobs: []batchv1.Job{runnerJob, goneJob}, Deployments: []appsv1.Deployment{server}},
		want:   want{Delete: []string{"ev-sim-runner", server.Name}, RequeueAfter: 5 * time.Second},
	}, {
		name:   "runner pods still ending (their sidecars upload the last traces): wait",
		retain: &no,
		world:  DeletionWorld{RunnerPods: []corev1.Pod{{}}},
		want:   want{RequeueAfter: 5 * time.Second},
	}, {
		name:   "a runner pod within its grace period plus the margin: wait, say nothing",
		retain: &no,
		world:  DeletionWorld{Now: t0.Add(time.Minute), RunnerPods: []corev1.Pod{stuckPod(t0)}},
		want:   want{RequeueAfter: 5 * time.Second},
	}, {
		name:   "a runner pod Terminating past its grace period plus the margin (a lost node): say which and how out",
		retain: &no,
		world:  DeletionWorld{Now: t0.Add(stuckTerminatingMargin + time.Second), RunnerPods: []corev1.Pod{stuckPod(t0)}},
		want: want{RequeueAfter: stuckTerminatingRecheck,
			Events: []string{"PodStuckTerminating: pod ev-sim-runner-0-abcde on node gpu-7 is still Terminating"}},
	}, {
		name:   "nothing runs: the cleanup Job",
		retain: &no,
		world:  DeletionWorld{},
		want:   want{Create: build.ArtifactsCleanupJobName("ev")},
	}, {
		name:   "cleanup running: wait for its Job's event",
		retain: &no,
		world:  DeletionWorld{Cleanup: cleanup("", t0)},
		want:   want{},
	}, {
		name:   "cleanup done: let go",
		retain: &no,
		world:  DeletionWorld{Cleanup: cleanup(batchv1.JobComplete, t0), CleanupPods: verdict("deleted 12 objects under s3://traces/")},
		want:   want{RemoveFinalizer: true, Events: []string{"ArtifactsDeleted: deleted 12 objects"}},
	}, {
		name:   "cleanup failed just now: wait out the retry",
		retain: &no,
		world:  DeletionWorld{Now: t0.Add(10 * time.Second), Cleanup: cleanup(batchv1.JobFailed, t0), CleanupPods: verdict("the credentials were refused")},
		want:   want{RequeueAfter: 50 * time.Second},
	}, {
		name:   "cleanup failed a minute ago: say why and run it again",
		retain: &no,
		world:  DeletionWorld{Now: t0.Add(time.Minute), Cleanup: cleanup(batchv1.JobFailed, t0), CleanupPods: verdict("the credentials were refused")},
		want: want{Delete: []string{build.ArtifactsCleanupJobName("ev")},
			Events: []string{"ArtifactsCleanupFailed: deleting the stored traces (s3://traces/ns/ev/3f1c2a9e-52b1-4c3e-9d8f-0a1b2c3d4e5f/ at s3.example.com) failed: the credentials were refused; the next try runs 1m0s after the failure (the wait doubles, up to 30m0s)"}},
	}, {
		name:   "the namespace is being deleted: no Job can run, the traces stay",
		retain: &no,
		world:  DeletionWorld{NamespaceTerminating: true, Jobs: []batchv1.Job{runnerJob}},
		want:   want{RemoveFinalizer: true, Events: []string{"ArtifactsRetained: the namespace is being deleted"}},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			e := storeEval()
			e.Spec.Artifacts.RetainAfterDeletion = tc.retain
			if tc.world.Now.IsZero() {
				tc.world.Now = t0
			}
			p := PlanDeletion(e, tc.world, build.Options{})
			got := want{RemoveFinalizer: p.RemoveFinalizer, RequeueAfter: p.RequeueAfter}
			for _, o := range p.Delete {
				got.Delete = append(got.Delete, o.GetName())
			}
			if p.Create != nil {
				got.Create = p.Create.GetName()
				if p.Create.GetLabels()[build.LabelArtifactsCleanup] != "true" {
					t.Errorf("the cleanup Job lacks its label: %v", p.Create.GetLabels())
				}
			}
			for i, ev := range p.Events {
				if i >= len(tc.want.Events) {
					break
				}
				if w := tc.want.Events[i]; strings.Contains(ev.Reason+": "+ev.Message, w) {
					got.Events = append(got.Events, w)
				} else {
					got.Events = append(got.Events, ev.Reason+": "+ev.Message)
				}
			}
			if len(p.Events) > len(tc.want.Events) {
				got.Events = append(got.Events, "(more events)")
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("PlanDeletion (-want +got):\n%s", diff)
			}
		})
	}
}

func TestArtifactsCleanupJobRunsAsARunner(t *testing.T) {
	e := storeEval()
	j := build.ArtifactsCleanupJob(e, e.Spec.Artifacts.S3, build.Options{})
	spec := j.Spec.Template.Spec
	if spec.ServiceAccountName != build.RunnerAccessName("ev") || j.Spec.Template.Labels[build.LabelComponent] != build.ComponentRunner {
		t.Errorf("cleanup pod: service account %q, labels %v; want the runner's", spec.ServiceAccountName, j.Spec.Template.Labels)
	}
	args := strings.Join(spec.Containers[0].Args, " ")
	for _, want := range []string{"artifacts remove", "--artifacts-bucket=traces", "--evaluation=ev", "--evaluation-uid=" + string(e.UID)} {
		if !strings.Contains(args, want) {
			t.Errorf("cleanup args %q lack %q", args, want)
		}
	}
}

// stuckPod is a runner pod whose deletion's grace period ended at
// deadline, on node gpu-7.
func stuckPod(deadline time.Time) corev1.Pod {
	at := metav1.NewTime(deadline)
	return corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "ev-sim-runner-0-abcde", DeletionTimestamp: &at, DeletionGracePeriodSeconds: ptr.To[int64](30)},
		Spec: corev1.PodSpec{NodeName: "gpu-7"}}
}

// A failed cleanup is retried with a backoff: each wait is as long as the
// failures have lasted (ArtifactsCleanupFailed's lastTransitionTime is
// their start), so it doubles, up to cleanupRetryMax; the condition says
// what fails and how to let the deletion finish.
func TestCleanupRetryBacksOff(t *testing.T) {
	failedAt := func(at time.Time) *batchv1.Job {
		return &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Name: build.ArtifactsCleanupJobName("ev")},
			Status: batchv1.JobStatus{Conditions: []batchv1.JobCondition{{Type: batchv1.JobFailed, Status: corev1.ConditionTrue, Reason: "BackoffLimitExceeded", Message: "Job has reached the specified backoff limit", LastTransitionTime: metav1.NewTime(at)}}}}
	}
	for _, tc := range []struct {
		name string
		// since is when the failures began (the condition), zero: none yet.
		since, failed, now time.Time
		wantRetry          bool
		wantRequeue        time.Duration
		wantBackoff        string
	}{
		{name: "first failure: a minute", failed: t0, now: t0.Add(10 * time.Second), wantRequeue: 50 * time.Second, wantBackoff: "1m0s"},
		{name: "first failure, a minute on: retried", failed: t0, now: t0.Add(time.Minute), wantRetry: true, wantBackoff: "1m0s"},
		{name: "failing for 4 minutes: the next try waits 4", since: t0, failed: t0.Add(4 * time.Minute), now: t0.Add(5 * time.Minute), wantRequeue: 3 * time.Minute, wantBackoff: "4m0s"},
		{name: "failing for 4 minutes, 4 minutes on: retried", since: t0, failed: t0.Add(4 * time.Minute), now: t0.Add(8 * time.Minute), wantRetry: true, wantBackoff: "4m0s"},
		{name: "failing for hours: capped", since: t0, failed: t0.Add(5 * time.Hour), now: t0.Add(5*time.Hour + 10*time.Minute), wantRequeue: 20 * time.Minute, wantBackoff: "30m0s"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := storeEval()
			e.Spec.Artifacts.RetainAfterDeletion = ptr.To(false)
			if !tc.since.IsZero() {
				e.Status.Conditions = []metav1.Condition{{Type: repotv1.ConditionArtifactsCleanupFailed, Status: metav1.ConditionTrue, Reason: repotv1.ReasonArtifactsCleanupFailed, LastTransitionTime: metav1.NewTime(tc.since)}}
			}
			p := PlanDeletion(e, DeletionWorld{Now: tc.now, Cleanup: failedAt(tc.failed)}, build.Options{})
			if retried := len(p.Delete) == 1; retried != tc.wantRetry || p.RequeueAfter != tc.wantRequeue {
				t.Errorf("retried %t requeue %s; want %t %s", retried, p.RequeueAfter, tc.wantRetry, tc.wantRequeue)
			}
			c := p.Condition
			if c == nil {
				t.Fatal("no ArtifactsCleanupFailed condition")
			}
			wantSince := tc.since
			if wantSince.IsZero() {
				wantSince = tc.failed
			}
			if c.Type != repotv1.ConditionArtifactsCleanupFailed || c.Status != metav1.ConditionTrue || !c.LastTransitionTime.Time.Equal(wantSince) {
				t.Errorf("condition %s=%s since %s; want ArtifactsCleanupFailed=True since %s", c.Type, c.Status, c.LastTransitionTime, wantSince)
			}
			for _, want := range []string{"the next try runs " + tc.wantBackoff, "backoff limit", "retainAfterDeletion", "kubectl patch repotevaluation ev"} {
				if !strings.Contains(c.Message, want) {
					t.Errorf("condition message %q lacks %q", c.Message, want)
				}
			}
		})
	}
}

// A deleted evaluation hands its Kueue quota back as soon as a model's pods
// are gone, whatever the cleanup of its traces does: that model's Workload
// is deleted, while the deletion may still wait for the store.
func TestDeletionReleasesWorkloadsOncePodsAreGone(t *testing.T) {
	deleting := metav1.NewTime(t0)
	wl := func(model string) *kueue.Workload {
		return &kueue.Workload{ObjectMeta: metav1.ObjectMeta{Name: "ev-" + model}}
	}
	pod := func(model, component string) corev1.Pod {
		return corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: model + "-" + component, Labels: build.ChildLabels("ev", model, component)}, Status: corev1.PodStatus{Phase: corev1.PodRunning}}
	}
	job := func(model string, gone bool) batchv1.Job {
		j := batchv1.Job{ObjectMeta: metav1.ObjectMeta{Name: build.RunnerJobName("ev", model), Labels: build.ChildLabels("ev", model, build.ComponentRunner)}}
		if gone {
			j.DeletionTimestamp = &deleting
		}
		return j
	}
	failed := &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Name: build.ArtifactsCleanupJobName("ev")},
		Status: batchv1.JobStatus{Conditions: []batchv1.JobCondition{{Type: batchv1.JobFailed, Status: corev1.ConditionTrue, LastTransitionTime: metav1.NewTime(t0)}}}}
	for _, tc := range []struct {
		name  string
		world DeletionWorld
		want  []string
	}{
		{name: "no Kueue: nothing", world: DeletionWorld{}},
		{name: "pods still running: kept", world: DeletionWorld{Workloads: map[string]*kueue.Workload{"a": wl("a")}, ServerPods: []corev1.Pod{pod("a", build.ComponentServer)}}},
		{name: "its runner Job not deleted yet: kept", world: DeletionWorld{Workloads: map[string]*kueue.Workload{"a": wl("a")}, Jobs: []batchv1.Job{job("a", false)}}},
		{name: "one model's pods gone, another's not", world: DeletionWorld{
			Workloads: map[string]*kueue.Workload{"a": wl("a"), "b": wl("b")}, Jobs: []batchv1.Job{job("a", true), job("b", true)},
			RunnerPods: []corev1.Pod{pod("b", build.ComponentRunner)}}, want: []string{"ev-a"}},
		{name: "all pods gone and the cleanup failing (an unreachable store): released", world: DeletionWorld{
			Workloads: map[string]*kueue.Workload{"a": wl("a"), "b": wl("b")}, Cleanup: failed}, want: []string{"ev-a", "ev-b"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := storeEval()
			e.Spec.Artifacts.RetainAfterDeletion = ptr.To(false)
			tc.world.Now = t0.Add(10 * time.Second)
			p := PlanDeletion(e, tc.world, build.Options{})
			var got []string
			for _, op := range p.Queue {
				if op.Kind != kueueadapter.QueueDelete {
					t.Errorf("op %v on %s; want a delete", op.Kind, op.Workload.Name)
				}
				got = append(got, op.Workload.Name)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("Workloads deleted (-want +got):\n%s", diff)
			}
		})
	}
}
