package planning

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	repotv1 "repot.dev/repot-operator/api/v1alpha1"
	revtesting "repot.dev/repot-operator/api/v1alpha1/testing"
	"repot.dev/repot-operator/controllers/build"
)

func storeEval() *repotv1.RepotEvaluation {
	e := revtesting.MakeEvaluation("ev", "ns").Simulated("sim", "strong", 1).Shards(1).
		ArtifactsS3(repotv1.S3Store{Endpoint: "s3.example.com", Bucket: "traces", CredentialsSecret: "s3"}).Obj()
	e.UID = "3f1c2a9e-52b1-4c3e-9d8f-0a1b2c3d4e5f"
	return e
}

// finishProbe ends the probe Job as the Job controller and the kubelet
// would: Complete, or Failed with the probe's termination message.
func finishProbe(w *World, failed string, at time.Time) {
	j := w.ArtifactsProbe
	typ, reason := batchv1.JobComplete, ""
	if failed != "" {
		typ, reason = batchv1.JobFailed, "BackoffLimitExceeded"
		w.ArtifactsProbePods = []corev1.Pod{{Status: corev1.PodStatus{ContainerStatuses: []corev1.ContainerStatus{{
			State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 1, Message: failed, FinishedAt: metav1.NewTime(at)}},
		}}}}}
	}
	j.Status.Conditions = append(j.Status.Conditions, batchv1.JobCondition{Type: typ, Status: corev1.ConditionTrue, Reason: reason, LastTransitionTime: metav1.NewTime(at)})
}

func condition(p Plan, typ string) *metav1.Condition { return findCondition(p.Status.Conditions, typ) }

func TestArtifactStoreProbeGatesTheStart(t *testing.T) {
	probeJob := "Job/" + build.ArtifactsProbeJobName("ev")
	server := "Deployment/" + build.ServerName("ev", "sim")

	e, w := storeEval(), newWorld()
	p := settle(e, w, t0)
	// The probe runs as a runner once the runner's access exists; nothing
	// that costs starts meanwhile.
	if w.ArtifactsProbe == nil {
		t.Fatalf("no probe Job after the access objects; world jobs: %d", len(w.Jobs))
	}
	if len(w.Deployments) != 0 || len(w.Jobs) != 0 || p.Status.StartTime != nil {
		t.Fatalf("started before the probe: %d deployments, %d runner jobs, startTime %v", len(w.Deployments), len(w.Jobs), p.Status.StartTime)
	}
	if c := condition(p, repotv1.ConditionArtifactStoreUnavailable); c == nil || c.Status != metav1.ConditionFalse || c.Reason != repotv1.ReasonProbingStore {
		t.Errorf("while probing: %+v, want False/ProbingStore", c)
	}
	pod := w.ArtifactsProbe.Spec.Template.Spec
	if pod.ServiceAccountName != build.RunnerAccessName("ev") || w.ArtifactsProbe.Spec.Template.Labels[build.LabelComponent] != build.ComponentRunner {
		t.Errorf("the probe does not run as a runner: account %q, labels %v", pod.ServiceAccountName, w.ArtifactsProbe.Spec.Template.Labels)
	}

	// A wrong credential: ArtifactStoreUnavailable with the probe's words,
	// Stalled, nothing started; the probe is retried a minute later.
	verdict := "listing ns/ev/3f1c/: credentials refused by s3://traces at s3.example.com (InvalidAccessKeyId: ...)"
	finishProbe(w, verdict, t0.Add(10*time.Second))
	p = step(e, w, t0.Add(20*time.Second))
	c := condition(p, repotv1.ConditionArtifactStoreUnavailable)
	if c == nil || c.Status != metav1.ConditionTrue || !strings.Contains(c.Message, "credentials refused") || !strings.Contains(c.Message, `"s3"`) {
		t.Fatalf("after a failed probe: %+v, want True with the probe's verdict and the Secret's name", c)
	}
	if s := condition(p, repotv1.ConditionStalled); s == nil || s.Status != metav1.ConditionTrue || s.Reason != repotv1.ReasonArtifactStoreUnavailable {
		t.Errorf("Stalled = %+v, want True/ArtifactStoreUnavailable", s)
	}
	if len(p.Create) != 0 || len(w.Deployments) != 0 {
		t.Errorf("created %v after a failed probe", digest(p).Create)
	}
	if p.RequeueAfter != 50*time.Second {
		t.Errorf("requeue after %v, want the rest of the minute (50s)", p.RequeueAfter)
	}
	if !slices.Contains(digest(p).Events, repotv1.ReasonArtifactStoreUnavailable) {
		t.Errorf("events %v, want one for ArtifactStoreUnavailable", digest(p).Events)
	}
	p = step(e, w, t0.Add(71*time.Second))
	if diff := cmp.Diff([]string{probeJob}, digest(p).Delete); diff != "" {
		t.Errorf("a minute after the failure (-want +got deletes):\n%s", diff)
	}
	// The next pass probes again; this time it passes and the server
	// starts.
	p = step(e, w, t0.Add(72*time.Second))
	if diff := cmp.Diff([]string{probeJob}, digest(p).Create); diff != "" {
		t.Fatalf("the second probe (-want +got creates):\n%s", diff)
	}
	finishProbe(w, "", t0.Add(80*time.Second))
	p = settle(e, w, t0.Add(81*time.Second))
	if len(w.Deployments) != 1 || w.deployment(build.ServerName("ev", "sim")) == nil {
		t.Fatalf("after a passing probe: deployments %d, want the server %s", len(w.Deployments), server)
	}
	if c := condition(p, repotv1.ConditionArtifactStoreUnavailable); c == nil || c.Status != metav1.ConditionFalse || c.Reason != repotv1.ReasonStoreWritable {
		t.Errorf("after a passing probe: %+v, want False/StoreWritable", c)
	}
	if s := condition(p, repotv1.ConditionStalled); s != nil && s.Status == metav1.ConditionTrue {
		t.Errorf("still Stalled after the probe passed: %+v", s)
	}
}

