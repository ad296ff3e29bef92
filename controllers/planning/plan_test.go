package planning

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	batchv1 "k8s.io/api/batch/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	repotv1 "repot.dev/repot-operator/api/v1alpha1"
	revtesting "repot.dev/repot-operator/api/v1alpha1/testing"
	"repot.dev/repot-operator/controllers/build"
)

// testOpts name the API server's addresses, as the manager finds them (from
// --apiserver-cidrs or the kubernetes EndpointSlice).
var testOpts = build.Options{Image: "repot-operator:test", APIServerCIDRs: []string{"10.96.0.1/32"}}

// step plans once against the world at time now and applies the plan to it.
func step(e *repotv1.RepotEvaluation, w *World, now time.Time) Plan {
	w.Now = now
	p := PlanEvaluation(e, w, testOpts)
	applyToWorld(e, w, p)
	return p
}

// planApplied decides once against the world and describes the decision
// as the shell met it (a): a child rejected, names taken.
func planApplied(e *repotv1.RepotEvaluation, w *World, a Applied) Plan {
	p := Decide(e, w, testOpts)
	p.Describe(e, w, a)
	return p
}

// settle plans and applies passes until one creates nothing: the passes
// that, in a cluster, the creation events of each bring at once (a
// RoleBinding follows its Role, a runner Job its ledgers). It returns the
// last plan.
func settle(e *repotv1.RepotEvaluation, w *World, now time.Time) Plan {
	p := step(e, w, now)
	for i := 0; i < 10 && len(p.Create) > 0; i++ {
		p = step(e, w, now)
	}
	return p
}

func newWorld() *World { return &World{Now: t0, Problems: problemsInfo{Count: 120}} }

// accessCreates are the runner's identity and network policy a first pass
// creates; the RoleBinding follows on the pass that observes the Role.
var accessCreates = []string{"ServiceAccount/ev-runner", "Role/ev-runner", "NetworkPolicy/ev-runner"}

// serverPolicy is the servers' NetworkPolicy, created with the access of an
// evaluation that has a server model.
var serverPolicy = []string{"NetworkPolicy/ev-servers"}

func ledgers(model string, n int) []string {
	var out []string
	for i := range n {
		out = append(out, "ConfigMap/"+build.LedgerName("ev", model, i))
	}
	return out
}

func cat(parts ...[]string) []string {
	var out []string
	for _, p := range parts {
		out = append(out, p...)
	}
	return out
}

func conds(sr, run, complete, failed, ready, reconciling, stalled string) []string {
	return []string{
		"ServersReady=" + sr, "Running=" + run, "Complete=" + complete, "Failed=" + failed,
		"Ready=" + ready, "Reconciling=" + reconciling, "Stalled=" + stalled,
	}
}

var (
	pendingConds = conds("False/ServersStarting", "False/WaitingForServers", "False/InProgress", "False/InProgress", "False/InProgress", "True/InProgress", "False/InProgress")
	runningConds = conds("True/ServersAnswered", "True/RunnersActive", "False/InProgress", "False/InProgress", "False/InProgress", "True/InProgress", "False/InProgress")
)

