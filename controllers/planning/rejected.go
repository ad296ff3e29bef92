package planning

import (
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	repotv1 "repot.dev/repot-operator/api/v1alpha1"
)

// planRejected is the planner's decision for a pass whose children the API
// server rejected as invalid (world.Rejected): retrying the same object
// cannot succeed. The plan has no child changes. Before anything of the
// evaluation ran (hasRun), its spec can still be fixed: the status says
// Stalled with the cause, and the start time is cleared. Once it
// started, the spec cannot change: the evaluation fails with reason
// ChildRejected, and the plan asks for one more pass, which sees it ended and
// deletes its servers, releasing their GPUs (it creates nothing). The events
// are recomputed from the new conditions.
func (p *Plan) planRejected(e *repotv1.RepotEvaluation, w *World, cause error, now time.Time) {
	p.RequeueAfter, p.DeleteEvaluation = 0, false
	started := hasRun(e, w)
	cs := newConditionSet(e.Status.Conditions, e.Generation, metav1.NewTime(now))
	if !started {
		msg := "the API server rejected an object built from the spec: fix the spec and apply it again: " + cause.Error()
		for _, c := range p.Status.Conditions {
			switch c.Type {
			case repotv1.ConditionReconciling:
				cs.set(c.Type, false, repotv1.ReasonChildRejected, msg)
			case repotv1.ConditionStalled:
				cs.set(c.Type, true, repotv1.ReasonChildRejected, msg)
			default:
				cs.set(c.Type, c.Status == metav1.ConditionTrue, c.Reason, c.Message)
			}
		}
		p.undoStart()
		p.setState(repotv1.StateStalled)
	} else {
		if p.Status.StartTime == nil {
			t := metav1.NewTime(now)
			p.Status.StartTime = &t
		}
		// The same conditions as a failed evaluation (evaluationConditions).
		msg := "the API server rejected an object built from the spec, which cannot change once started; the servers are deleted, the ledgers keep the finished runs: create a new RepotEvaluation with a fixed spec: " + cause.Error()
		for _, c := range p.Status.Conditions {
			switch c.Type {
			case repotv1.ConditionRunning:
				cs.set(c.Type, false, repotv1.ReasonRunnersFinished, "the evaluation ended")
			case repotv1.ConditionComplete, repotv1.ConditionReady:
				cs.set(c.Type, false, repotv1.ReasonFailed, msg)
			case repotv1.ConditionFailed:
				cs.set(c.Type, true, repotv1.ReasonChildRejected, msg)
			case repotv1.ConditionReconciling:
				cs.set(c.Type, false, repotv1.ReasonReconciled, "the evaluation failed")
			case repotv1.ConditionStalled:
				cs.set(c.Type, true, repotv1.ReasonFailed, msg)
			default:
				cs.set(c.Type, c.Status == metav1.ConditionTrue, c.Reason, c.Message)
			}
		}
		// One more pass, soon, tears the servers down (a status write alone
		// triggers none).
		p.RequeueAfter = time.Second
		if p.Status.CompletionTime == nil {
			t := metav1.NewTime(now)
			p.Status.CompletionTime = &t
		}
		p.setState(repotv1.StateFailed)
	}
	p.Status.Conditions = cs.out
	p.Events = transitionEvents(e.Status.Conditions, p.Status.Conditions)
}

// undoStart clears the start a pass recorded for children that were not
// created (rejected, or their names taken) while nothing of the evaluation
// ran: its spec is editable again, its deadline not counting, and no
// problem set is committed (status.problemsHash is recorded at the start).
func (p *Plan) undoStart() {
	p.Status.StartTime = nil
	p.Status.DeadlineStartTime = nil
	p.Status.ProblemsHash = ""
}

func (p *Plan) setState(s repotv1.EvaluationState) {
	if p.Status.Summary != nil {
		p.Status.Summary.State = s
	}
}
