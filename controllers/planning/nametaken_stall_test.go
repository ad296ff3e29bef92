package planning

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	repotv1 "repot.dev/repot-operator/api/v1alpha1"
	revtesting "repot.dev/repot-operator/api/v1alpha1/testing"
	"repot.dev/repot-operator/controllers/build"
)

// A taken name on a model's runner path (here its runner Job's, held by an
// earlier evaluation's Job the collector has not removed) is a stall the
// first plan of each pass knows (the shell observes it before the
// decision: world.NameTaken): the server, which answers but can serve no
// runner, starts its release clock and is scaled to zero after
// spec.stalledAfterSeconds, instead of holding its GPUs until the name is
// free. Once it is, suspending and resuming starts the model again.
func TestTakenRunnerPathReleasesItsServer(t *testing.T) {
	e := revtesting.MakeEvaluation("ev", "ns").Simulated("sim", "strong", 1).Shards(1).StalledAfter(300).Obj()
	w := newWorld()
	settle(e, w, t0)
	setServerReady(w, "ev", "sim", true)
	job := build.RunnerJobName("ev", "sim")
	taken := []TakenName{{Kind: "Job", Name: job, Owner: "RepotEvaluation ev (uid old)"}}
	// pass is one reconcile as the shell runs it while the name is taken:
	// observed before the decision, met again by the Job's create.
	pass := func(now time.Time) Plan {
		w.Now, w.NameTaken = now, taken
		p := Decide(e, w, testOpts)
		p.Describe(e, w, Applied{NameTaken: taken})
		applyToWorld(e, w, p)
		return p
	}
	server := build.ServerName("ev", "sim")
	replicas := func() int32 { return ptr.Deref(w.deployment(server).Spec.Replicas, 1) }

	pass(t0.Add(time.Second))
	if _, ok := w.deployment(server).Annotations[build.AnnotationStalledSince]; !ok {
		t.Fatalf("no stall clock on the server after the first pass that finds its runner Job's name taken (annotations %v)", w.deployment(server).Annotations)
	}
	if w.job(job) != nil {
		t.Fatal("a runner Job whose name is taken was counted as created")
	}
	pass(t0.Add(200 * time.Second))
	if got := replicas(); got != 1 {
		t.Fatalf("replicas %d before spec.stalledAfterSeconds; want the server kept", got)
	}
	pass(t0.Add(302 * time.Second))
	if got := replicas(); got != 0 {
		t.Fatalf("replicas %d past spec.stalledAfterSeconds with the runner Job's name taken; want 0 (the GPUs released)", got)
	}
	p := pass(t0.Add(303 * time.Second))
	srv := p.Status.Models[0].Server
	if srv.State != repotv1.ServerStalled || srv.Reason != repotv1.ReasonChildNameTaken || !strings.Contains(srv.Message, "Job "+job+" exists") {
		t.Errorf("server status %s/%s %q; want Stalled/ChildNameTaken naming the Job in the way", srv.State, srv.Reason, srv.Message)
	}

	// The earlier Job is gone: suspend and resume start the model again.
	w.NameTaken = nil
	e.Spec.Suspend = ptr.To(true)
	step(e, w, t0.Add(400*time.Second))
	e.Spec.Suspend = ptr.To(false)
	step(e, w, t0.Add(401*time.Second))
	if got := replicas(); got != 1 {
		t.Fatalf("replicas %d after suspend and resume; want the server started again", got)
	}
	setServerReady(w, "ev", "sim", true)
	settle(e, w, t0.Add(402*time.Second))
	if w.job(job) == nil {
		t.Error("no runner Job once its name is free")
	}
}

// RunnerPathChildren are what the shell looks up before a pass: the
// runner's identity and network policy, and each model's ledgers and
// runner Job while that Job does not exist; nothing once ended or for a
// model the status recorded Done.
func TestRunnerPathChildren(t *testing.T) {
	names := func(objs []Object) []string {
		var out []string
		for _, o := range objs {
			out = append(out, kindName(o))
		}
		return out
	}
	ledger := "ConfigMap/" + build.LedgerName("ev", "sim", 0)
	access := []string{"ServiceAccount/ev-runner", "Role/ev-runner", "RoleBinding/ev-runner", "NetworkPolicy/ev-runner"}
	cases := []struct {
		name  string
		setup func(e *repotv1.RepotEvaluation, w *World)
		want  []string
	}{{
		name:  "new, its server not answering yet: nothing (its runner Job is not due)",
		setup: func(*repotv1.RepotEvaluation, *World) {},
	}, {
		name: "the server answers and no runner Job exists: all of the path",
		setup: func(e *repotv1.RepotEvaluation, w *World) {
			w.Deployments = []appsv1.Deployment{{ObjectMeta: metav1.ObjectMeta{Name: build.ServerName("ev", "sim")}, Status: appsv1.DeploymentStatus{ReadyReplicas: 1}}}
		},
		want: cat(access, []string{ledger, "Job/" + build.RunnerJobName("ev", "sim")}),
	}, {
		name: "suspended: nothing",
		setup: func(e *repotv1.RepotEvaluation, w *World) {
			w.Deployments = []appsv1.Deployment{{ObjectMeta: metav1.ObjectMeta{Name: build.ServerName("ev", "sim")}, Status: appsv1.DeploymentStatus{ReadyReplicas: 1}}}
			e.Spec.Suspend = ptr.To(true)
		},
	}, {
		name: "running: nothing",
		setup: func(e *repotv1.RepotEvaluation, w *World) {
			settle(e, w, t0)
			setServerReady(w, "ev", "sim", true)
			settle(e, w, t0)
		},
	}, {
		name: "the model recorded Done: its Job is not looked up",
		setup: func(e *repotv1.RepotEvaluation, w *World) {
			settle(e, w, t0)
			e.Status.Models = []repotv1.ModelStatus{{Name: "sim", Phase: repotv1.ModelDone}}
		},
	}, {
		name: "ended: nothing",
		setup: func(e *repotv1.RepotEvaluation, w *World) {
			e.Status.CompletionTime = &metav1.Time{Time: t0}
		},
	}}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			e := revtesting.MakeEvaluation("ev", "ns").Simulated("sim", "strong", 1).Shards(1).Obj()
			w := newWorld()
			tc.setup(e, w)
			if diff := cmp.Diff(tc.want, names(RunnerPathChildren(e, w))); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}