func TestPlanEvaluation(t *testing.T) {
	sim := func() *revtesting.EvaluationWrapper {
		return revtesting.MakeEvaluation("ev", "ns").Simulated("sim", "strong", 1).Shards(2)
	}
	job := build.RunnerJobName("ev", "sim")
	cases := []struct {
		name  string
		eval  *repotv1.RepotEvaluation
		setup func(e *repotv1.RepotEvaluation, w *World)
		now   time.Time
		want  planDigest
	}{{
		name: "new simulated evaluation creates access and the server, not yet the runner or its ledgers",
		eval: sim().Obj(),
		want: planDigest{
			Create:     cat(accessCreates, serverPolicy, []string{"Service/" + build.ServerName("ev", "sim"), "Deployment/" + build.ServerName("ev", "sim")}),
			State:      repotv1.StatePending,
			Conditions: pendingConds,
			Servers:    []string{"sim=Starting"},
			Started:    true,
		},
	}, {
		name: "the next pass binds the Role it now observes",
		eval: sim().Obj(),
		setup: func(e *repotv1.RepotEvaluation, w *World) {
			step(e, w, t0)
		},
		want: planDigest{Create: []string{"RoleBinding/ev-runner"}, State: repotv1.StatePending, Conditions: pendingConds, Servers: []string{"sim=Starting"}, Started: true},
	}, {
		name: "created server that is not ready yet changes nothing",
		eval: sim().Obj(),
		setup: func(e *repotv1.RepotEvaluation, w *World) {
			settle(e, w, t0)
		},
		want: planDigest{State: repotv1.StatePending, Conditions: pendingConds, Servers: []string{"sim=Starting"}, Started: true},
	}, {
		name: "ready server: its runner's ledgers first",
		eval: sim().Obj(),
		setup: func(e *repotv1.RepotEvaluation, w *World) {
			settle(e, w, t0)
			setServerReady(w, "ev", "sim", true)
		},
		want: planDigest{
			Create: ledgers("sim", 2), State: repotv1.StatePending, Started: true,
			Conditions: conds("True/ServersAnswered", "False/WaitingForServers", "False/InProgress", "False/InProgress", "False/InProgress", "True/InProgress", "False/InProgress"),
			Servers:    []string{"sim=Ready"}, Events: []string{"ServersAnswered"},
		},
	}, {
		name: "ledgers observed: the runner Job starts",
		eval: sim().Obj(),
		setup: func(e *repotv1.RepotEvaluation, w *World) {
			settle(e, w, t0)
			setServerReady(w, "ev", "sim", true)
			step(e, w, t0)
		},
		want: planDigest{
			Create: []string{"Job/" + job}, State: repotv1.StateRunning, Started: true,
			Conditions: runningConds,
			Servers:    []string{"sim=Ready"}, Events: []string{"RunnersActive"},
		},
	}, {
		name: "running Job is not suspended when its server blinks",
		eval: sim().Obj(),
		setup: func(e *repotv1.RepotEvaluation, w *World) {
			step(e, w, t0)
			setServerReady(w, "ev", "sim", true)
			step(e, w, t0)
			step(e, w, t0)
			setServerReady(w, "ev", "sim", false)
		},
		want: planDigest{
			State: repotv1.StateRunning, Started: true, Servers: []string{"sim=Starting"},
			Conditions: conds("False/ServersStarting", "True/RunnersActive", "False/InProgress", "False/InProgress", "False/InProgress", "True/InProgress", "False/InProgress"),
		},
	}, {
		name: "suspend scales the server to zero and suspends the Job",
		eval: sim().Obj(),
		setup: func(e *repotv1.RepotEvaluation, w *World) {
			runToRunning(e, w)
			e.Spec.Suspend = ptrBool(true)
		},
		want: planDigest{
			Update: []string{"Deployment/" + build.ServerName("ev", "sim") + " replicas=0", "Job/" + job + " suspend=true"},
			State:  repotv1.StateSuspended, Started: true, Servers: []string{"sim=Stopped"},
			Conditions: conds("False/ServersStopped", "False/Suspended", "False/InProgress", "False/InProgress", "False/InProgress", "False/Suspended", "False/Suspended"),
		},
	}, {
		name: "resume scales the server up but keeps the Job suspended until the server answers",
		eval: sim().Obj(),
		setup: func(e *repotv1.RepotEvaluation, w *World) {
			runToRunning(e, w)
			e.Spec.Suspend = ptrBool(true)
			step(e, w, t0)
			setServerReady(w, "ev", "sim", false)
			e.Spec.Suspend = ptrBool(false)
		},
		want: planDigest{
			Update: []string{"Deployment/" + build.ServerName("ev", "sim") + " replicas=1"},
			State:  repotv1.StatePending, Started: true, Servers: []string{"sim=Starting"},
			Conditions: pendingConds,
		},
	}, {
		name: "resumed server that answers releases the Job",
		eval: sim().Obj(),
		setup: func(e *repotv1.RepotEvaluation, w *World) {
			runToRunning(e, w)
			e.Spec.Suspend = ptrBool(true)
			step(e, w, t0)
			setServerReady(w, "ev", "sim", false)
			e.Spec.Suspend = ptrBool(false)
			step(e, w, t0)
			setServerReady(w, "ev", "sim", true)
		},
		want: planDigest{
			Update: []string{"Job/" + job + " suspend=false"},
			State:  repotv1.StateRunning, Started: true, Servers: []string{"sim=Ready"},
			Conditions: runningConds,
			Events:     []string{"ServersAnswered", "RunnersActive"},
		},
	}, {
		name: "suspended before it ever started creates nothing",
		eval: sim().Suspend(true).Obj(),
		want: planDigest{
			State: repotv1.StateSuspended, Servers: []string{"sim=Stopped"},
			Conditions: conds("False/ServersStopped", "False/Suspended", "False/InProgress", "False/InProgress", "False/InProgress", "False/Suspended", "False/Suspended"),
		},
	}, {
		name: "completed Jobs delete the servers and complete the evaluation",
		eval: sim().Obj(),
		setup: func(e *repotv1.RepotEvaluation, w *World) {
			runToRunning(e, w)
			finishJob(w, job, batchv1.JobComplete, "CompletionsReached")
		},
		want: planDigest{
			Delete: []string{"Deployment/" + build.ServerName("ev", "sim"), "Service/" + build.ServerName("ev", "sim")},
			State:  repotv1.StateComplete, Started: true, Completed: true, Servers: []string{"sim=Stopped"},
			Conditions: conds("False/ServersStopped", "False/RunnersFinished", "True/AllRunsRecorded", "False/AllRunsRecorded", "True/AllRunsRecorded", "False/Reconciled", "False/Reconciled"),
			Events:     []string{"AllRunsRecorded"},
			// The pass after this one seals the ledgers.
			RequeueAfter: sealAfter,
		},
	}, {
		name: "a Job deleted after its runs were all recorded completes the evaluation and is not created again",
		eval: sim().Obj(),
		setup: func(e *repotv1.RepotEvaluation, w *World) {
			w.Problems.Count = 2
			runToRunning(e, w)
			w.Records = runs("sim", 2, t0)
			step(e, w, t0) // Done: its server goes, its Job winds down
			// The Job completes and a cleanup (ttlSecondsAfterFinished, a
			// policy) deletes it before the operator observes it.
			w.Jobs = nil
		},
		want: planDigest{
			State: repotv1.StateComplete, Started: true, Completed: true, Servers: []string{"sim=Stopped"},
			Conditions:   conds("False/ServersStopped", "False/RunnersFinished", "True/AllRunsRecorded", "False/AllRunsRecorded", "True/AllRunsRecorded", "False/Reconciled", "False/Reconciled"),
			Events:       []string{"AllRunsRecorded"},
			RequeueAfter: sealAfter,
		},
	}, {
		name: "a Done model whose completed Job a cleanup deleted does not hold the end back",
		eval: revtesting.MakeEvaluation("ev", "ns").Simulated("a", "strong", 1).Simulated("b", "weak", 1).Shards(1).Obj(),
		setup: func(e *repotv1.RepotEvaluation, w *World) {
			settle(e, w, t0)
			setServerReady(w, "ev", "a", true)
			setServerReady(w, "ev", "b", true)
			settle(e, w, t0)
			finishJob(w, build.RunnerJobName("ev", "a"), batchv1.JobComplete, "CompletionsReached")
			settle(e, w, t0) // a is Done (its ledgers lack runs: the status says so)
			w.Jobs = slices.DeleteFunc(w.Jobs, func(j batchv1.Job) bool { return j.Name == build.RunnerJobName("ev", "a") })
			if p := settle(e, w, t0); len(p.Create) != 0 || w.job(build.RunnerJobName("ev", "a")) != nil {
				t.Errorf("the deleted Job of Done model a was created again: %v", digest(p).Create)
			}
			finishJob(w, build.RunnerJobName("ev", "b"), batchv1.JobComplete, "CompletionsReached")
		},
		want: planDigest{
			Delete: []string{"Deployment/" + build.ServerName("ev", "b"), "Service/" + build.ServerName("ev", "b")},
			State:  repotv1.StateComplete, Started: true, Completed: true, Servers: []string{"a=Stopped", "b=Stopped"},
			Conditions:   conds("False/ServersStopped", "False/RunnersFinished", "True/AllRunsRecorded", "False/AllRunsRecorded", "True/AllRunsRecorded", "False/Reconciled", "False/Reconciled"),
			Events:       []string{"AllRunsRecorded"},
			RequeueAfter: sealAfter,
		},
	}, {
		name: "a failed Job fails the evaluation",
		eval: sim().Obj(),
		setup: func(e *repotv1.RepotEvaluation, w *World) {
			runToRunning(e, w)
			finishJob(w, job, batchv1.JobFailed, "FailedIndexes")
		},
		want: planDigest{
			Delete: []string{"Deployment/" + build.ServerName("ev", "sim"), "Service/" + build.ServerName("ev", "sim")},
			State:  repotv1.StateFailed, Started: true, Completed: true, Servers: []string{"sim=Stopped"},
			Conditions: conds("False/ServersStopped", "False/RunnersFinished", "False/Failed", "True/BackoffLimitExceeded", "False/Failed", "False/Reconciled", "True/Failed"),
			Events:     []string{"BackoffLimitExceeded", "Failed"},
			// The pass after this one seals the ledgers.
			RequeueAfter: sealAfter,
		},
	}, {
		name: "the active deadline fails the evaluation and stops its runners",
		eval: sim().ActiveDeadline(600).Obj(),
		setup: func(e *repotv1.RepotEvaluation, w *World) {
			runToRunning(e, w)
		},
		now: t0.Add(600 * time.Second),
		want: planDigest{
			Update: []string{"Job/" + job + " suspend=true"},
			Delete: []string{"Deployment/" + build.ServerName("ev", "sim"), "Service/" + build.ServerName("ev", "sim")},
			State:  repotv1.StateFailed, Started: true, Completed: true, Servers: []string{"sim=Stopped"},
			Conditions: conds("False/ServersStopped", "False/RunnersFinished", "False/Failed", "True/DeadlineExceeded", "False/Failed", "False/Reconciled", "True/Failed"),
			Events:     []string{"DeadlineExceeded", "Failed"},
			// The pass after this one seals the ledgers.
			RequeueAfter: sealAfter,
		},
	}, {
		name: "before the deadline the controller asks to look again when it passes",
		eval: sim().ActiveDeadline(600).Obj(),
		setup: func(e *repotv1.RepotEvaluation, w *World) {
			runToRunning(e, w)
		},
		now: t0.Add(100 * time.Second),
		want: planDigest{
			State: repotv1.StateRunning, Started: true, Servers: []string{"sim=Ready"},
			Conditions: runningConds, RequeueAfter: 500 * time.Second,
		},
	}, {
		name: "a finished evaluation waits for its TTL",
		eval: sim().TTL(3600).Obj(),
		setup: func(e *repotv1.RepotEvaluation, w *World) {
			runToRunning(e, w)
			finishJob(w, job, batchv1.JobComplete, "CompletionsReached")
			step(e, w, t0)
		},
		now: t0.Add(1000 * time.Second),
		want: planDigest{
			// The stored status records the end: the ledgers are sealed.
			Update: []string{
				"ConfigMap/" + build.LedgerName("ev", "sim", 0) + " annotate=" + build.AnnotationSealed,
				"ConfigMap/" + build.LedgerName("ev", "sim", 1) + " annotate=" + build.AnnotationSealed,
			},
			State: repotv1.StateComplete, Started: true, Completed: true, Servers: []string{"sim=Stopped"},
			Conditions:   conds("False/ServersStopped", "False/RunnersFinished", "True/AllRunsRecorded", "False/AllRunsRecorded", "True/AllRunsRecorded", "False/Reconciled", "False/Reconciled"),
			RequeueAfter: 2600 * time.Second,
		},
	}, {
		name: "the TTL deletes the evaluation",
		eval: sim().TTL(3600).Obj(),
		setup: func(e *repotv1.RepotEvaluation, w *World) {
			runToRunning(e, w)
			finishJob(w, job, batchv1.JobComplete, "CompletionsReached")
			step(e, w, t0)
		},
		now: t0.Add(3600 * time.Second),
		want: planDigest{
			State: repotv1.StateComplete, Started: true, Completed: true, Servers: []string{"sim=Stopped"},
			Conditions:       conds("False/ServersStopped", "False/RunnersFinished", "True/AllRunsRecorded", "False/AllRunsRecorded", "True/AllRunsRecorded", "False/Reconciled", "False/Reconciled"),
			DeleteEvaluation: true,
		},
	}, {
		name: "an unschedulable server stalls the evaluation with the cause",
		eval: revtesting.MakeEvaluation("ev", "ns").VLLM("qwen", "Qwen/Qwen3-8B").Shards(1).Obj(),
		setup: func(e *repotv1.RepotEvaluation, w *World) {
			settle(e, w, t0)
			w.ServerPods = append(w.ServerPods, unschedulablePod("ev", "qwen"))
		},
		want: planDigest{
			State: repotv1.StateStalled, Started: true, Servers: []string{"qwen=Stalled/Unschedulable"},
			Conditions: conds("False/Unschedulable", "False/WaitingForServers", "False/InProgress", "False/InProgress", "False/InProgress", "False/ServerStalled", "True/ServerStalled"),
			Events:     []string{"ServerStalled"},
			// The stall's start is marked on the Deployment; the server is
			// released spec.stalledAfterSeconds later.
			Update:       []string{"Deployment/" + build.ServerName("ev", "qwen") + " replicas=1"},
			RequeueAfter: 10 * time.Minute,
		},
	}, {
		name: "an unschedulable server within spec.stalledAfterSeconds is Reconciling, WaitingForCapacity",
		eval: revtesting.MakeEvaluation("ev", "ns").VLLM("qwen", "Qwen/Qwen3-8B").Shards(1).StalledAfter(1800).Obj(),
		setup: func(e *repotv1.RepotEvaluation, w *World) {
			settle(e, w, t0)
			w.ServerPods = append(w.ServerPods, unschedulablePod("ev", "qwen"))
		},
		want: planDigest{
			State: repotv1.StatePending, Started: true, Servers: []string{"qwen=Starting/WaitingForCapacity"},
			Conditions:   conds("False/WaitingForCapacity", "False/WaitingForServers", "False/InProgress", "False/InProgress", "False/InProgress", "True/WaitingForCapacity", "False/WaitingForCapacity"),
			RequeueAfter: 10 * time.Minute,
		},
	}, {
		name: "an endpoint model starts its runner as soon as its access and ledgers are observed",
		eval: revtesting.MakeEvaluation("ev", "ns").Endpoint("api", "https://api.example.com/v1", "gpt-x").Shards(1).Obj(),
		setup: func(e *repotv1.RepotEvaluation, w *World) {
			if got := digest(step(e, w, t0)).Create; !cmp.Equal(got, cat(accessCreates, ledgers("api", 1))) {
				t.Errorf("first pass creates %v", got)
			}
			if got := digest(step(e, w, t0)).Create; !cmp.Equal(got, []string{"RoleBinding/ev-runner"}) {
				t.Errorf("second pass creates %v", got)
			}
		},
		want: planDigest{
			Create: []string{"Job/" + build.RunnerJobName("ev", "api")},
			State:  repotv1.StateRunning, Started: true, Servers: []string{"api=External"},
			Conditions: runningConds,
			Events:     []string{"RunnersActive"},
		},
	}, {
		name: "unreadable problems hold the runner back and stall",
		eval: revtesting.MakeEvaluation("ev", "ns").Endpoint("api", "https://api.example.com/v1", "gpt-x").Shards(1).ProblemsConfigMap("probs", "").Obj(),
		setup: func(e *repotv1.RepotEvaluation, w *World) {
			w.Problems = ProblemsFromConfigMap(e.Spec.Problems.ConfigMap, nil)
		},
		want: planDigest{
			Create: accessCreates,
			State:  repotv1.StateStalled, Started: false, Servers: []string{"api=External"},
			Conditions:   conds("True/ServersAnswered", "False/WaitingForServers", "False/InProgress", "False/InProgress", "False/InProgress", "False/ProblemsUnavailable", "True/ProblemsUnavailable"),
			Events:       []string{"ServersAnswered", "ProblemsUnavailable"},
			RequeueAfter: problemsRecheck,
		},
	}}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			e, w := tc.eval, newWorld()
			if tc.setup != nil {
				tc.setup(e, w)
			}
			now := tc.now
			if now.IsZero() {
				now = t0
			}
			w.Now = now
			got := digest(PlanEvaluation(e, w, testOpts))
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("plan (-want +got):\n%s", diff)
			}
		})
	}
}

