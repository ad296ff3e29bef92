package planning

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	batchv1 "k8s.io/api/batch/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	revtesting "repot.dev/repot-operator/api/v1alpha1/testing"
	"repot.dev/repot-operator/controllers/build"
	"repot.dev/repot-operator/controllers/kueueadapter"
)

// podsReadyStarted brings a one-model queued evaluation with the given
// shards to PodsReady True (Started): admitted, server Ready, every runner
// pod ready.
func podsReadyStarted(t *testing.T, shards int32) (*kueueWorld, *batchv1.Job) { // the Job as of the setup's last pass
	t.Helper()
	e := revtesting.MakeEvaluation("ev", "ns").Simulated("sim", "strong", 1).Shards(shards).
		Label(kueueadapter.QueueNameLabel, "gpus").Obj()
	k := &kueueWorld{t: t, e: e, w: newWorld()}
	k.pass(t0)
	admit(k.w, "sim")
	k.settle(t0)
	setServerReady(k.w, "ev", "sim", true)
	k.settle(t0)
	j := k.w.job(build.RunnerJobName("ev", "sim"))
	if j == nil {
		t.Fatal("no runner Job: the setup did not start the model")
	}
	j.Status.Active, j.Status.Ready = shards, ptr.To(shards)
	if got := ops(k.pass(t0.Add(time.Second))); !cmp.Equal(got, []string{"podsready True/Started " + kueueadapter.WorkloadName("ev", "sim")}) {
		t.Fatalf("setup: ops %v, want PodsReady True/Started", got)
	}
	return k, j
}

// Kueue's batch/Job integration counts the runner pods that succeeded but
// that the Job controller has not moved into status.succeeded yet
// (status.uncountedTerminatedPods.succeeded, kueue v0.17
// pkg/controller/jobs/job PodsReady). A shard that just finished is such a
// pod for a sync of the Job controller: PodsReady must not flip to
// WaitForRecovery (and start Kueue's recoveryTimeout) for it.
func TestPodsReadyCountsUncountedSucceededRunnerPods(t *testing.T) {
	k, _ := podsReadyStarted(t, 2)
	// Shard 0 succeeded; the Job controller recorded it as uncounted.
	j := k.w.job(build.RunnerJobName("ev", "sim"))
	j.Status.Active, j.Status.Ready = 1, ptr.To[int32](1)
	j.Status.UncountedTerminatedPods = &batchv1.UncountedTerminatedPods{Succeeded: []types.UID{"shard-0"}}
	if got := ops(k.pass(t0.Add(2 * time.Second))); len(got) != 0 {
		t.Errorf("a shard that succeeded (uncounted yet) reads as a lost pod: ops %v, want none (Kueue counts it as ready or succeeded)", got)
	}
}

// A started evaluation suspended for a weekend: its server is scaled to
// zero and its runner Job suspended by the operator, on purpose. The
// change turns its admitted Workload's PodsReady from True to False
// WaitForRecovery, which Kueue times only when waitForPodsReady has a
// recoveryTimeout (optional, none by default: kueue v0.17
// workload_controller.go admittedNotReadyWorkload); without one the
// Workload keeps its quota for as long as the evaluation stays suspended
// (before the change PodsReady never read True and the PodsReady timeout
// evicted it). An evaluation that cannot make progress holds no Kueue
// quota (SHARED-CLUSTER.md): once its pods are gone, the operator must
// hand the quota back (delete the Workload, as for a model released for
// a stall), not leave it to Kueue's timeouts.
func TestSuspendedEvaluationHandsBackItsQuota(t *testing.T) {
	k, _ := podsReadyStarted(t, 1)
	k.e.Spec.Suspend = ptr.To(true)
	var seen [][]string
	deleted := false
	for i := range 6 {
		now := t0.Add(time.Duration(10+i) * time.Second)
		p := k.pass(now)
		seen = append(seen, ops(p))
		// The kubelet and the Job controller: no pod of the model is left.
		k.w.ServerPods, k.w.RunnerPods = nil, nil
		if d := k.w.deployment(build.ServerName("ev", "sim")); d != nil && ptr.Deref(d.Spec.Replicas, 1) == 0 {
			d.Status.ReadyReplicas = 0
		}
		if j := k.w.job(build.RunnerJobName("ev", "sim")); j != nil && ptr.Deref(j.Spec.Suspend, false) {
			j.Status.Active, j.Status.Ready = 0, ptr.To[int32](0)
		}
		for _, op := range p.Queue {
			if op.Kind == kueueadapter.QueueDelete || op.Kind == kueueadapter.QueueFinish {
				deleted = true
			}
		}
	}
	if !deleted {
		t.Errorf("a suspended evaluation whose pods are gone keeps its admitted Workload (its quota); Workload ops pass by pass: %v", seen)
	}
}
