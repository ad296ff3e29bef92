package planning

import (
	"repot.dev/repot-operator/analysis/summary"
	repotv1 "repot.dev/repot-operator/api/v1alpha1"
)

// ModelFigures are the result figures of one model's status entry: what a
// summary of the model's records determines (not the server or progress).
type ModelFigures struct {
	Name                     string                 `json:"name"`
	Methods                  []repotv1.MethodResult `json:"methods,omitempty"`
	FailedPrefixPermille     *int32                 `json:"failedPrefixPermille,omitempty"`
	RepotMinusPotRetryPoints string                 `json:"repotMinusPotRetryPoints,omitempty"`
}

// FiguresFromSummary maps a summary (such as the summary.json of repot run
// or repot results export) to the figures of an evaluation's status, per
// model in spec order, with the functions the status is written with.
// scaling may be nil.
func FiguresFromSummary(e *repotv1.RepotEvaluation, sum summary.Summary, scaling *summary.ScalingReport) ([]ModelFigures, *repotv1.ScalingStatus) {
	byName := map[string]*summary.ModelSummary{}
	for i := range sum.Models {
		byName[sum.Models[i].Model] = &sum.Models[i]
	}
	var out []ModelFigures
	for i := range e.Spec.Models {
		ms := byName[e.Spec.Models[i].Name]
		out = append(out, ModelFigures{
			Name: e.Spec.Models[i].Name, Methods: MethodResults(e, ms),
			FailedPrefixPermille: failedPrefix(e, ms), RepotMinusPotRetryPoints: repotMinusPotRetry(ms),
		})
	}
	return out, scalingStatus(scaling)
}

// FiguresFromStatus takes the same figures from a status, less the
// per-method energy estimates, which come from GPU readings, not records.
func FiguresFromStatus(st *repotv1.RepotEvaluationStatus) []ModelFigures {
	var out []ModelFigures
	for _, m := range st.Models {
		methods := make([]repotv1.MethodResult, len(m.Methods))
		for i, r := range m.Methods {
			// The energy estimates come from GPU readings, not records.
			r.EstimatedEnergyJoules, r.EstimatedJoulesPerSolvedProblem = nil, nil
			methods[i] = r
		}
		if len(methods) == 0 {
			methods = nil
		}
		out = append(out, ModelFigures{Name: m.Name, Methods: methods, FailedPrefixPermille: m.FailedPrefixPermille, RepotMinusPotRetryPoints: m.RepotMinusPotRetryPoints})
	}
	return out
}
