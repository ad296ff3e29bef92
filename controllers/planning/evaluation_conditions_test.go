package planning

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	repotv1 "repot.dev/repot-operator/api/v1alpha1"
	revtesting "repot.dev/repot-operator/api/v1alpha1/testing"
)

// Facts of the tests below: an evaluation past its start, in each phase.
var (
	stalledServer = &serverView{Model: "a", State: repotv1.ServerStalled, Reason: repotv1.ReasonImagePullFailed, Message: "image pull failed"}
	waitingServer = &serverView{Model: "b", Reason: repotv1.ReasonWaitingForCapacity, Message: "no node has a free GPU"}
	complete      = outcome{Phase: phaseComplete, Reason: repotv1.ReasonAllRunsRecorded, Message: "all 4 runs recorded"}
	failed        = outcome{Phase: phaseFailed, Reason: repotv1.ReasonDeadlineExceeded, Message: "deadline passed"}
)

func TestServersReadyCondition(t *testing.T) {
	tests := []struct {
		name string
		f    conditionFacts
		want conditionValue
	}{
		{"ended", conditionFacts{out: complete, running: 1, ready: 1}, conditionValue{false, repotv1.ReasonServersStopped, "the model servers are stopped"}},
		{"suspended", conditionFacts{suspend: true, running: 1, ready: 1}, conditionValue{false, repotv1.ReasonServersStopped, "the model servers are stopped"}},
		{"all queued", conditionFacts{queued: 2}, conditionValue{false, repotv1.ReasonModelsQueued, "2 model(s) wait in Queued for a slot of spec.maxParallelModels or for admission"}},
		{"all done", conditionFacts{}, conditionValue{false, repotv1.ReasonServersStopped, "every model's runs are recorded and its server deleted"}},
		{"all answered", conditionFacts{running: 2, ready: 2, stalled: stalledServer}, conditionValue{true, repotv1.ReasonServersAnswered, "all 2 running model(s) answered a completion"}},
		{"stalled before waiting", conditionFacts{running: 2, stalled: stalledServer, waiting: waitingServer}, conditionValue{false, repotv1.ReasonImagePullFailed, "image pull failed"}},
		{"waiting", conditionFacts{running: 2, waiting: waitingServer}, conditionValue{false, repotv1.ReasonWaitingForCapacity, "no node has a free GPU"}},
		{"starting", conditionFacts{running: 3, ready: 1, notReady: []string{"b", "c"}}, conditionValue{false, repotv1.ReasonServersStarting, "1 of 3 model(s) answered a completion; waiting for b, c"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, serversReadyCondition(&tt.f)); diff != "" {
				t.Errorf("serversReadyCondition() (-want +got):\n%s", diff)
			}
		})
	}
}

func TestRunningCondition(t *testing.T) {
	tests := []struct {
		name string
		f    conditionFacts
		want conditionValue
	}{
		{"ended", conditionFacts{out: failed, activeJobs: 1}, conditionValue{false, repotv1.ReasonRunnersFinished, "the evaluation ended"}},
		{"suspended", conditionFacts{suspend: true, activeJobs: 1}, conditionValue{false, repotv1.ReasonSuspended, "spec.suspend is true: runners are suspended and servers scaled to zero; resuming continues from the ledgers"}},
		{"runners active", conditionFacts{activeJobs: 1, running: 2}, conditionValue{true, repotv1.ReasonRunnersActive, "1 of 2 runner Job(s) running"}},
		{"none yet", conditionFacts{running: 2}, conditionValue{false, repotv1.ReasonWaitingForServers, "runner Jobs start once their model's server is ready"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, runningCondition(&tt.f)); diff != "" {
				t.Errorf("runningCondition() (-want +got):\n%s", diff)
			}
		})
	}
}

// TestFinalConditions: Complete, Failed and Ready in each phase.
func TestFinalConditions(t *testing.T) {
	inProgressValue := conditionValue{false, repotv1.ReasonInProgress, inProgress}
	tests := []struct {
		name                   string
		out                    outcome
		complete, failed, read conditionValue
	}{
		{"complete", complete,
			conditionValue{true, repotv1.ReasonAllRunsRecorded, "all 4 runs recorded"},
			conditionValue{false, repotv1.ReasonAllRunsRecorded, "the evaluation completed"},
			conditionValue{true, repotv1.ReasonAllRunsRecorded, "all 4 runs recorded"}},
		{"failed", failed,
			conditionValue{false, repotv1.ReasonFailed, "deadline passed"},
			conditionValue{true, repotv1.ReasonDeadlineExceeded, "deadline passed"},
			conditionValue{false, repotv1.ReasonFailed, "deadline passed"}},
		{"active", outcome{}, inProgressValue, inProgressValue, inProgressValue},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := &conditionFacts{out: tt.out}
			got := []conditionValue{completeCondition(f), failedCondition(f), readyCondition(f)}
			if diff := cmp.Diff([]conditionValue{tt.complete, tt.failed, tt.read}, got); diff != "" {
				t.Errorf("Complete, Failed, Ready (-want +got):\n%s", diff)
			}
		})
	}
}

