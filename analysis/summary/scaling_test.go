package summary

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"repot.dev/repot-operator/contract"
)

func sr(model, problem, env, method string, success, initialSuccess bool, prefix int) contract.Record {
	return contract.Record{Model: model, ProblemID: problem, Environment: env, Complexity: 1, Method: method, Success: success, InitialSuccess: initialSuccess, InitialPrefixPermille: prefix}
}

func TestScaling(t *testing.T) {
	recs := []contract.Record{
		sr("a", "p1", "e1", contract.MethodRePoT, true, false, 200),
		sr("a", "p2", "e1", contract.MethodRePoT, false, false, 400),
		sr("a", "p1", "e1", contract.MethodPoTRetry, false, false, 200),
		sr("a", "p2", "e1", contract.MethodPoTRetry, false, false, 400),
		sr("a", "p3", "e2", contract.MethodRePoT, false, false, 0),
		sr("a", "p4", "e2", contract.MethodRePoT, true, true, 1000),
		sr("a", "p3", "e2", contract.MethodPoTRetry, true, false, 0),
		sr("a", "p4", "e2", contract.MethodPoTRetry, true, true, 1000),
		// Ignored: other methods and infra errors.
		sr("a", "p1", "e1", contract.MethodPoT, false, false, 900),
		{Model: "a", ProblemID: "p9", Environment: "e1", Method: contract.MethodRePoT, InfraError: "x"},
		sr("b", "p1", "e1", contract.MethodRePoT, true, false, 600),
		sr("b", "p1", "e1", contract.MethodPoTRetry, false, false, 600),
		// No failed first plan: the cell is not listed.
		sr("b", "p3", "e2", contract.MethodRePoT, true, true, 1000),
		sr("b", "p3", "e2", contract.MethodPoTRetry, true, true, 1000),
	}
	want := ScalingReport{
		Cells: []ScalingCell{
			{Model: "a", Environment: "e1", FailedFirstPlans: 2, FailedPrefixPermille: 300, FailedPrefix: "30.0%", Problems: 2, RePoTSolved: 1, PoTRetrySolved: 0, DeltaPermille: 500, DeltaPoints: "+50.0"},
			{Model: "a", Environment: "e2", FailedFirstPlans: 1, FailedPrefixPermille: 0, FailedPrefix: "0.0%", Problems: 2, RePoTSolved: 1, PoTRetrySolved: 2, DeltaPermille: -500, DeltaPoints: "-50.0"},
			{Model: "b", Environment: "e1", FailedFirstPlans: 1, FailedPrefixPermille: 600, FailedPrefix: "60.0%", Problems: 1, RePoTSolved: 1, PoTRetrySolved: 0, DeltaPermille: 1000, DeltaPoints: "+100.0"},
		},
		// 100 * (3*750000 - 900*1000) / (3*450000 - 900*900) = 250
		SlopeDefined: true, SlopeMilli: 250000, Slope: "+250.0",
	}
	if diff := cmp.Diff(want, Scaling(recs)); diff != "" {
		t.Errorf("Scaling mismatch (-want +got):\n%s", diff)
	}
}

func TestScalingDegenerate(t *testing.T) {
	tests := []struct {
		name string
		recs []contract.Record
		want ScalingReport
	}{
		{"empty", nil, ScalingReport{Cells: []ScalingCell{}, Slope: "n/a"}},
		{"one cell", []contract.Record{
			sr("a", "p1", "e1", contract.MethodRePoT, true, false, 200),
			sr("a", "p1", "e1", contract.MethodPoTRetry, false, false, 200),
		}, ScalingReport{Cells: []ScalingCell{{Model: "a", Environment: "e1", FailedFirstPlans: 1, FailedPrefixPermille: 200, FailedPrefix: "20.0%", Problems: 1, RePoTSolved: 1, DeltaPermille: 1000, DeltaPoints: "+100.0"}}, Slope: "n/a"}},
		{"no pot-retry", []contract.Record{sr("a", "p1", "e1", contract.MethodRePoT, true, false, 200)}, ScalingReport{Cells: []ScalingCell{}, Slope: "n/a"}},
	}
	for _, tc := range tests {
		if diff := cmp.Diff(tc.want, Scaling(tc.recs)); diff != "" {
			t.Errorf("%s: mismatch (-want +got):\n%s", tc.name, diff)
		}
	}
}

func TestSlopeNegativeRounding(t *testing.T) {
	cells := []ScalingCell{{FailedPrefixPermille: 0, DeltaPermille: 0}, {FailedPrefixPermille: 3, DeltaPermille: -1}}
	// n=2, ΣP=3, ΣD=-1, ΣPD=-3, ΣP²=9: 100000*(2*-3 - 3*-1)/(2*9 - 9) = -33333.3
	got, ok := slopeMilli(cells)
	if !ok || got != -33333 {
		t.Errorf("slopeMilli = %d, %v; want -33333, true", got, ok)
	}
}
