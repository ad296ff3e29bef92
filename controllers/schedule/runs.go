package schedule

import (
	"sort"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	repotv1 "repot.dev/repot-operator/api/v1alpha1"
)

// Labels and annotations of the runs a schedule creates.
const (
	// LabelSchedule names the RepotSchedule that created a run.
	LabelSchedule = "repot.dev/schedule"
	// AnnotationScheduledAt is the run's scheduled time (RFC 3339, UTC).
	AnnotationScheduledAt = "repot.dev/scheduled-at"
)

// run is one RepotEvaluation of a schedule as the planner sees it.
type run struct {
	Eval      *repotv1.RepotEvaluation
	Scheduled time.Time
	Result    repotv1.RunResult
}

// observeRuns classifies a schedule's evaluations, oldest scheduled first. A
// run is Complete or Failed once its Complete or Failed condition is True,
// and BudgetExhausted once spec.budget stopped it (it then has no
// completion time, but nothing of it runs: it must not hold the schedule's
// concurrency policy back).
func observeRuns(evals []repotv1.RepotEvaluation) []run {
	out := make([]run, 0, len(evals))
	for i := range evals {
		e := &evals[i]
		r := run{Eval: e, Scheduled: e.CreationTimestamp.Time, Result: repotv1.RunActive}
		if at, err := time.Parse(time.RFC3339, e.Annotations[AnnotationScheduledAt]); err == nil {
			r.Scheduled = at
		}
		switch {
		case conditionTrue(e.Status.Conditions, repotv1.ConditionComplete):
			r.Result = repotv1.RunComplete
		case conditionTrue(e.Status.Conditions, repotv1.ConditionFailed):
			r.Result = repotv1.RunFailed
		case e.Status.Summary != nil && e.Status.Summary.State == repotv1.StateBudgetExhausted:
			r.Result = repotv1.RunBudgetExhausted
		}
		out = append(out, r)
	}
	sort.SliceStable(out, func(i, j int) bool {
		if !out[i].Scheduled.Equal(out[j].Scheduled) {
			return out[i].Scheduled.Before(out[j].Scheduled)
		}
		return out[i].Eval.Name < out[j].Eval.Name
	})
	return out
}

func conditionTrue(cs []metav1.Condition, t string) bool {
	for _, c := range cs {
		if c.Type == t {
			return c.Status == metav1.ConditionTrue
		}
	}
	return false
}

// completionTime is when a finished run ended (its status.completionTime, or
// the condition's transition when that is missing; for a run its budget
// stopped, when its Stalled condition turned True).
func completionTime(e *repotv1.RepotEvaluation) *metav1.Time {
	if e.Status.CompletionTime != nil {
		return e.Status.CompletionTime
	}
	for _, c := range e.Status.Conditions {
		if (c.Type == repotv1.ConditionComplete || c.Type == repotv1.ConditionFailed ||
			c.Type == repotv1.ConditionStalled && c.Reason == repotv1.ReasonBudgetExhausted) && c.Status == metav1.ConditionTrue {
			t := c.LastTransitionTime
			return &t
		}
	}
	return nil
}

// figures copies a finished run's figures from its status: per model and
// method the rate, interval and cost relative to pot.
func figures(e *repotv1.RepotEvaluation) []repotv1.ScheduledModelResult {
	var out []repotv1.ScheduledModelResult
	for _, m := range e.Status.Models {
		mr := repotv1.ScheduledModelResult{Name: m.Name}
		for _, x := range m.Methods {
			mr.Methods = append(mr.Methods, repotv1.ScheduledMethodResult{
				Method: x.Method, Rate: x.Rate, RatePermille: x.RatePermille, Interval: x.Interval, CostVsPot: x.CostVsPot,
			})
		}
		out = append(out, mr)
	}
	if len(out) > 16 {
		out = out[:16]
	}
	return out
}
