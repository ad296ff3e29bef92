package planning

import (
	"strings"

	"repot.dev/repot-operator/analysis/summary"
	repotv1 "repot.dev/repot-operator/api/v1alpha1"
	"repot.dev/repot-operator/contract"
)

// EvaluationResults are the figures of the records, ready for the status.
type EvaluationResults struct {
	// RunsDone counts distinct finished runs per model; InfraErrors the
	// distinct runs whose last record is an infrastructure error (not
	// finished: the runner's --resume runs them again).
	RunsDone, InfraErrors map[string]int
	// Models maps a model name to its summary (absent: no records).
	Models map[string]*summary.ModelSummary
	// Scaling is the capability-scaling sweep; nil unless two or more models
	// have records.
	Scaling *summary.ScalingReport
	// Derail maps a model name to its Derail-550 figures (derail-550 only).
	Derail map[string]*summary.DerailModelSummary
	// Spend maps a model name to the completion tokens and calls of its
	// distinct runs and of its aborted attempts (spendOf; GPU-seconds are
	// not in the records: 0).
	Spend map[string]Spend
}

// ComputeResults aggregates the records of the evaluation's own models and
// methods (a stray record of another model or method does not count), with
// duplicate keys counted once.
func ComputeResults(e *repotv1.RepotEvaluation, records []contract.Record) EvaluationResults {
	kept := CountedRecords(e, records)
	distinct, _ := summary.Dedupe(kept)
	res := EvaluationResults{RunsDone: map[string]int{}, InfraErrors: map[string]int{}, Models: map[string]*summary.ModelSummary{}}
	for _, r := range distinct {
		if r.InfraError != "" {
			res.InfraErrors[r.Model]++
			continue
		}
		res.RunsDone[r.Model]++
	}
	res.Spend = spendOf(kept)
	agg := summary.Aggregate(kept)
	for i := range agg.Models {
		res.Models[agg.Models[i].Model] = &agg.Models[i]
	}
	res.Derail = derailSummaries(e, agg.Derail)
	if len(agg.Models) >= 2 {
		s := summary.Scaling(kept)
		res.Scaling = &s
	}
	return res
}

// CountedRecords are the records of the evaluation that its status counts:
// those of its own models and methods and, for derail-550, of its checkpoint
// statement and the Derail schema (a stray record counts nowhere). Duplicate
// keys are kept: summary.Dedupe picks the one that counts. The status
// (ComputeResults) and the readers of results (repot results export, report)
// both select through it, so the two never disagree.
func CountedRecords(e *repotv1.RepotEvaluation, records []contract.Record) []contract.Record {
	models := map[string]bool{}
	for i := range e.Spec.Models {
		models[e.Spec.Models[i].Name] = true
	}
	methods := map[string]bool{}
	for _, m := range e.Spec.MethodsOrDefault() {
		methods[string(m)] = true
	}
	kept := make([]contract.Record, 0, len(records))
	for _, r := range records {
		if models[r.Model] && methods[r.Method] && derailFits(e, r) {
			kept = append(kept, r)
		}
	}
	return kept
}

// MethodResults maps a model's summary to the status, one entry per method
// of spec.methods in spec order (zeros for a method without records).
func MethodResults(e *repotv1.RepotEvaluation, ms *summary.ModelSummary) []repotv1.MethodResult {
	var out []repotv1.MethodResult
	if e.Spec.IsDerail() {
		return nil // conditions, not methods: see derailResults
	}
	for _, m := range e.Spec.MethodsOrDefault() {
		r := repotv1.MethodResult{Method: m}
		if s := methodSummary(ms, string(m)); s != nil {
			r.Solved, r.Total = int32(s.Solved), int32(s.Total)
			if s.Total > 0 {
				r.Rate, r.RatePermille, r.Interval = s.Percent, int32(s.Permille), s.Interval
				r.CallsPerProblem = s.CallsPerProblem
			}
			r.Calls = s.Calls
			r.PromptTokens, r.CompletionTokens = s.Tokens.Prompt, s.Tokens.Completion
			r.CachedTokens, r.ReasoningTokens = s.Tokens.Cached, s.Tokens.Reasoning
			if s.CostVsPotProblems > 0 {
				v := int32(s.CostVsPotPermille)
				r.CostVsPotPermille, r.CostVsPot = &v, s.CostVsPot
			}
			for _, rc := range s.Routes {
				r.Routes = append(r.Routes, repotv1.RouteCount{Name: rc.Route, Count: int32(rc.Count), Solved: int32(rc.Solved)})
			}
			r.InfraErrors, r.InfraRetries = int32(s.InfraErrors), s.InfraRetries
			r.RepairDynamics = repairDynamics(s)
		}
		out = append(out, r)
	}
	return out
}