// runToRunning drives a one-model simulated evaluation until its Job runs.
func runToRunning(e *repotv1.RepotEvaluation, w *World) {
	settle(e, w, t0)
	setServerReady(w, e.Name, e.Spec.Models[0].Name, true)
	settle(e, w, t0)
	step(e, w, t0)
}

func ptrBool(b bool) *bool { return &b }

// TestPlanIsIdempotent checks that planning again against the world a plan
// produced changes nothing: no children, no status change, no events.
func TestPlanIsIdempotent(t *testing.T) {
	evals := map[string]*repotv1.RepotEvaluation{
		"simulated": revtesting.MakeEvaluation("ev", "ns").Simulated("a", "strong", 1).Simulated("b", "weak", 2).Obj(),
		"vllm":      revtesting.MakeEvaluation("ev", "ns").VLLM("q", "Qwen/Qwen3-8B").Obj(),
		"endpoint":  revtesting.MakeEvaluation("ev", "ns").Endpoint("api", "http://10.0.0.1:8000/v1", "m").Obj(),
		"suspended": revtesting.MakeEvaluation("ev", "ns").Simulated("a", "strong", 1).Suspend(true).Obj(),
	}
	for name, e := range evals {
		t.Run(name, func(t *testing.T) {
			w := newWorld()
			first := step(e, w, t0)
			settle(e, w, t0)
			before := e.Status.DeepCopy()
			again := PlanEvaluation(e, w, testOpts)
			if len(first.Create) == 0 && name != "suspended" {
				t.Fatalf("first plan created nothing")
			}
			if len(again.Create)+len(again.Update)+len(again.Delete) != 0 || len(again.Events) != 0 {
				t.Errorf("second plan is not empty: %+v", digest(again))
			}
			roundTimes(&again.Status)
			if diff := cmp.Diff(*before, again.Status); diff != "" {
				t.Errorf("status changed on an unchanged world (-first +second):\n%s", diff)
			}
		})
	}
}

