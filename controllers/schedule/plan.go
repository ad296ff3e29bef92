package schedule

import (
	"fmt"
	"sort"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	repotv1 "repot.dev/repot-operator/api/v1alpha1"
	"repot.dev/repot-operator/controllers/schedule/cronspec"
)

// historySize is how many finished runs status.history keeps.
const historySize = 10

// requeueSlack is added to the time until the next run so that the pass
// lands after the scheduled instant, not a hair before it.
const requeueSlack = 100 * time.Millisecond

// event is a Kubernetes event to emit once the status is written.
type event struct {
	Warning bool
	Reason  string
	Message string
}

// comparison is the reconciler's comparison of a newly finished run with
// the previous successful run (read from both runs' ledgers).
type comparison struct {
	Baseline    string
	Comparisons []repotv1.RunComparison
	// Differences says in what else than time the runs differed
	// (provenanceDifferences).
	Differences []string
	// Note says why there is no comparison, e.g. the baseline's ledgers are
	// gone; empty otherwise.
	Note string
}

// plan is what one pass must do for a schedule.
type plan struct {
	// Create is the run to create, if one is due.
	Create *repotv1.RepotEvaluation
	// Delete are runs to delete: replaced active runs and runs beyond the
	// history limits.
	Delete []*repotv1.RepotEvaluation
	// Status is the new status; Events follow its write.
	Status repotv1.RepotScheduleStatus
	Events []event
	// RequeueAfter is the time until the next run is due.
	RequeueAfter time.Duration
}

// planSchedule is the controller's decision for one schedule, its runs
// (oldest first), the comparisons of newly finished successful runs and the
// time. It is a pure function.
func planSchedule(s *repotv1.RepotSchedule, runs []run, cmps map[string]comparison, now time.Time) plan {
	p := plan{Status: repotv1.RepotScheduleStatus{
		ObservedGeneration: s.Generation,
		LastScheduleTime:   s.Status.LastScheduleTime,
		LastSuccessfulTime: s.Status.LastSuccessfulTime,
		MissedRuns:         s.Status.MissedRuns,
		History:            s.Status.History,
	}}
	// 1. Record finished runs in the history, with their comparison.
	p.recordFinished(s, runs, cmps)
	// 2. Prune runs beyond the history limits (only runs the previous status
	//    already recorded, so that a lost status write loses nothing).
	deleted := p.prune(s, runs)
	// 3. Start the run that is due, if any. A run being deleted is not
	//    active: its finalizer may take long (an unreachable store, a pod on
	//    a lost node), and it must not hold a Forbid schedule back.
	var active []run
	for _, r := range runs {
		if r.Result == repotv1.RunActive && !deleted[r.Eval.Name] && r.Eval.DeletionTimestamp == nil {
			active = append(active, r)
		}
	}
	schedErr := p.scheduleNext(s, runs, &active, now)
	// 4. Active runs and conditions.
	for _, r := range active {
		p.Status.Active = append(p.Status.Active, repotv1.ScheduledRunRef{Name: r.Eval.Name, ScheduledTime: metav1.NewTime(r.Scheduled)})
	}
	if len(p.Status.Active) > 64 {
		p.Status.Active = p.Status.Active[len(p.Status.Active)-64:]
	}
	p.Status.ActiveCount = int32(len(active))
	p.Status.Conditions = scheduleConditions(s, p.Status, schedErr, now)
	return p
}

