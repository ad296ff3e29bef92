package schedule

import (
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	repotv1 "repot.dev/repot-operator/api/v1alpha1"
)

// planCase builds a schedule created at t0 ("*/5") with runs at the given
// minutes after t0 and results, and plans at minute now.
type planCase struct {
	name     string
	policy   repotv1.ConcurrencyPolicy
	mutate   func(*repotv1.RepotSchedule)
	runs     map[int]repotv1.RunResult // minute -> result
	recorded []int                     // minutes already in the status history
	deleting []int                     // minutes of runs with a deletionTimestamp
	last     int                       // lastScheduleTime minute (0: unset)
	now      int

	wantCreate string   // run name suffix minute, "" for none
	wantDelete []string // names
	wantMissed int32
}

func TestPlanSchedule(t *testing.T) {
	t0 := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	n := func(minute int) string { return runName("s", t0.Add(time.Duration(minute)*time.Minute)) }
	cases := []planCase{
		{name: "first window", now: 5, wantCreate: n(5)},
		{name: "between windows nothing happens", last: 5, runs: map[int]repotv1.RunResult{5: repotv1.RunActive}, now: 7},
		{name: "Forbid skips while one is active", policy: repotv1.ConcurrencyForbid, last: 5, runs: map[int]repotv1.RunResult{5: repotv1.RunActive}, now: 10, wantMissed: 1},
		{name: "Forbid runs once the active one finished", policy: repotv1.ConcurrencyForbid, last: 5, runs: map[int]repotv1.RunResult{5: repotv1.RunComplete}, now: 10, wantCreate: n(10)},
		{name: "Forbid runs once the active one was stopped by its budget", policy: repotv1.ConcurrencyForbid, last: 5, runs: map[int]repotv1.RunResult{5: repotv1.RunBudgetExhausted}, now: 10, wantCreate: n(10)},
		{name: "Forbid runs once the active one is being deleted", policy: repotv1.ConcurrencyForbid, last: 5, runs: map[int]repotv1.RunResult{5: repotv1.RunActive}, deleting: []int{5}, now: 10, wantCreate: n(10)},
		{name: "Replace does not delete a run being deleted again", policy: repotv1.ConcurrencyReplace, last: 5, runs: map[int]repotv1.RunResult{5: repotv1.RunActive}, deleting: []int{5}, now: 10, wantCreate: n(10)},
		{name: "Replace deletes the active run", policy: repotv1.ConcurrencyReplace, last: 5, runs: map[int]repotv1.RunResult{5: repotv1.RunActive}, now: 10, wantCreate: n(10), wantDelete: []string{n(5)}},
		{name: "Allow overlaps", policy: repotv1.ConcurrencyAllow, last: 5, runs: map[int]repotv1.RunResult{5: repotv1.RunActive}, now: 10, wantCreate: n(10)},
		{name: "after an outage only the most recent runs", policy: repotv1.ConcurrencyAllow, last: 5, now: 21, wantCreate: n(20), wantMissed: 2},
		{name: "past the starting deadline nothing runs", policy: repotv1.ConcurrencyAllow, last: 5, now: 22, wantMissed: 3,
			mutate: func(s *repotv1.RepotSchedule) { s.Spec.StartingDeadlineSeconds = ptr.To[int64](60) }},
		{name: "suspended starts nothing", now: 5, mutate: func(s *repotv1.RepotSchedule) { s.Spec.Suspend = ptr.To(true) }},
		{name: "an existing run of the window is not created again", last: 0, runs: map[int]repotv1.RunResult{5: repotv1.RunActive}, now: 6},
		{name: "history limits delete the oldest recorded runs", policy: repotv1.ConcurrencyAllow, last: 20, now: 21,
			runs:     map[int]repotv1.RunResult{5: repotv1.RunComplete, 10: repotv1.RunFailed, 15: repotv1.RunFailed, 20: repotv1.RunComplete},
			recorded: []int{5, 10, 15, 20},
			mutate: func(s *repotv1.RepotSchedule) {
				s.Spec.SuccessfulHistoryLimit, s.Spec.FailedHistoryLimit = ptr.To[int32](1), ptr.To[int32](0)
			},
			wantDelete: []string{n(5), n(10), n(15)}},
		{name: "unrecorded finished runs are not pruned yet", last: 20, now: 21,
			runs:   map[int]repotv1.RunResult{5: repotv1.RunComplete, 20: repotv1.RunComplete},
			mutate: func(s *repotv1.RepotSchedule) { s.Spec.SuccessfulHistoryLimit = ptr.To[int32](1) }},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := &repotv1.RepotSchedule{
				ObjectMeta: metav1.ObjectMeta{Name: "s", Namespace: "ns", CreationTimestamp: metav1.NewTime(t0), UID: "u"},
				Spec:       repotv1.RepotScheduleSpec{Schedule: "*/5 * * * *", ConcurrencyPolicy: tc.policy},
			}
			if tc.mutate != nil {
				tc.mutate(s)
			}
			if tc.last > 0 {
				s.Status.LastScheduleTime = ptr.To(metav1.NewTime(t0.Add(time.Duration(tc.last) * time.Minute)))
			}
			var evals []repotv1.RepotEvaluation
			for minute, res := range tc.runs {
				at := t0.Add(time.Duration(minute) * time.Minute)
				e := *newRun(s, runName("s", at), at)
				switch res {
				case repotv1.RunComplete:
					e.Status.Conditions = []metav1.Condition{{Type: repotv1.ConditionComplete, Status: metav1.ConditionTrue}}
				case repotv1.RunFailed:
					e.Status.Conditions = []metav1.Condition{{Type: repotv1.ConditionFailed, Status: metav1.ConditionTrue}}
				case repotv1.RunBudgetExhausted:
					e.Status.Conditions = []metav1.Condition{{Type: repotv1.ConditionStalled, Status: metav1.ConditionTrue, Reason: repotv1.ReasonBudgetExhausted}}
					e.Status.Summary = &repotv1.Summary{State: repotv1.StateBudgetExhausted}
				}
				if slices.Contains(tc.deleting, minute) {
					e.DeletionTimestamp = ptr.To(metav1.NewTime(at.Add(time.Minute)))
				}
				evals = append(evals, e)
			}
			for _, minute := range tc.recorded {
				s.Status.History = append(s.Status.History, repotv1.ScheduledRun{Name: n(minute), Result: tc.runs[minute],
					ScheduledTime: metav1.NewTime(t0.Add(time.Duration(minute) * time.Minute))})
			}
			p := planSchedule(s, observeRuns(evals), nil, t0.Add(time.Duration(tc.now)*time.Minute))
			gotCreate := ""
			if p.Create != nil {
				gotCreate = p.Create.Name
			}
			var gotDelete []string
			for _, e := range p.Delete {
				gotDelete = append(gotDelete, e.Name)
			}
			got := []any{gotCreate, gotDelete, p.Status.MissedRuns}
			want := []any{tc.wantCreate, tc.wantDelete, tc.wantMissed}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("create, delete, missed (-want +got):\n%s", diff)
			}
		})
	}
}