// TestKstatusConditionsAndState: Reconciling, Stalled and the one-word
// state, in each phase and for each obstacle, in the order they win.
func TestKstatusConditionsAndState(t *testing.T) {
	tests := []struct {
		name                 string
		f                    conditionFacts
		reconciling, stalled conditionValue
		state                repotv1.EvaluationState
	}{
		{"complete", conditionFacts{out: complete, suspend: true, stallReason: "X"},
			conditionValue{false, repotv1.ReasonReconciled, "nothing left to do"},
			conditionValue{false, repotv1.ReasonReconciled, "nothing left to do"}, repotv1.StateComplete},
		{"failed", conditionFacts{out: failed, suspend: true},
			conditionValue{false, repotv1.ReasonReconciled, "the evaluation failed"},
			conditionValue{true, repotv1.ReasonFailed, "deadline passed"}, repotv1.StateFailed},
		{"suspended before stalled", conditionFacts{suspend: true, stallReason: repotv1.ReasonServerStalled, stallMessage: "m", activeJobs: 1},
			conditionValue{false, repotv1.ReasonSuspended, "spec.suspend is true"},
			conditionValue{false, repotv1.ReasonSuspended, "spec.suspend is true"}, repotv1.StateSuspended},
		{"stalled before waiting", conditionFacts{stallReason: repotv1.ReasonProblemsUnavailable, stallMessage: "no problems", waiting: waitingServer, activeJobs: 1},
			conditionValue{false, repotv1.ReasonProblemsUnavailable, "no problems"},
			conditionValue{true, repotv1.ReasonProblemsUnavailable, "no problems"}, repotv1.StateStalled},
		{"waiting for capacity is progress", conditionFacts{waiting: waitingServer},
			conditionValue{true, repotv1.ReasonWaitingForCapacity, "no node has a free GPU"},
			conditionValue{false, repotv1.ReasonWaitingForCapacity, "waiting for capacity is not stalled until spec.stalledAfterSeconds passed"}, repotv1.StatePending},
		{"runners active", conditionFacts{activeJobs: 2},
			conditionValue{true, repotv1.ReasonInProgress, inProgress},
			conditionValue{false, repotv1.ReasonInProgress, "no known obstacle"}, repotv1.StateRunning},
		{"between two models' servers: recorded runs, no runner", conditionFacts{recorded: true},
			conditionValue{true, repotv1.ReasonInProgress, inProgress},
			conditionValue{false, repotv1.ReasonInProgress, "no known obstacle"}, repotv1.StateRunning},
		{"nothing yet", conditionFacts{},
			conditionValue{true, repotv1.ReasonInProgress, inProgress},
			conditionValue{false, repotv1.ReasonInProgress, "no known obstacle"}, repotv1.StatePending},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.reconciling, reconcilingCondition(&tt.f)); diff != "" {
				t.Errorf("reconcilingCondition() (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.stalled, stalledCondition(&tt.f)); diff != "" {
				t.Errorf("stalledCondition() (-want +got):\n%s", diff)
			}
			if got := evaluationState(&tt.f); got != tt.state {
				t.Errorf("evaluationState() = %s, want %s", got, tt.state)
			}
		})
	}
}

// TestObserveConditionFacts: the counts and the first stalled and waiting
// servers, and the stall's cause in its order (problems, server, runner).
func TestObserveConditionFacts(t *testing.T) {
	e := revtesting.MakeEvaluation("ev", "ns").Simulated("a", "strong", 1).Simulated("b", "strong", 1).Simulated("c", "strong", 1).Simulated("d", "strong", 1).Obj()
	views := []serverView{
		{Model: "a", Ready: true},
		{Model: "b", State: repotv1.ServerStalled, Reason: repotv1.ReasonImagePullFailed, Message: "pull"},
		{Model: "c", Reason: repotv1.ReasonWaitingForCapacity, Message: "capacity"},
		{Model: "d"},
	}
	models := []modelState{{Active: true}, {Active: true}, {Active: true}, {}}
	runners := []runnerDiagnosis{{}, {Cause: repotv1.ReasonRunnerPending, Message: "pending"}}
	tests := []struct {
		name        string
		unavailable string
		views       []serverView
		wantReason  string
	}{
		{"problems unavailable first", "no problem set", views, repotv1.ReasonProblemsUnavailable},
		{"then a stalled server", "", views, repotv1.ReasonServerStalled},
		{"then a runner's cause", "", views[2:], repotv1.ReasonRunnerPending},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := &World{Now: time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)}
			w.Problems.Unavailable = tt.unavailable
			f := observeConditionFacts(e, w, outcome{}, tt.views, models[:len(tt.views)], runners)
			if f.stallReason != tt.wantReason {
				t.Errorf("stallReason = %q, want %q", f.stallReason, tt.wantReason)
			}
		})
	}
	f := observeConditionFacts(e, &World{}, outcome{}, views, models, nil)
	got := struct {
		Running, Ready, Queued int
		NotReady               []string
		Stalled, Waiting       string
	}{f.running, f.ready, f.queued, f.notReady, f.stalled.Model, f.waiting.Model}
	want := struct {
		Running, Ready, Queued int
		NotReady               []string
		Stalled, Waiting       string
	}{3, 1, 1, []string{"b", "c"}, "b", "c"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("facts (-want +got):\n%s", diff)
	}
}

// TestEvaluationConditionsOrder: the seven conditions, in the status's order.
func TestEvaluationConditionsOrder(t *testing.T) {
	e := revtesting.MakeEvaluation("ev", "ns").Simulated("a", "strong", 1).Obj()
	_, conds := evaluationConditions(e, &World{}, outcome{}, []serverView{{Model: "a"}}, []modelState{{Active: true}}, nil)
	var got []string
	for _, c := range conds {
		got = append(got, c.Type)
	}
	want := []string{repotv1.ConditionServersReady, repotv1.ConditionRunning, repotv1.ConditionComplete, repotv1.ConditionFailed,
		repotv1.ConditionReady, repotv1.ConditionReconciling, repotv1.ConditionStalled}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("condition types (-want +got):\n%s", diff)
	}
}
