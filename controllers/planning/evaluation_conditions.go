package planning

import (
	"fmt"
	"strings"

	repotv1 "repot.dev/repot-operator/api/v1alpha1"
)

// conditionFacts is what an evaluation's conditions and state are derived
// from: one pass's observations, gathered once by observeConditionFacts.
type conditionFacts struct {
	out     outcome
	suspend bool
	// running is the number of active models (whose servers should be up),
	// ready those of them whose server answered, queued the models neither
	// active nor done.
	running, ready, queued int
	// notReady are the active models whose server has not answered yet.
	notReady []string
	// stalled and waiting are the first server Stalled and the first
	// waiting for capacity, or nil.
	stalled, waiting *serverView
	// activeJobs counts the runner Jobs running (activeJobs).
	activeJobs int
	// stallReason and stallMessage: why the evaluation cannot progress
	// (a child's name taken, the problem set unavailable, a stalled
	// server, a runner's cause), "" when nothing stops it.
	stallReason, stallMessage string
	// recorded: the ledgers hold at least one run.
	recorded bool
}

// conditionValue is a condition's status, reason and message.
type conditionValue struct {
	Status          bool
	Reason, Message string
}

// inProgress is the message of Complete, Failed, Ready and Reconciling
// while the evaluation runs.
const inProgress = "runs are still missing from the ledgers"

func observeConditionFacts(e *repotv1.RepotEvaluation, w *World, out outcome, views []serverView, models []modelState, runners []runnerDiagnosis) *conditionFacts {
	f := &conditionFacts{out: out, suspend: e.Spec.IsSuspended(), activeJobs: activeJobs(e, w), recorded: len(w.Records) > 0}
	// The servers that should be up are those of the active models.
	for i := range models {
		switch {
		case models[i].Active:
			f.running++
			if views[i].Ready {
				f.ready++
			}
		case !models[i].Done:
			f.queued++
		}
	}
	f.notReady = notReady(views, models)
	for i := range views {
		if views[i].State == repotv1.ServerStalled && f.stalled == nil {
			f.stalled = &views[i]
		}
		if views[i].Reason == repotv1.ReasonWaitingForCapacity && f.waiting == nil {
			f.waiting = &views[i]
		}
	}
	switch {
	case len(w.NameTaken) > 0:
		f.stallReason, f.stallMessage = repotv1.ReasonChildNameTaken, nameTakenMessage(w.NameTaken)
	case w.Problems.Unavailable != "":
		f.stallReason, f.stallMessage = repotv1.ReasonProblemsUnavailable, w.Problems.Unavailable
	case f.stalled != nil:
		f.stallReason, f.stallMessage = repotv1.ReasonServerStalled, f.stalled.Message
	default:
		for _, d := range runners {
			if d.Cause != "" {
				f.stallReason, f.stallMessage = d.Cause, d.Message
				break
			}
		}
	}
	return f
}

// serversReadyCondition: every active model's server answered a completion.
func serversReadyCondition(f *conditionFacts) conditionValue {
	switch {
	case f.out.Phase != phaseActive || f.suspend:
		return conditionValue{false, repotv1.ReasonServersStopped, "the model servers are stopped"}
	case f.running == 0 && f.queued > 0:
		return conditionValue{false, repotv1.ReasonModelsQueued, fmt.Sprintf("%d model(s) wait in Queued for a slot of spec.maxParallelModels or for admission", f.queued)}
	case f.running == 0:
		return conditionValue{false, repotv1.ReasonServersStopped, "every model's runs are recorded and its server deleted"}
	case f.ready == f.running:
		return conditionValue{true, repotv1.ReasonServersAnswered, fmt.Sprintf("all %d running model(s) answered a completion", f.running)}
	case f.stalled != nil:
		return conditionValue{false, f.stalled.Reason, f.stalled.Message}
	case f.waiting != nil:
		return conditionValue{false, f.waiting.Reason, f.waiting.Message}
	}
	return conditionValue{false, repotv1.ReasonServersStarting, fmt.Sprintf("%d of %d model(s) answered a completion; waiting for %s", f.ready, f.running, strings.Join(f.notReady, ", "))}
}

