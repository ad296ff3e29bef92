package planning

import (
	"fmt"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"repot.dev/repot-operator/analysis/summary"
	repotv1 "repot.dev/repot-operator/api/v1alpha1"
	"repot.dev/repot-operator/contract"
)

// Spend is what one model spent: the GPU-seconds its servers held and the
// completion tokens and model calls of its recorded runs (each run once).
type Spend struct {
	GPUSeconds       int64
	CompletionTokens int64
	ModelCalls       int64
}

func (s *Spend) add(o Spend) {
	s.GPUSeconds += o.GPUSeconds
	s.CompletionTokens += o.CompletionTokens
	s.ModelCalls += o.ModelCalls
}

// ModelSpend is one model's spending; GPUs are the GPUs its server holds
// now (0 when no server runs), for the time left until a GPU limit.
type ModelSpend struct {
	Name  string
	Spend Spend
	GPUs  int32
}

// BudgetDecision is the answer of OverBudget.
type BudgetDecision struct {
	// Stop is, per model in the order given, whether a limit that applies
	// to it is reached.
	Stop []bool
	// Reached names each limit reached, with what was spent.
	Reached []string
	// RecheckAfter is when the GPU-hours of the running servers reach a
	// GPU limit not reached yet (0: no such limit).
	RecheckAfter time.Duration
}

// budgetRecheckFloor bounds how often a GPU limit about to be reached is
// looked at (the GPU-seconds of a running server grow by whole minutes).
const budgetRecheckFloor = 5 * time.Second

// OverBudget decides, from a budget and what each model spent, which models
// must stop: those past one of their own limits (budget.perModel) and, once
// the sum over all models reaches a limit of the budget itself, all of them.
// A limit is reached when the spending is at least the limit. It is a pure
// function; a nil budget stops nothing.
func OverBudget(b *repotv1.BudgetSpec, models []ModelSpend) BudgetDecision {
	d := BudgetDecision{Stop: make([]bool, len(models))}
	if b == nil {
		return d
	}
	var total Spend
	var gpus int32
	for _, m := range models {
		total.add(m.Spend)
		gpus += m.GPUs
	}
	if r, left := limitsReached(&b.BudgetLimits, total, gpus); len(r) > 0 {
		for i := range d.Stop {
			d.Stop[i] = true
		}
		d.Reached = append(d.Reached, prefixed("spec.budget.", r)...)
	} else {
		d.recheckIn(left)
	}
	for i, m := range models {
		for j := range b.PerModel {
			pm := &b.PerModel[j]
			if pm.Model != m.Name {
				continue
			}
			if r, left := limitsReached(&pm.BudgetLimits, m.Spend, m.GPUs); len(r) > 0 {
				d.Stop[i] = true
				d.Reached = append(d.Reached, prefixed("spec.budget.perModel["+m.Name+"].", r)...)
			} else {
				d.recheckIn(left)
			}
		}
	}
	return d
}

func (d *BudgetDecision) recheckIn(left time.Duration) {
	if left > 0 && (d.RecheckAfter == 0 || left < d.RecheckAfter) {
		d.RecheckAfter = left
	}
}

func prefixed(p string, ss []string) []string {
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = p + s
	}
	return out
}

// limitsReached lists the limits of l the spending s reached, and, when no
// GPU limit is reached and gpus run, the time until it is.
func limitsReached(l *repotv1.BudgetLimits, s Spend, gpus int32) (reached []string, gpuLeft time.Duration) {
	if milli, ok := l.MilliGPUHours(); ok {
		// s.GPUSeconds / 3600 >= milli / 1000, in integers.
		if s.GPUSeconds*10 >= milli*36 {
			reached = append(reached, fmt.Sprintf("maxGPUHours %s reached (%d GPU-seconds held)", l.MaxGPUHours, s.GPUSeconds))
		} else if gpus > 0 {
			left := (milli*36 - s.GPUSeconds*10 + 9) / 10 // GPU-seconds, rounded up
			gpuLeft = max(time.Duration((left+int64(gpus)-1)/int64(gpus))*time.Second, budgetRecheckFloor)
		}
	}
	if l.MaxCompletionTokens != nil && s.CompletionTokens >= *l.MaxCompletionTokens {
		reached = append(reached, fmt.Sprintf("maxCompletionTokens %d reached (%d used)", *l.MaxCompletionTokens, s.CompletionTokens))
	}
	if l.MaxModelCalls != nil && s.ModelCalls >= *l.MaxModelCalls {
		reached = append(reached, fmt.Sprintf("maxModelCalls %d reached (%d made)", *l.MaxModelCalls, s.ModelCalls))
	}
	if len(reached) > 0 {
		gpuLeft = 0
	}
	return reached, gpuLeft
}

// spendOf sums the completion tokens and calls of records, per model
// (summary.Spent): each distinct run once, and on top each aborted attempt
// once, with the calls of it that returned before its runner stopped.
func spendOf(records []contract.Record) map[string]Spend {
	out := map[string]Spend{}
	for m, s := range summary.Spent(records) {
		out[m] = Spend{CompletionTokens: s.CompletionTokens, ModelCalls: s.Calls}
	}
	return out
}

