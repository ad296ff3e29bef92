package planning

import (
	"fmt"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	repotv1 "repot.dev/repot-operator/api/v1alpha1"
	"repot.dev/repot-operator/controllers/build"
)

// phase is where an evaluation is in its life.
type phase int

const (
	phaseActive phase = iota
	phaseComplete
	phaseFailed
)

// outcome is the evaluation's phase with, once it ended, why and when.
type outcome struct {
	Phase   phase
	Reason  string
	Message string
	// CompletionTime is when it ended; set for the two final phases.
	CompletionTime *metav1.Time
	// DeadlineIn is the time left before activeDeadlineSeconds passes, 0
	// when there is no deadline or the evaluation ended.
	DeadlineIn time.Duration
}

// hasStarted says whether the evaluation started: its status records a start
// time, or one of its servers or runner Jobs exists. The shell writes the
// start time before it creates the first server or runner Job (the spec
// freezes with the first child that costs something: hasCostlyChildren);
// the second covers evaluations whose first children an operator of an
// earlier version created before the start time.
func hasStarted(e *repotv1.RepotEvaluation, w *World) bool {
	return e.Status.StartTime != nil || hasCostlyChildren(w)
}

// hasCostlyChildren says whether a server Deployment or a runner Job of the
// evaluation exists: the children that hold GPUs or run, whose first
// creation is the evaluation's start (status.startTime). The runner's
// ServiceAccount, Role, RoleBinding and NetworkPolicies, the ledgers and the
// Kueue Workloads cost nothing and do not start it.
func hasCostlyChildren(w *World) bool {
	return len(w.Deployments) > 0 || len(w.Jobs) > 0
}

// hasRun says whether anything of the evaluation ran: one of its servers or
// runner Jobs exists, its ledgers hold a record, or its status recorded a
// server, runs or the end. An evaluation whose start time was written just
// before its first children, which the API server then rejected, has not
// run: its start can be undone and its spec edited. (The runner's identity
// and ledgers do not count.)
func hasRun(e *repotv1.RepotEvaluation, w *World) bool {
	if len(w.Deployments) > 0 || len(w.Jobs) > 0 || len(w.Records) > 0 || e.Status.CompletionTime != nil {
		return true
	}
	for i := range e.Status.Models {
		m := &e.Status.Models[i]
		if m.ServerCreatedTime != nil || m.RunningTime != nil || m.CompletionTime != nil || m.RunsDone > 0 {
			return true
		}
	}
	return false
}

// decideOutcome says whether the evaluation has ended. An ended evaluation
// stays ended (completionTime is set once); otherwise the active deadline is
// checked first, then failed and completed runner Jobs. A model whose Job
// is gone counts as complete when it is Done (modelDone): its ledgers hold
// its runs, or the status recorded it Done before the Job was deleted.
func decideOutcome(e *repotv1.RepotEvaluation, w *World) outcome {
	now := metav1.NewTime(w.Now)
	if ct := e.Status.CompletionTime; ct != nil {
		if c := findCondition(e.Status.Conditions, repotv1.ConditionFailed); c != nil && c.Status == metav1.ConditionTrue {
			return outcome{Phase: phaseFailed, Reason: c.Reason, Message: c.Message, CompletionTime: ct}
		}
		return outcome{Phase: phaseComplete, Reason: repotv1.ReasonAllRunsRecorded, Message: completeMessage(e), CompletionTime: ct}
	}
	if o, changed := problemsChanged(e, w, now); changed {
		return o
	}
	var deadlineIn time.Duration
	res := w.results(e)
	if d := e.Spec.ActiveDeadlineSeconds; d != nil && e.Status.StartTime != nil && !deadlinePaused(e, w, res) {
		limit := time.Duration(*d) * time.Second
		// Counted from the end of the last pause (deadlineStart); an
		// evaluation whose status has no deadlineStartTime yet (its pause
		// ends in this pass) has run for no time.
		var ran time.Duration
		if t := e.Status.DeadlineStartTime; t != nil {
			ran = w.Now.Sub(t.Time)
		}
		if ran >= limit {
			return outcome{Phase: phaseFailed, Reason: repotv1.ReasonDeadlineExceeded, CompletionTime: &now, Message: fmt.Sprintf(
				"the evaluation ran for %s, past spec.activeDeadlineSeconds (%ds); runners were stopped and servers deleted, the ledgers keep the finished runs",
				ran.Round(time.Second), *d)}
		}
		deadlineIn = limit - ran
	}
	complete := len(e.Spec.Models) > 0
	for i := range e.Spec.Models {
		m := &e.Spec.Models[i]
		j := w.job(build.RunnerJobName(e.Name, m.Name))
		if j == nil || j.DeletionTimestamp != nil {
			// Gone, or going: a cleanup outside the operator (a
			// ttlSecondsAfterFinished a policy added, a CronJob) may delete
			// a finished Job. A model whose runs its ledgers hold, or that
			// the status recorded Done, is over all the same; any other is
			// not started yet or waits for its Job to be created anew (an
			// infrastructure retry deletes it).
			if !modelDone(e, w, m, res, modelRunsTotal(e, w, m.Name)) {
				complete = false
			}
			if j == nil {
				continue
			}
		}
		if c := jobCondition(j, batchv1.JobFailed); c != nil {
			return outcome{Phase: phaseFailed, Reason: repotv1.ReasonBackoffLimitExceeded, CompletionTime: &now, Message: fmt.Sprintf(
				"runner Job %s of model %s failed (%s: %s); the ledgers keep the finished runs",
				j.Name, m.Name, c.Reason, c.Message)}
		}
		if j.DeletionTimestamp == nil && !jobSettled(e, w, m, res) {
			complete = false // running, or to run again for its infrastructure errors
		}
	}
	if complete {
		return outcome{Phase: phaseComplete, Reason: repotv1.ReasonAllRunsRecorded, Message: completeMessage(e), CompletionTime: &now}
	}
	return outcome{Phase: phaseActive, DeadlineIn: deadlineIn}
}