// runningCondition: runner Jobs are running.
func runningCondition(f *conditionFacts) conditionValue {
	switch {
	case f.out.Phase != phaseActive:
		return conditionValue{false, repotv1.ReasonRunnersFinished, "the evaluation ended"}
	case f.suspend:
		return conditionValue{false, repotv1.ReasonSuspended, "spec.suspend is true: runners are suspended and servers scaled to zero; resuming continues from the ledgers"}
	case f.activeJobs > 0:
		return conditionValue{true, repotv1.ReasonRunnersActive, fmt.Sprintf("%d of %d runner Job(s) running", f.activeJobs, f.running)}
	}
	return conditionValue{false, repotv1.ReasonWaitingForServers, "runner Jobs start once their model's server is ready"}
}

// completeCondition: every run is recorded.
func completeCondition(f *conditionFacts) conditionValue {
	switch f.out.Phase {
	case phaseComplete:
		return conditionValue{true, f.out.Reason, f.out.Message}
	case phaseFailed:
		return conditionValue{false, repotv1.ReasonFailed, f.out.Message}
	}
	return conditionValue{false, repotv1.ReasonInProgress, inProgress}
}

// failedCondition: the evaluation failed.
func failedCondition(f *conditionFacts) conditionValue {
	switch f.out.Phase {
	case phaseComplete:
		return conditionValue{false, repotv1.ReasonAllRunsRecorded, "the evaluation completed"}
	case phaseFailed:
		return conditionValue{true, f.out.Reason, f.out.Message}
	}
	return conditionValue{false, repotv1.ReasonInProgress, inProgress}
}

// readyCondition (kstatus): the evaluation completed; the same value as
// Complete.
func readyCondition(f *conditionFacts) conditionValue { return completeCondition(f) }

// reconcilingCondition (kstatus): the evaluation makes progress; waiting
// for capacity counts as progress, for GitOps tools read it so.
func reconcilingCondition(f *conditionFacts) conditionValue {
	switch {
	case f.out.Phase == phaseComplete:
		return conditionValue{false, repotv1.ReasonReconciled, "nothing left to do"}
	case f.out.Phase == phaseFailed:
		return conditionValue{false, repotv1.ReasonReconciled, "the evaluation failed"}
	case f.suspend:
		return conditionValue{false, repotv1.ReasonSuspended, "spec.suspend is true"}
	case f.stallReason != "":
		return conditionValue{false, f.stallReason, f.stallMessage}
	case f.waiting != nil:
		return conditionValue{true, repotv1.ReasonWaitingForCapacity, f.waiting.Message}
	}
	return conditionValue{true, repotv1.ReasonInProgress, inProgress}
}

// stalledCondition (kstatus): the evaluation cannot progress without help.
func stalledCondition(f *conditionFacts) conditionValue {
	switch {
	case f.out.Phase == phaseComplete:
		return conditionValue{false, repotv1.ReasonReconciled, "nothing left to do"}
	case f.out.Phase == phaseFailed:
		return conditionValue{true, repotv1.ReasonFailed, f.out.Message}
	case f.suspend:
		return conditionValue{false, repotv1.ReasonSuspended, "spec.suspend is true"}
	case f.stallReason != "":
		return conditionValue{true, f.stallReason, f.stallMessage}
	case f.waiting != nil:
		return conditionValue{false, repotv1.ReasonWaitingForCapacity, "waiting for capacity is not stalled until spec.stalledAfterSeconds passed"}
	}
	return conditionValue{false, repotv1.ReasonInProgress, "no known obstacle"}
}

// evaluationState is the one-word state of the summary. From its first
// recorded run until its last, an evaluation reads Running: a sweep between
// one model's server and the next one's has no runner active, yet it is not
// back to Pending (the per-model phases say which model waits for what).
func evaluationState(f *conditionFacts) repotv1.EvaluationState {
	switch {
	case f.out.Phase == phaseComplete:
		return repotv1.StateComplete
	case f.out.Phase == phaseFailed:
		return repotv1.StateFailed
	case f.suspend:
		return repotv1.StateSuspended
	case f.stallReason != "":
		return repotv1.StateStalled
	case f.activeJobs > 0 || f.recorded:
		return repotv1.StateRunning
	}
	return repotv1.StatePending
}
