package planning

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	repotv1 "repot.dev/repot-operator/api/v1alpha1"
	revtesting "repot.dev/repot-operator/api/v1alpha1/testing"
	"repot.dev/repot-operator/controllers/build"
)

// An evaluation not yet started stalls on a rejected child, with its spec
// left editable; the same rejection again changes nothing.
func TestPlanRejectedBeforeStart(t *testing.T) {
	cause := errors.New(`create *v1.Deployment ev-big-server: Deployment.apps "ev-big-server" is invalid: spec.template.spec.nodeSelector: Invalid value: "not a key!"`)
	e := revtesting.MakeEvaluation("ev", "ns").VLLM("big", "org/model").ActiveDeadline(600).Obj()
	w := newWorld()
	p := planApplied(e, w, Applied{Rejected: cause})
	// No child changes: the planner describes the world as observed.
	want := planDigest{
		State:      repotv1.StateStalled,
		Conditions: conds("False/ServersStarting", "False/WaitingForServers", "False/InProgress", "False/InProgress", "False/InProgress", "False/ChildRejected", "True/ChildRejected"),
		Servers:    []string{"big=Pending"},
		Events:     []string{"ChildRejected"},
	}
	if diff := cmp.Diff(want, digest(p)); diff != "" {
		t.Errorf("plan (-want +got):\n%s", diff)
	}
	st := findCondition(p.Status.Conditions, repotv1.ConditionStalled)
	if !strings.Contains(st.Message, "fix the spec") || !strings.Contains(st.Message, "nodeSelector") {
		t.Errorf("Stalled message %q should say to fix the spec and carry the API server's cause", st.Message)
	}
	if st.ObservedGeneration != e.Generation {
		t.Errorf("Stalled observedGeneration = %d, want %d", st.ObservedGeneration, e.Generation)
	}

	applyToWorld(e, w, Plan{Status: p.Status})
	w.Now = w.Now.Add(time.Minute)
	again := planApplied(e, w, Applied{Rejected: cause})
	if len(again.Events) != 0 {
		t.Errorf("a repeated rejection emits events %v", digest(again).Events)
	}
	st2 := findCondition(again.Status.Conditions, repotv1.ConditionStalled)
	if !st2.LastTransitionTime.Equal(&st.LastTransitionTime) {
		t.Errorf("Stalled lastTransitionTime moved from %v to %v", st.LastTransitionTime, st2.LastTransitionTime)
	}
}

// A started evaluation cannot change its spec, so a rejected child fails
// it, and the next pass tears its servers down.
func TestPlanRejectedAfterStart(t *testing.T) {
	e, w, cause := jobRejectedWithServerReady()
	p := planApplied(e, w, Applied{Rejected: cause})
	want := planDigest{
		State:      repotv1.StateFailed,
		Conditions: conds("True/ServersAnswered", "False/RunnersFinished", "False/Failed", "True/ChildRejected", "False/Failed", "False/Reconciled", "True/Failed"),
		Servers:    []string{"sim=Ready"},
		Started:    true,
		Completed:  true,
		// One more pass deletes the servers.
		RequeueAfter: time.Second,
		Events:       []string{"ServersAnswered", "ChildRejected", "Failed"},
	}
	if diff := cmp.Diff(want, digest(p)); diff != "" {
		t.Errorf("plan (-want +got):\n%s", diff)
	}
	if f := findCondition(p.Status.Conditions, repotv1.ConditionFailed); !strings.Contains(f.Message, "create a new RepotEvaluation") || !strings.Contains(f.Message, "cpu limit") {
		t.Errorf("Failed message %q should say to create a new evaluation and carry the API server's cause", f.Message)
	}

	// The Job was never created; the next pass sees a failed evaluation.
	applyToWorld(e, w, p)
	next := PlanEvaluation(e, w, testOpts)
	want = planDigest{
		Delete:     []string{"Deployment/" + build.ServerName("ev", "sim"), "Service/" + build.ServerName("ev", "sim")},
		State:      repotv1.StateFailed,
		Conditions: conds("False/ServersStopped", "False/RunnersFinished", "False/Failed", "True/ChildRejected", "False/Failed", "False/Reconciled", "True/Failed"),
		Servers:    []string{"sim=Stopped"},
		Started:    true,
		Completed:  true,
	}
	if diff := cmp.Diff(want, digest(next)); diff != "" {
		t.Errorf("next plan (-want +got):\n%s", diff)
	}
}

// The pass that creates an evaluation's first children may leave its status
// write to the next pass, so status.startTime can still be empty while
// children exist. Children built from the spec mean it started: a rejected
// child then fails the evaluation, and its start time is recorded.
func TestPlanRejectedWithChildrenBeforeStartTimeIsWritten(t *testing.T) {
	e, w, cause := jobRejectedWithServerReady()
	e.Status = repotv1.RepotEvaluationStatus{} // the deferred write did not happen yet
	p := planApplied(e, w, Applied{Rejected: cause})
	if got := p.Status.Summary.State; got != repotv1.StateFailed {
		t.Errorf("state = %s, want %s: children exist, so the spec was in use", got, repotv1.StateFailed)
	}
	if p.Status.StartTime == nil {
		t.Error("status.startTime is not set although children exist")
	}
}

// jobRejectedWithServerReady is an evaluation whose server is ready, in the
// pass a minute later where the API server rejects its runner Job.
func jobRejectedWithServerReady() (*repotv1.RepotEvaluation, *World, error) {
	e := revtesting.MakeEvaluation("ev", "ns").Simulated("sim", "strong", 1).Shards(2).Obj()
	w := newWorld()
	step(e, w, t0)
	setServerReady(w, "ev", "sim", true)
	w.Now = t0.Add(time.Minute)
	return e, w, errors.New(`create *v1.Job ev-sim-run: Job.batch "ev-sim-run" is invalid: spec.template.spec.containers[0].resources.requests: Invalid value: "8": must be less than or equal to cpu limit of 1`)
}

// The start time is recorded just before the first children; if the API
// server rejects them, nothing ran: the evaluation stalls, its start is
// undone and its spec stays editable.
func TestPlanRejectedRightAfterTheStartWasRecorded(t *testing.T) {
	cause := errors.New(`create *v1.Deployment: Deployment.apps is invalid: spec.template.spec.nodeSelector: Invalid value: "not a key!"`)
	e := revtesting.MakeEvaluation("ev", "ns").VLLM("big", "org/model").Obj()
	w := newWorld()
	start := metav1.NewTime(w.Now)
	e.Status.StartTime = &start
	p := planApplied(e, w, Applied{Rejected: cause})
	if p.Status.StartTime != nil {
		t.Errorf("startTime = %v, want it undone: nothing ran", p.Status.StartTime)
	}
	if st := findCondition(p.Status.Conditions, repotv1.ConditionStalled); st == nil || st.Reason != repotv1.ReasonChildRejected || digest(p).State != repotv1.StateStalled {
		t.Errorf("state %s, Stalled %+v: want Stalled/ChildRejected", digest(p).State, st)
	}
}