// A pass creates at most Options.CreatesPerPass children; the rest follow
// on the passes their creation events bring, models in spec order.
func TestCreatesPerPass(t *testing.T) {
	w := revtesting.MakeEvaluation("ev", "ns")
	for i := range 16 {
		w = w.Simulated(fmt.Sprint("m", i), "strong", int64(i))
	}
	e, world := w.Obj(), newWorld()
	p := step(e, world, t0)
	if len(p.Create) != 8 {
		t.Fatalf("first pass creates %d children, want the budget of 8", len(p.Create))
	}
	if got := digest(p).Create[3:]; !cmp.Equal(got, []string{"NetworkPolicy/ev-servers", "Service/" + build.ServerName("ev", "m0"), "Deployment/" + build.ServerName("ev", "m0"), "Service/" + build.ServerName("ev", "m1"), "Deployment/" + build.ServerName("ev", "m1")}) {
		t.Errorf("first pass creates %v after the access objects, want the servers' NetworkPolicy, then the first models' servers in spec order", got)
	}
	passes := 1
	for len(p.Create) > 0 {
		if len(p.Create) > 8 {
			t.Fatalf("a pass creates %d children, over the budget", len(p.Create))
		}
		p = step(e, world, t0)
		passes++
	}
	if len(world.Deployments) != 16 || len(world.RoleBindings) != 1 {
		t.Errorf("after %d passes: %d servers and %d RoleBindings, want 16 and 1", passes, len(world.Deployments), len(world.RoleBindings))
	}
}