// modelSpending is what each model of the evaluation spent, read at the
// start of a pass: tokens and calls from the ledgers' results, GPU-seconds
// from the server times of the last written status, counted to the
// injected clock's now while a server runs (the status's own gpuSecondsHeld
// is only as fresh as the last pass).
func modelSpending(e *repotv1.RepotEvaluation, w *World, res EvaluationResults) []ModelSpend {
	out := make([]ModelSpend, len(e.Spec.Models))
	for i := range e.Spec.Models {
		m := &e.Spec.Models[i]
		out[i] = ModelSpend{Name: m.Name, Spend: res.Spend[m.Name]}
		prev := previousModel(e, m.Name)
		if prev == nil {
			continue
		}
		t := modelTimes{ServerCreated: prev.ServerCreatedTime, ServerReady: prev.ServerReadyTime, ServerDeleted: prev.ServerDeletedTime}
		if prev.EarlierServers != nil {
			t.Earlier = *prev.EarlierServers
		}
		held, _ := gpuSeconds(t, m.ServerGPUs(), nil, m.Name, w.Now)
		out[i].Spend.GPUSeconds = held
		if t.ServerCreated != nil && t.ServerDeleted == nil && serverDeployed(e, w, m) != nil {
			out[i].GPUs = m.ServerGPUs()
		}
	}
	return out
}

// decideBudget is OverBudget of the evaluation's spending.
func decideBudget(e *repotv1.RepotEvaluation, w *World, res EvaluationResults) (BudgetDecision, []ModelSpend) {
	spend := modelSpending(e, w, res)
	return OverBudget(e.Spec.Budget, spend), spend
}

// budgetStatus is status.budget: what was spent, which models the budget
// stopped, and whether it stopped the evaluation.
// An ended evaluation reports what it spent; nothing of it is stopped.
func budgetStatus(e *repotv1.RepotEvaluation, d BudgetDecision, spend []ModelSpend, models []modelState, st *repotv1.RepotEvaluationStatus, ended bool) *repotv1.BudgetStatus {
	if e.Spec.Budget == nil {
		return nil
	}
	out := &repotv1.BudgetStatus{}
	stopped, open := 0, 0
	for i := range spend {
		ms := repotv1.ModelBudgetStatus{Name: spend[i].Name, Used: usage(spend[i].Spend)}
		if i < len(st.Models) {
			ms.Used.GPUSeconds = max(ms.Used.GPUSeconds, st.Models[i].GPUSecondsHeld)
		}
		out.Used.GPUSeconds += ms.Used.GPUSeconds
		out.Used.CompletionTokens += ms.Used.CompletionTokens
		out.Used.ModelCalls += ms.Used.ModelCalls
		if !models[i].Done && !ended {
			open++
			if models[i].OverBudget {
				ms.Stopped = true
				stopped++
				if i < len(st.Models) {
					out.RunsNotStarted += max(st.Models[i].RunsTotal-st.Models[i].RunsDone, 0)
				}
			}
		}
		out.Models = append(out.Models, ms)
	}
	out.Partial = stopped > 0
	out.Exhausted = stopped > 0 && stopped == open
	if stopped > 0 {
		out.Message = Truncate(strings.Join(d.Reached, "; "), 2048)
	}
	return out
}

func usage(s Spend) repotv1.BudgetUsage {
	return repotv1.BudgetUsage{GPUSeconds: s.GPUSeconds, CompletionTokens: s.CompletionTokens, ModelCalls: s.ModelCalls}
}

// budgetConditions rewrites the conditions and state of an evaluation the
// budget stopped (status.budget.exhausted, not suspended): nothing runs and
// nothing will until a person raises the budget, so it reads Stalled with
// reason BudgetExhausted; Complete and Failed are False (its results are
// partial, nothing failed). Conditions keep their transition times as the
// other conditions do.
func budgetConditions(st *repotv1.RepotEvaluationStatus, e *repotv1.RepotEvaluation, w *World) {
	if st.Budget == nil || !st.Budget.Exhausted || e.Spec.IsSuspended() || st.Summary == nil {
		return
	}
	msg := fmt.Sprintf("stopped by spec.budget, and resumable: %s; %d run(s) not started, the %d recorded run(s) stay in the status (partial results); raise or remove the limit in spec.budget and the evaluation resumes from its ledgers, running only the runs not recorded",
		st.Budget.Message, st.Budget.RunsNotStarted, progressDone(st))
	set := map[string]struct {
		status bool
		reason string
		msg    string
	}{
		repotv1.ConditionServersReady: {false, repotv1.ReasonServersStopped, "the budget stopped the model servers"},
		repotv1.ConditionRunning:      {false, repotv1.ReasonBudgetExhausted, msg},
		repotv1.ConditionComplete:     {false, repotv1.ReasonBudgetExhausted, msg},
		repotv1.ConditionFailed:       {false, repotv1.ReasonBudgetExhausted, msg},
		repotv1.ConditionReady:        {false, repotv1.ReasonBudgetExhausted, msg},
		repotv1.ConditionReconciling:  {false, repotv1.ReasonBudgetExhausted, msg},
		repotv1.ConditionStalled:      {true, repotv1.ReasonBudgetExhausted, msg},
	}
	cs := newConditionSet(e.Status.Conditions, e.Generation, metav1.NewTime(w.Now))
	for _, c := range st.Conditions {
		if s, ok := set[c.Type]; ok {
			cs.set(c.Type, s.status, s.reason, s.msg)
			continue
		}
		cs.out = append(cs.out, c)
	}
	st.Conditions = cs.out
	st.Summary.State = repotv1.StateBudgetExhausted
}

func progressDone(st *repotv1.RepotEvaluationStatus) int32 {
	if st.Progress == nil {
		return 0
	}
	return st.Progress.RunsDone
}
