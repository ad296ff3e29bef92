package planning

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	repotv1 "repot.dev/repot-operator/api/v1alpha1"
)

// eventConditions are the conditions whose transitions are worth an event.
var eventConditions = []struct {
	Type    string
	Warning bool
}{
	{repotv1.ConditionServersReady, false},
	{repotv1.ConditionRunning, false},
	{repotv1.ConditionComplete, false},
	{repotv1.ConditionFailed, true},
	{repotv1.ConditionStalled, true},
}

// transitionEvents are the events of a status change: one per condition
// that became True (or changed its reason while True). They are emitted only
// after the new status is written, so a failed write re-derives them on the
// next pass instead of announcing something that was never recorded.
func transitionEvents(prev, next []metav1.Condition) []Event {
	var out []Event
	for _, ec := range eventConditions {
		n := findCondition(next, ec.Type)
		if n == nil || n.Status != metav1.ConditionTrue {
			continue
		}
		if p := findCondition(prev, ec.Type); p != nil && p.Status == metav1.ConditionTrue && p.Reason == n.Reason {
			continue
		}
		out = append(out, Event{Warning: ec.Warning, Reason: n.Reason, Message: n.Message})
	}
	return out
}
