package planning

import (
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"

	repotv1 "repot.dev/repot-operator/api/v1alpha1"
	revtesting "repot.dev/repot-operator/api/v1alpha1/testing"
	"repot.dev/repot-operator/controllers/build"
)

// quotaRefusal is what the ReplicaSet controller reports when a
// ResourceQuota refuses a pod (the Deployment controller copies it).
const quotaRefusal = `pods "ev-sim-server-5d9c7b-x2x4q" is forbidden: exceeded quota: tenant-a, requested: requests.nvidia.com/gpu=1, used: requests.nvidia.com/gpu=4, limited: requests.nvidia.com/gpu=4`

func refusePods(w *World, eval, model string, refused bool) {
	d := w.deployment(build.ServerName(eval, model))
	d.Status.Conditions = nil
	if refused {
		d.Status.Conditions = []appsv1.DeploymentCondition{{Type: appsv1.DeploymentReplicaFailure, Status: corev1.ConditionTrue, Reason: "FailedCreate", Message: quotaRefusal}}
	}
}

// A server whose pods the API server refuses (a ResourceQuota here) is
// Stalled at once with the API server's words, a Warning event says so,
// and its release clock starts; still refused after
// spec.stalledAfterSeconds it is released like any stalled server (so that,
// queued, it hands its quota back). Fixed before that, the ReplicaSet's
// retry lets the model go on, and the stall is forgotten.
func TestServerPodsRefusedIsAStall(t *testing.T) {
	newEval := func() *repotv1.RepotEvaluation {
		return revtesting.MakeEvaluation("ev", "ns").Simulated("sim", "strong", 1).Shards(1).StalledAfter(300).Obj()
	}
	name := build.ServerName("ev", "sim")

	t.Run("refused: stalled in the API server's words, then released", func(t *testing.T) {
		e, w := newEval(), newWorld()
		settle(e, w, t0)
		refusePods(w, "ev", "sim", true)
		p := step(e, w, t0.Add(time.Second))
		srv := p.Status.Models[0].Server
		if srv.State != repotv1.ServerStalled || srv.Reason != repotv1.ReasonServerPodsRefused || !strings.Contains(srv.Message, "exceeded quota: tenant-a") {
			t.Fatalf("server status %s/%s %q; want Stalled/ServerPodsRefused quoting the quota", srv.State, srv.Reason, srv.Message)
		}
		if c := findCondition(p.Status.Conditions, repotv1.ConditionStalled); c == nil || c.Status != "True" || !strings.Contains(c.Message, "exceeded quota: tenant-a") {
			t.Errorf("Stalled condition %+v; want True quoting the quota", c)
		}
		warned := false
		for _, ev := range p.Events {
			warned = warned || (ev.Warning && strings.Contains(ev.Message, "exceeded quota: tenant-a"))
		}
		if !warned {
			t.Errorf("no Warning event quoting the quota: %+v", p.Events)
		}
		if _, ok := w.deployment(name).Annotations[build.AnnotationStalledSince]; !ok {
			t.Fatal("no stall clock on a server whose pods are refused")
		}
		step(e, w, t0.Add(302*time.Second))
		if got := ptr.Deref(w.deployment(name).Spec.Replicas, 1); got != 0 {
			t.Fatalf("replicas %d after spec.stalledAfterSeconds refused; want 0 (released)", got)
		}
		p = step(e, w, t0.Add(303*time.Second))
		if srv := p.Status.Models[0].Server; srv.Reason != repotv1.ReasonServerPodsRefused || !strings.Contains(srv.Message, "scaled to zero") {
			t.Errorf("released server status %s %q; want ServerPodsRefused saying it was scaled to zero", srv.Reason, srv.Message)
		}
	})

	t.Run("the quota raised before the release: the model goes on", func(t *testing.T) {
		e, w := newEval(), newWorld()
		settle(e, w, t0)
		refusePods(w, "ev", "sim", true)
		step(e, w, t0.Add(time.Second))
		refusePods(w, "ev", "sim", false)
		setServerReady(w, "ev", "sim", true)
		p := settle(e, w, t0.Add(100*time.Second))
		if _, ok := w.deployment(name).Annotations[build.AnnotationStalledSince]; ok {
			t.Error("the stall clock stays once the server's pod was created and answers")
		}
		if w.job(build.RunnerJobName("ev", "sim")) == nil {
			t.Error("no runner Job once the server answers")
		}
		if c := findCondition(p.Status.Conditions, repotv1.ConditionStalled); c != nil && c.Status == "True" {
			t.Errorf("still Stalled: %+v", c)
		}
	})
}

// A runner Job whose pods the API server refuses (only FailedCreate events
// say so) stalls its model at once: the status quotes the refusal, and the
// server, which serves no runner, is released after
// spec.stalledAfterSeconds.
func TestRunnerPodsRefusedReleasesTheServer(t *testing.T) {
	e := revtesting.MakeEvaluation("ev", "ns").Simulated("sim", "strong", 1).Shards(1).StalledAfter(300).Obj()
	w := newWorld()
	settle(e, w, t0)
	setServerReady(w, "ev", "sim", true)
	settle(e, w, t0)
	job := build.RunnerJobName("ev", "sim")
	if w.job(job) == nil {
		t.Fatal("no runner Job: the setup did not start the model")
	}
	w.RunnerCreateFailures = map[string]string{job: "Error creating: " + quotaRefusal}
	p := step(e, w, t0.Add(time.Second))
	if c := findCondition(p.Status.Conditions, repotv1.ConditionStalled); c == nil || c.Status != "True" || !strings.Contains(c.Message, "exceeded quota: tenant-a") {
		t.Errorf("Stalled condition %+v; want True quoting the quota", c)
	}
	step(e, w, t0.Add(302*time.Second))
	if got := ptr.Deref(w.deployment(build.ServerName("ev", "sim")).Spec.Replicas, 1); got != 0 {
		t.Fatalf("replicas %d after spec.stalledAfterSeconds with the runner pods refused; want 0 (released)", got)
	}
	p = step(e, w, t0.Add(303*time.Second))
	if srv := p.Status.Models[0].Server; srv.Reason != repotv1.ReasonRunnerPodsRefused {
		t.Errorf("released server reason %s; want RunnerPodsRefused", srv.Reason)
	}
	if j := w.job(job); !ptr.Deref(j.Spec.Suspend, false) {
		t.Error("the runner Job runs on while its server is released")
	}
}