// Bounds of RepairDynamics' lists (the CRD's MaxItems).
const (
	maxRepairRounds = 9 // round 0 and up to 8 repairs
	maxLoopStops    = 8
)

// repairDynamics is a method's rounds and loop stops in status form; nil
// unless a run of it made more than one round.
func repairDynamics(s *summary.MethodSummary) *repotv1.RepairDynamics {
	if len(s.Rounds) < 2 {
		return nil
	}
	d := &repotv1.RepairDynamics{Runs: int32(s.Rounds[0].Runs)}
	for _, rs := range s.Rounds[:min(len(s.Rounds), maxRepairRounds)] {
		rr := repotv1.RepairRound{
			Round: int32(rs.K), Entered: int32(rs.Entered), LeftSolved: int32(rs.LeftSolved),
			AlphaTrials: int32(rs.AlphaTrials), BetaTrials: int32(rs.BetaTrials),
			Shortened: int32(rs.Shortened), Tokens: rs.Tokens,
			ValidAfterPermille: int32(rs.ValidAtPermille), AcceptedAfterPermille: int32(rs.AcceptedAtPermille),
		}
		if rs.K > 0 && rs.AlphaTrials > 0 {
			v := int32(rs.AlphaPermille)
			rr.AlphaPermille = &v
		}
		if rs.BetaTrials > 0 {
			v := int32(rs.BetaPermille)
			rr.BetaPermille = &v
		}
		d.Rounds = append(d.Rounds, rr)
	}
	for _, rc := range s.LoopStops[:min(len(s.LoopStops), maxLoopStops)] {
		reason := rc.Reason
		if reason == "" {
			reason = "unknown" // a record from before loop stops were recorded
		}
		d.LoopStops = append(d.LoopStops, repotv1.LoopStopCount{Reason: reason, Count: int32(rc.Count)})
	}
	return d
}

func methodSummary(ms *summary.ModelSummary, method string) *summary.MethodSummary {
	if ms == nil {
		return nil
	}
	for i := range ms.Methods {
		if ms.Methods[i].Method == method {
			return &ms.Methods[i]
		}
	}
	return nil
}

// failedPrefix is the mean prefix fraction of a model's failed first plans:
// from repot's runs (whose first call is the pot call, as in the scaling
// sweep), else pot's, else the first method that has failed first plans.
func failedPrefix(e *repotv1.RepotEvaluation, ms *summary.ModelSummary) *int32 {
	order := []string{contract.MethodRePoT, contract.MethodPoT}
	for _, m := range e.Spec.MethodsOrDefault() {
		order = append(order, string(m))
	}
	for _, m := range order {
		if s := methodSummary(ms, m); s != nil && s.FailedFirstPlans > 0 {
			v := int32(s.FailedPrefixPermille)
			return &v
		}
	}
	return nil
}

// repotMinusPotRetry is repot's paired gain over pot-retry in points, "" when
// the two were not both run.
func repotMinusPotRetry(ms *summary.ModelSummary) string {
	if ms == nil {
		return ""
	}
	for _, c := range ms.Comparisons {
		if c.Method == contract.MethodRePoT && c.Baseline == contract.MethodPoTRetry && c.Problems > 0 {
			return c.DiffPoints
		}
	}
	return ""
}

// scalingStatus maps the scaling sweep to the status.
func scalingStatus(s *summary.ScalingReport) *repotv1.ScalingStatus {
	if s == nil {
		return nil
	}
	out := &repotv1.ScalingStatus{}
	for _, c := range s.Cells {
		out.Cells = append(out.Cells, repotv1.ScalingCell{
			Model: c.Model, Environment: c.Environment,
			FailedPrefixPermille: int32(c.FailedPrefixPermille), RepotMinusPotRetryPoints: c.DeltaPoints,
		})
	}
	if len(out.Cells) > 128 {
		out.Cells = out.Cells[:128]
	}
	if s.SlopeDefined {
		out.Slope = s.Slope
	}
	return out
}

// rateColumn is a printer column: one method's rate per model in spec order,
// "-" for a model without results, "" when no model has any.
func rateColumn(e *repotv1.RepotEvaluation, res EvaluationResults, method string) string {
	var parts []string
	any := false
	for i := range e.Spec.Models {
		s := methodSummary(res.Models[e.Spec.Models[i].Name], method)
		if s == nil || s.Total == 0 {
			parts = append(parts, "-")
			continue
		}
		any = true
		parts = append(parts, s.Percent)
	}
	if !any {
		return ""
	}
	return Truncate(strings.Join(parts, " "), 256)
}