// deadlinePaused says whether spec.activeDeadlineSeconds stops counting
// now, as a batch/v1 Job's deadline does while it is suspended: the
// evaluation is suspended, or it is queued and its admission system
// (Kueue) admits none of its unfinished models (it waits in the queue, for
// its first admission or after an eviction or a preemption). A model the
// operator released for a stall is not waiting for Kueue (its Workload was
// withdrawn, and nothing resubmits it until a person acts): the deadline
// goes on counting for it, as it does without a queue.
func deadlinePaused(e *repotv1.RepotEvaluation, w *World, res EvaluationResults) bool {
	if e.Spec.IsSuspended() {
		return true
	}
	if w.Admitted == nil {
		return false
	}
	waiting := false
	for i := range e.Spec.Models {
		m := &e.Spec.Models[i]
		if modelDone(e, w, m, res, modelRunsTotal(e, w, m.Name)) {
			continue
		}
		if w.admitted(m.Name) || modelReleased(e, w, m.Name) {
			return false
		}
		waiting = true
	}
	// Every model done (the evaluation is winding down to Complete): none
	// waits in the queue.
	return waiting
}

// deadlineStart is status.deadlineStartTime for an evaluation as observed
// (out, res) whose new status records start: unset before the start and
// while paused (deadlinePaused), kept once ended and while it counts, the
// start itself in the pass that starts the evaluation, and now in the pass
// a pause ends (and for an evaluation an earlier operator started, whose
// status has no deadlineStartTime: its deadline counts from the upgrade).
func deadlineStart(e *repotv1.RepotEvaluation, w *World, out outcome, res EvaluationResults, start *metav1.Time) *metav1.Time {
	switch {
	case start == nil:
		return nil
	case out.Phase != phaseActive:
		return e.Status.DeadlineStartTime
	case deadlinePaused(e, w, res):
		return nil
	case e.Status.DeadlineStartTime != nil:
		return e.Status.DeadlineStartTime
	case e.Status.StartTime == nil:
		return start
	}
	now := metav1.NewTime(w.Now)
	return &now
}

func completeMessage(e *repotv1.RepotEvaluation) string {
	return fmt.Sprintf("every runner Job of the %d model(s) completed; servers were deleted, the ledgers and traces stay", len(e.Spec.Models))
}

// ttlExpiry says, for an ended evaluation with spec.ttlSecondsAfterFinished,
// whether it is due for deletion and otherwise how long until it is.
func ttlExpiry(e *repotv1.RepotEvaluation, o outcome, now time.Time) (due bool, after time.Duration) {
	if o.Phase == phaseActive || o.CompletionTime == nil || e.Spec.TTLSecondsAfterFinished == nil {
		return false, 0
	}
	at := o.CompletionTime.Add(time.Duration(*e.Spec.TTLSecondsAfterFinished) * time.Second)
	if !now.Before(at) {
		return true, 0
	}
	return false, at.Sub(now)
}