// The runner Role and both NetworkPolicies follow the spec and the
// operator's options: one that differs (an operator upgrade that narrows
// the Role, an option changed, an edit by hand) is updated, not only
// created when missing.
func TestAccessObjectsAreReconciled(t *testing.T) {
	e := revtesting.MakeEvaluation("ev", "ns").Simulated("sim", "strong", 1).Obj()
	w := newWorld()
	settle(e, w, t0)
	if p := step(e, w, t0); len(p.Update) != 0 {
		t.Fatalf("a settled world updates %v", digest(p).Update)
	}
	if len(w.NetworkPolicies) != 2 {
		t.Fatalf("network policies %d, want the runners' and the servers'", len(w.NetworkPolicies))
	}
	w.Roles[0].Rules[0].Verbs = []string{"get", "update", "patch"}
	for i := range w.NetworkPolicies {
		w.NetworkPolicies[i].Spec.Ingress = nil
		w.NetworkPolicies[i].Spec.Egress = nil
	}
	p := step(e, w, t0)
	if diff := cmp.Diff([]string{"Role/ev-runner", "NetworkPolicy/ev-runner", "NetworkPolicy/ev-servers"}, digest(p).Update); diff != "" {
		t.Errorf("updates (-want +got):\n%s", diff)
	}
	for _, o := range p.Update {
		if r, ok := o.(*rbacv1.Role); ok && !cmp.Equal(r.Rules, build.RunnerRole(e).Rules) {
			t.Errorf("updated Role rules %v, want %v", r.Rules, build.RunnerRole(e).Rules)
		}
	}
	o := testOpts
	o.MetricsScraper.PodSelector = &metav1.LabelSelector{MatchLabels: map[string]string{"app": "prometheus"}}
	if d := digest(PlanEvaluation(e, w, o)); !slices.Contains(d.Update, "NetworkPolicy/ev-servers") {
		t.Errorf("a metrics scraper configured after creation: updates %v, want the servers' NetworkPolicy", d.Update)
	}
}

// A runner NetworkPolicy written without the API server's addresses says
// so once, with its creation.
func TestAPIServerUnknownWarning(t *testing.T) {
	e := revtesting.MakeEvaluation("ev", "ns").Simulated("sim", "strong", 1).Obj()
	warned := func(p Plan) bool {
		return slices.ContainsFunc(p.Events, func(ev Event) bool { return ev.Warning && ev.Reason == ReasonAPIServerUnknown })
	}
	unknown := testOpts
	unknown.APIServerCIDRs = nil
	w := newWorld()
	p := PlanEvaluation(e, w, unknown)
	if !warned(p) {
		t.Error("the pass that creates the runner NetworkPolicy without API server addresses does not warn")
	}
	applyToWorld(e, w, p)
	if warned(PlanEvaluation(e, w, unknown)) {
		t.Error("a later pass warns again")
	}
	if warned(PlanEvaluation(e, newWorld(), testOpts)) {
		t.Error("warns although the API server's addresses are known")
	}
}