func TestArtifactStoreProbeFollowsTheSpec(t *testing.T) {
	e, w := storeEval(), newWorld()
	settle(e, w, t0)
	if w.ArtifactsProbe == nil {
		t.Fatal("no probe Job")
	}
	// The author fixes the bucket before the start: the old probe goes,
	// a new one probes the new store.
	e.Spec.Artifacts.S3.Bucket = "traces-2"
	e.Generation++
	p := step(e, w, t0.Add(time.Second))
	if diff := cmp.Diff([]string{"Job/" + build.ArtifactsProbeJobName("ev")}, digest(p).Delete); diff != "" {
		t.Errorf("deletes (-want +got):\n%s", diff)
	}
	step(e, w, t0.Add(2*time.Second))
	if w.ArtifactsProbe == nil || w.ArtifactsProbe.Annotations[build.AnnotationArtifactsStore] != build.StoreHash(e.Spec.Artifacts.S3) {
		t.Errorf("no probe of the new store")
	}
	if !slices.Contains(w.ArtifactsProbe.Spec.Template.Spec.Containers[0].Args, "--artifacts-bucket=traces-2") {
		t.Errorf("probe args %v do not name the new bucket", w.ArtifactsProbe.Spec.Template.Spec.Containers[0].Args)
	}
}

func TestNoStoreNoProbe(t *testing.T) {
	e := revtesting.MakeEvaluation("ev", "ns").Simulated("sim", "strong", 1).Shards(1).Obj()
	w := newWorld()
	p := settle(e, w, t0)
	if w.ArtifactsProbe != nil || condition(p, repotv1.ConditionArtifactStoreUnavailable) != nil {
		t.Errorf("an evaluation without a store got a probe or its condition")
	}
	if len(w.Deployments) != 1 {
		t.Errorf("the server did not start without a store: %d deployments", len(w.Deployments))
	}
}