// recordFinished adds every finished run missing from the history, newest
// first, and derives lastSuccessfulTime and lastResult.
func (p *plan) recordFinished(s *repotv1.RepotSchedule, runs []run, cmps map[string]comparison) {
	// A run its budget stopped may be resumed (its budget raised): its
	// entry goes once the run reads otherwise, and it is recorded again
	// when it ends.
	now := map[string]repotv1.RunResult{}
	for _, r := range runs {
		now[r.Eval.Name] = r.Result
	}
	known := map[string]bool{}
	var hist []repotv1.ScheduledRun
	for _, h := range p.Status.History {
		if res, ok := now[h.Name]; ok && h.Result == repotv1.RunBudgetExhausted && res != repotv1.RunBudgetExhausted {
			continue
		}
		known[h.Name] = true
		hist = append(hist, h)
	}
	for _, r := range runs {
		if r.Result == repotv1.RunActive || known[r.Eval.Name] {
			continue
		}
		h := repotv1.ScheduledRun{
			Name: r.Eval.Name, ScheduledTime: metav1.NewTime(r.Scheduled), CompletionTime: completionTime(r.Eval),
			Result: r.Result, Models: figures(r.Eval),
		}
		if c, ok := cmps[r.Eval.Name]; ok && r.Result == repotv1.RunComplete {
			h.ComparedWith, h.Comparisons, h.Differences = c.Baseline, c.Comparisons, c.Differences
			for _, x := range c.Comparisons {
				h.Regressed = h.Regressed || x.SignificantDrop
			}
		}
		hist = append(hist, h)
		switch {
		case h.Regressed:
			p.Events = append(p.Events, event{Warning: true, Reason: "Regressed", Message: truncate(regressionMessage(h), maxEventNote)})
		case r.Result == repotv1.RunFailed:
			p.Events = append(p.Events, event{Warning: true, Reason: "RunFailed", Message: fmt.Sprintf("run %s failed", h.Name)})
		case r.Result == repotv1.RunBudgetExhausted:
			p.Events = append(p.Events, event{Warning: true, Reason: "RunBudgetExhausted", Message: fmt.Sprintf("run %s was stopped by its spec.budget with partial results; it is not compared", h.Name)})
		default:
			p.Events = append(p.Events, event{Reason: "RunCompleted", Message: truncate(fmt.Sprintf("run %s completed", h.Name)+differencesText(h), maxEventNote)})
		}
	}
	sort.SliceStable(hist, func(i, j int) bool { return hist[i].ScheduledTime.After(hist[j].ScheduledTime.Time) })
	if len(hist) > historySize {
		hist = hist[:historySize]
	}
	p.Status.History = hist
	for _, h := range hist {
		if h.Result == repotv1.RunComplete && h.CompletionTime != nil &&
			(p.Status.LastSuccessfulTime == nil || h.CompletionTime.After(p.Status.LastSuccessfulTime.Time)) {
			p.Status.LastSuccessfulTime = h.CompletionTime
		}
	}
	if len(hist) > 0 {
		p.Status.LastResult = hist[0].Result
	}
}

// prune deletes the oldest finished runs beyond the history limits and
// returns the names it deletes.
func (p *plan) prune(s *repotv1.RepotSchedule, runs []run) map[string]bool {
	recorded := map[string]bool{}
	for _, h := range s.Status.History {
		recorded[h.Name] = true
	}
	deleted := map[string]bool{}
	keep := func(result repotv1.RunResult, limit int32) {
		var done []run
		for _, r := range runs {
			if r.Result == result {
				done = append(done, r)
			}
		}
		for i := 0; i < len(done)-int(limit); i++ { // oldest first
			if recorded[done[i].Eval.Name] && done[i].Eval.DeletionTimestamp == nil {
				p.Delete = append(p.Delete, done[i].Eval)
				deleted[done[i].Eval.Name] = true
			}
		}
	}
	keep(repotv1.RunComplete, successfulLimit(s))
	keep(repotv1.RunFailed, failedLimit(s))
	keep(repotv1.RunBudgetExhausted, failedLimit(s))
	return deleted
}

