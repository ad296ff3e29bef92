package schedule

import (
	"fmt"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	repotv1 "repot.dev/repot-operator/api/v1alpha1"
)

// scheduleConditions derives Ready, Regressed and the kstatus conditions
// Reconciling and Stalled. A condition whose status did not change keeps its
// lastTransitionTime.
func scheduleConditions(s *repotv1.RepotSchedule, st repotv1.RepotScheduleStatus, schedErr error, now time.Time) []metav1.Condition {
	var out []metav1.Condition
	set := func(typ string, status bool, reason, msg string) {
		c := metav1.Condition{Type: typ, Status: metav1.ConditionFalse, Reason: reason, Message: msg,
			ObservedGeneration: s.Generation, LastTransitionTime: metav1.NewTime(now)}
		if status {
			c.Status = metav1.ConditionTrue
		}
		for _, old := range s.Status.Conditions {
			if old.Type == typ && old.Status == c.Status {
				c.LastTransitionTime = old.LastTransitionTime
			}
		}
		out = append(out, c)
	}
	suspended := s.Spec.Suspend != nil && *s.Spec.Suspend
	switch {
	case schedErr != nil:
		msg := schedErr.Error() + "; no run is created until it is fixed"
		set(repotv1.ConditionReady, false, repotv1.ReasonInvalidSchedule, msg)
		set(repotv1.ConditionReconciling, false, repotv1.ReasonInvalidSchedule, msg)
		set(repotv1.ConditionStalled, true, repotv1.ReasonInvalidSchedule, msg)
	case suspended:
		set(repotv1.ConditionReady, true, repotv1.ReasonSuspended, "spec.suspend is true: no new run starts; active runs go on")
		set(repotv1.ConditionReconciling, false, repotv1.ReasonSuspended, "spec.suspend is true")
		set(repotv1.ConditionStalled, false, repotv1.ReasonSuspended, "spec.suspend is true")
	default:
		msg := "runs are created on schedule"
		if st.NextScheduleTime != nil {
			msg = fmt.Sprintf("next run at %s", st.NextScheduleTime.UTC().Format(time.RFC3339))
		}
		set(repotv1.ConditionReady, true, repotv1.ReasonScheduled, msg)
		set(repotv1.ConditionReconciling, false, repotv1.ReasonScheduled, msg)
		set(repotv1.ConditionStalled, false, repotv1.ReasonScheduled, msg)
	}
	// Regressed follows the newest successful run that was compared.
	for _, h := range st.History {
		if h.Result != repotv1.RunComplete || h.ComparedWith == "" {
			continue
		}
		if h.Regressed {
			set(repotv1.ConditionRegressed, true, repotv1.ReasonSignificantDrop, regressionMessage(h))
		} else {
			set(repotv1.ConditionRegressed, false, repotv1.ReasonNoSignificantDrop, fmt.Sprintf(
				"run %s is not significantly worse than run %s for any model and method (McNemar, p < %s)", h.Name, h.ComparedWith, regressionPValue(s)))
		}
		return out
	}
	set(repotv1.ConditionRegressed, false, repotv1.ReasonNoBaseline, "no finished run has been compared with an earlier successful run yet")
	return out
}
