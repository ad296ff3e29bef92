package planning

import (
	"unicode/utf8"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// conditionSet builds the conditions of a new status from the previous ones,
// so that a condition whose status did not change keeps its
// lastTransitionTime: recomputing an unchanged world gives identical bytes.
type conditionSet struct {
	prev       []metav1.Condition
	out        []metav1.Condition
	generation int64
	now        metav1.Time
}

func newConditionSet(prev []metav1.Condition, generation int64, now metav1.Time) *conditionSet {
	return &conditionSet{prev: prev, generation: generation, now: now}
}

// set records a condition; the order of calls is the order in the status.
func (c *conditionSet) set(typ string, status bool, reason, message string) {
	s := metav1.ConditionFalse
	if status {
		s = metav1.ConditionTrue
	}
	cond := metav1.Condition{
		Type:               typ,
		Status:             s,
		Reason:             reason,
		Message:            Truncate(message, 32768),
		ObservedGeneration: c.generation,
		LastTransitionTime: c.now,
	}
	if old := findCondition(c.prev, typ); old != nil && old.Status == s {
		cond.LastTransitionTime = old.LastTransitionTime
	}
	c.out = append(c.out, cond)
}

func findCondition(conds []metav1.Condition, typ string) *metav1.Condition {
	for i := range conds {
		if conds[i].Type == typ {
			return &conds[i]
		}
	}
	return nil
}

func conditionTrue(conds []metav1.Condition, typ string) bool {
	c := findCondition(conds, typ)
	return c != nil && c.Status == metav1.ConditionTrue
}

// Truncate cuts s to at most n bytes, at a character boundary, ending in
// "..." when it cut.
func Truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	cut := n - 3
	// Cut at a character boundary: a split character would be stored as
	// U+FFFD, and the status would differ from the next pass's on every
	// pass.
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "..."
}
