package planning

import (
	"strings"

	"repot.dev/repot-operator/analysis/summary"
	repotv1 "repot.dev/repot-operator/api/v1alpha1"
	"repot.dev/repot-operator/contract"
)

// derailShort abbreviates the conditions in the Recovery printer column.
var derailShort = map[string]string{
	contract.CondNoFeedback: "nf", contract.CondErrorOnly: "eo", contract.CondStateFeedback: "sf",
	contract.CondStateLegal: "sla", contract.CondRePoTFull: "full", contract.CondRePoTNoPrefix: "nopfx",
	contract.CondRePoTRestart: "rst", contract.CondStateGuard: "sg", contract.CondVEXFull: "vex",
	contract.CondVEXNoPrefix: "vnopfx", contract.CondVEXRestart: "vrst",
}

// derailSummaries picks, per model, the Derail figures of the evaluation's
// checkpoint statement (records of another statement do not count).
func derailSummaries(e *repotv1.RepotEvaluation, agg []summary.DerailModelSummary) map[string]*summary.DerailModelSummary {
	out := map[string]*summary.DerailModelSummary{}
	st := string(e.Spec.CheckpointStatementOrDefault())
	for i := range agg {
		if agg[i].CheckpointStatement == st {
			out[agg[i].Model] = &agg[i]
		}
	}
	return out
}

// derailFits reports whether a record belongs to the evaluation as far as
// Derail-550 goes: for suite derail-550 only records of the current
// protocol (schema 2) under the evaluation's checkpoint statement count;
// for other suites only records without Derail data.
func derailFits(e *repotv1.RepotEvaluation, r contract.Record) bool {
	if !e.Spec.IsDerail() {
		return r.Derail == nil
	}
	return r.Derail != nil && r.Derail.Schema == contract.DerailSchema && r.Derail.CheckpointStatement == string(e.Spec.CheckpointStatementOrDefault())
}

// derailResults maps a model's Derail figures to the status, one entry per
// condition of spec.derail.conditions (zeros for one without records); nil
// for other suites.
func derailResults(e *repotv1.RepotEvaluation, d *summary.DerailModelSummary) []repotv1.DerailConditionResult {
	if !e.Spec.IsDerail() {
		return nil
	}
	var out []repotv1.DerailConditionResult
	for _, c := range e.Spec.DerailConditionsOrDefault() {
		r := repotv1.DerailConditionResult{Condition: c}
		if s := conditionSummary(d, string(c)); s != nil {
			r.Recovered, r.Total, r.InfraErrors = int32(s.Solved), int32(s.Total), int32(s.InfraErrors)
			if s.Total > 0 {
				r.Rate, r.RatePermille, r.Interval = s.Percent, int32(s.Permille), s.Interval
			}
			r.PromptTokensPerRun, r.CompletionTokensPerRun = s.TokensPerRun.Prompt, s.TokensPerRun.Completion
			for i, rc := range s.StopReasons {
				if i == 16 {
					break
				}
				r.StopReasons = append(r.StopReasons, repotv1.StopReasonCount{Reason: Truncate(rc.Reason, 64), Count: int32(rc.Count)})
			}
			r.ByEnvironment = rateSplits(s.ByEnvironment, 8)
			r.ByInjectionType = rateSplits(s.ByInjectionType, 4)
		}
		for _, cmp := range derailComparisons(d) {
			if cmp.Method == string(c) && cmp.Problems > 0 {
				r.VsErrorOnly = &repotv1.PairedComparison{
					Cases: int32(cmp.Problems), DiffPoints: cmp.DiffPoints,
					ConditionOnly: int32(cmp.MethodOnly), ErrorOnlyOnly: int32(cmp.BaselineOnly), PValue: cmp.PValue,
				}
			}
		}
		out = append(out, r)
	}
	return out
}

func rateSplits(ss []summary.Split, limit int) []repotv1.RateSplit {
	var out []repotv1.RateSplit
	for i, s := range ss {
		if i == limit {
			break
		}
		out = append(out, repotv1.RateSplit{Name: Truncate(s.Name, 64), Recovered: int32(s.Solved), Total: int32(s.Total), Rate: s.Percent})
	}
	return out
}

func conditionSummary(d *summary.DerailModelSummary, cond string) *summary.ConditionSummary {
	if d == nil {
		return nil
	}
	for i := range d.Conditions {
		if d.Conditions[i].Condition == cond {
			return &d.Conditions[i]
		}
	}
	return nil
}

// derailColumn is the Recovery printer column: per model in spec order,
// each condition's abbreviation and rate ("-" before any result).
func derailColumn(e *repotv1.RepotEvaluation, res EvaluationResults) string {
	if !e.Spec.IsDerail() {
		return ""
	}
	var models []string
	for i := range e.Spec.Models {
		d := res.Derail[e.Spec.Models[i].Name]
		var parts []string
		for _, c := range e.Spec.DerailConditionsOrDefault() {
			rate := "-"
			if s := conditionSummary(d, string(c)); s != nil && s.Total > 0 {
				rate = s.Percent
			}
			parts = append(parts, derailShort[string(c)]+" "+rate)
		}
		models = append(models, strings.Join(parts, " "))
	}
	return Truncate(strings.Join(models, " | "), 1024)
}

func derailComparisons(d *summary.DerailModelSummary) []summary.Comparison {
	if d == nil {
		return nil
	}
	return d.VsErrorOnly
}