func TestPBelow(t *testing.T) {
	cases := []struct {
		p, alpha string
		want     bool
	}{
		{"0.0313", "0.05", true}, {"0.0500", "0.05", false}, {"0.0499", "0.05", true},
		{"<0.0001", "0.05", true}, {"<0.0001", "0.0001", true}, {"1.0000", "0.5", false}, {"", "0.05", false},
	}
	for _, tc := range cases {
		if got := pBelow(tc.p, tc.alpha); got != tc.want {
			t.Errorf("pBelow(%q, %q) = %v, want %v", tc.p, tc.alpha, got, tc.want)
		}
	}
}

// A run its budget stopped is recorded as BudgetExhausted; resumed (its
// budget raised), it is active again and holds a Forbid schedule back, and
// it is recorded anew when it completes.
func TestResumedBudgetExhaustedRun(t *testing.T) {
	t0 := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	s := &repotv1.RepotSchedule{
		ObjectMeta: metav1.ObjectMeta{Name: "s", Namespace: "ns", CreationTimestamp: metav1.NewTime(t0), UID: "u"},
		Spec:       repotv1.RepotScheduleSpec{Schedule: "*/5 * * * *", ConcurrencyPolicy: repotv1.ConcurrencyForbid},
	}
	at := t0.Add(5 * time.Minute)
	s.Status.LastScheduleTime = ptr.To(metav1.NewTime(at))
	e := *newRun(s, runName("s", at), at)
	e.Status.Summary = &repotv1.Summary{State: repotv1.StateBudgetExhausted}
	e.Status.Conditions = []metav1.Condition{{Type: repotv1.ConditionStalled, Status: metav1.ConditionTrue, Reason: repotv1.ReasonBudgetExhausted, LastTransitionTime: metav1.NewTime(at.Add(time.Minute))}}
	p := planSchedule(s, observeRuns([]repotv1.RepotEvaluation{e}), nil, at.Add(2*time.Minute))
	if len(p.Status.History) != 1 || p.Status.History[0].Result != repotv1.RunBudgetExhausted || p.Status.ActiveCount != 0 {
		t.Fatalf("history %+v, active %d: want the run recorded BudgetExhausted and none active", p.Status.History, p.Status.ActiveCount)
	}
	s.Status = p.Status

	// Resumed: Running again.
	e.Status.Summary.State, e.Status.Conditions = repotv1.StateRunning, nil
	p = planSchedule(s, observeRuns([]repotv1.RepotEvaluation{e}), nil, t0.Add(10*time.Minute))
	if len(p.Status.History) != 0 || p.Status.ActiveCount != 1 || p.Create != nil {
		t.Fatalf("history %+v, active %d, create %v: want the entry gone, the run active, and Forbid holding the next run back", p.Status.History, p.Status.ActiveCount, p.Create)
	}
	s.Status = p.Status

	// Completed: recorded as Complete.
	e.Status.Summary.State = repotv1.StateComplete
	e.Status.Conditions = []metav1.Condition{{Type: repotv1.ConditionComplete, Status: metav1.ConditionTrue}}
	p = planSchedule(s, observeRuns([]repotv1.RepotEvaluation{e}), nil, t0.Add(11*time.Minute))
	if len(p.Status.History) != 1 || p.Status.History[0].Result != repotv1.RunComplete {
		t.Errorf("history %+v: want the run recorded Complete", p.Status.History)
	}
}