// scheduleNext creates (or skips) the run that is due and sets the next
// schedule time; it returns the schedule's parse error, if any.
func (p *plan) scheduleNext(s *repotv1.RepotSchedule, runs []run, active *[]run, now time.Time) error {
	sched, err := cronspec.Parse(s.Spec.Schedule, ptr.Deref(s.Spec.TimeZone, ""))
	if err != nil {
		return err
	}
	if s.Spec.Suspend != nil && *s.Spec.Suspend {
		return nil
	}
	next := sched.Next(now)
	if next.IsZero() {
		return fmt.Errorf("spec.schedule %q never fires (for example day 31 of a month that has 30 days)", s.Spec.Schedule)
	}
	p.Status.NextScheduleTime = &metav1.Time{Time: next}
	p.RequeueAfter = next.Sub(now) + requeueSlack

	earliest := s.CreationTimestamp.Time
	if s.Status.LastScheduleTime != nil {
		earliest = s.Status.LastScheduleTime.Time
	}
	t, earlier := cronspec.DueTimes(sched, earliest, now)
	if t.IsZero() {
		return nil
	}
	at := metav1.NewTime(t)
	p.Status.LastScheduleTime = &at
	if earlier > 0 {
		p.Status.MissedRuns += int32(earlier)
		p.Events = append(p.Events, event{Warning: true, Reason: "MissedSchedule", Message: fmt.Sprintf(
			"%d scheduled time(s) before %s were missed (the operator was down or the schedule suspended); as with CronJob only the most recent one is considered",
			earlier, t.UTC().Format(time.RFC3339))})
	}
	if d := s.Spec.StartingDeadlineSeconds; d != nil && now.Sub(t) > time.Duration(*d)*time.Second {
		p.Status.MissedRuns++
		p.Events = append(p.Events, event{Warning: true, Reason: "MissedSchedule", Message: fmt.Sprintf(
			"the run scheduled for %s was not started: it is %s late, past startingDeadlineSeconds (%ds)",
			t.UTC().Format(time.RFC3339), now.Sub(t).Round(time.Second), *d)})
		return nil
	}
	name := runName(s.Name, t)
	for _, r := range runs {
		if r.Eval.Name == name {
			return nil // created by an earlier pass whose status write was lost
		}
	}
	switch policy(s) {
	case repotv1.ConcurrencyForbid:
		if len(*active) > 0 {
			p.Status.MissedRuns++
			p.Events = append(p.Events, event{Reason: "RunSkipped", Message: fmt.Sprintf(
				"the run scheduled for %s was skipped: run %s is still active and spec.concurrencyPolicy is Forbid",
				t.UTC().Format(time.RFC3339), (*active)[0].Eval.Name)})
			return nil
		}
	case repotv1.ConcurrencyReplace:
		for _, r := range *active {
			p.Delete = append(p.Delete, r.Eval)
			p.Events = append(p.Events, event{Reason: "RunReplaced", Message: fmt.Sprintf(
				"run %s was deleted to start %s (spec.concurrencyPolicy is Replace)", r.Eval.Name, name)})
		}
		*active = nil
	}
	p.Create = newRun(s, name, t)
	*active = append(*active, run{Eval: p.Create, Scheduled: t, Result: repotv1.RunActive})
	p.Events = append(p.Events, event{Reason: "RunCreated", Message: fmt.Sprintf("created run %s for %s", name, t.UTC().Format(time.RFC3339))})
	return nil
}

// newRun builds the RepotEvaluation of the run scheduled at t from the
// template as it is now.
func newRun(s *repotv1.RepotSchedule, name string, t time.Time) *repotv1.RepotEvaluation {
	tpl := &s.Spec.EvaluationTemplate
	e := &repotv1.RepotEvaluation{
		TypeMeta: metav1.TypeMeta{APIVersion: repotv1.GroupVersion.String(), Kind: "RepotEvaluation"},
		ObjectMeta: metav1.ObjectMeta{
			Name: name, Namespace: s.Namespace,
			Labels:          map[string]string{},
			Annotations:     map[string]string{},
			OwnerReferences: []metav1.OwnerReference{*metav1.NewControllerRef(s, repotv1.GroupVersion.WithKind("RepotSchedule"))},
		},
		Spec: *tpl.Spec.DeepCopy(),
	}
	for _, l := range tpl.Labels {
		e.Labels[l.Key] = l.Value
	}
	for _, a := range tpl.Annotations {
		e.Annotations[a.Key] = a.Value
	}
	e.Labels[LabelSchedule] = s.Name
	e.Annotations[AnnotationScheduledAt] = t.UTC().Format(time.RFC3339)
	return e
}

func policy(s *repotv1.RepotSchedule) repotv1.ConcurrencyPolicy {
	if s.Spec.ConcurrencyPolicy == "" {
		return repotv1.ConcurrencyForbid
	}
	return s.Spec.ConcurrencyPolicy
}

func successfulLimit(s *repotv1.RepotSchedule) int32 {
	if s.Spec.SuccessfulHistoryLimit == nil {
		return 3
	}
	return max(1, *s.Spec.SuccessfulHistoryLimit)
}

func failedLimit(s *repotv1.RepotSchedule) int32 {
	if s.Spec.FailedHistoryLimit == nil {
		return 1
	}
	return max(0, *s.Spec.FailedHistoryLimit)
}

func regressionPValue(s *repotv1.RepotSchedule) string {
	if s.Spec.RegressionPValue == "" {
		return DefaultRegressionPValue
	}
	return s.Spec.RegressionPValue
}
