package schedule

import (
	"fmt"
	"math/big"
	"strings"

	"repot.dev/repot-operator/analysis/summary"
	repotv1 "repot.dev/repot-operator/api/v1alpha1"
	"repot.dev/repot-operator/contract"
)

// DefaultRegressionPValue is spec.regressionPValue's default.
const DefaultRegressionPValue = "0.05"

// compareRuns compares a finished run's records with the baseline run's,
// per model and method that both ran, with the summary's paired McNemar
// test, and marks each significant drop: fewer problems solved and a p-value
// below alpha. Models and methods come out in the run's spec order.
func compareRuns(e *repotv1.RepotEvaluation, records, baseline []contract.Record, alpha string) []repotv1.RunComparison {
	type key struct{ model, method string }
	group := func(rs []contract.Record) map[key][]contract.Record {
		m := map[key][]contract.Record{}
		for _, r := range rs {
			k := key{r.Model, r.Method}
			m[k] = append(m[k], r)
		}
		return m
	}
	cur, base := group(records), group(baseline)
	var out []repotv1.RunComparison
	for _, model := range e.Spec.Models {
		for _, method := range e.Spec.MethodsOrDefault() {
			k := key{model.Name, string(method)}
			if len(cur[k]) == 0 || len(base[k]) == 0 {
				continue
			}
			c := summary.Paired(cur[k], base[k])
			if c.Problems == 0 {
				continue
			}
			out = append(out, repotv1.RunComparison{
				Model: model.Name, Method: method, McNemarComparison: pairedStatus(c),
				SignificantDrop: c.DiffPermille < 0 && c.BaselineOnly > c.MethodOnly && pBelow(c.PValue, alpha),
			})
		}
	}
	if len(out) > 96 {
		out = out[:96]
	}
	return out
}

// pairedStatus maps a summary comparison to its API form.
func pairedStatus(c summary.Comparison) repotv1.McNemarComparison {
	return repotv1.McNemarComparison{
		Problems: int32(c.Problems), Solved: int32(c.MethodSolved), BaselineSolved: int32(c.BaselineSolved),
		OnlySolved: int32(c.MethodOnly), BaselineOnlySolved: int32(c.BaselineOnly),
		DiffPermille: int32(c.DiffPermille), DiffPoints: c.DiffPoints, Test: c.Test, PValue: c.PValue,
	}
}

// pBelow reports whether a formatted p-value ("0.0313", "<0.0001") is below
// alpha (a decimal string), compared exactly as rationals.
func pBelow(p, alpha string) bool {
	a, ok := new(big.Rat).SetString(alpha)
	if !ok {
		a, _ = new(big.Rat).SetString(DefaultRegressionPValue)
	}
	if strings.HasPrefix(p, "<") {
		bound, ok := new(big.Rat).SetString(strings.TrimPrefix(p, "<"))
		return ok && bound.Cmp(a) <= 0
	}
	v, ok := new(big.Rat).SetString(p)
	return ok && v.Cmp(a) < 0
}

// regressionMessage names every significant drop of a run: model, method,
// the change in points and the p-value.
func regressionMessage(h repotv1.ScheduledRun) string {
	var parts []string
	for _, c := range h.Comparisons {
		if c.SignificantDrop {
			parts = append(parts, fmt.Sprintf("model %s, method %s: %s points (%d/%d solved, was %d/%d; McNemar p=%s)",
				c.Model, c.Method, c.DiffPoints, c.Solved, c.Problems, c.BaselineSolved, c.Problems, c.PValue))
		}
	}
	msg := fmt.Sprintf("run %s solved significantly fewer problems than run %s: %s", h.Name, h.ComparedWith, strings.Join(parts, "; "))
	return msg + differencesText(h)
}

// differencesText is ", and the runs differ in: ..." when the run differed
// from the one it was compared with in more than time, "" otherwise.
func differencesText(h repotv1.ScheduledRun) string {
	if len(h.Differences) == 0 {
		return ""
	}
	return "; the runs differ in more than time: " + strings.Join(h.Differences, "; ")
}
