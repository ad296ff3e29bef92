package planning

import (
	"strconv"
	"strings"
	"testing"

	batchv1 "k8s.io/api/batch/v1"

	repotv1 "repot.dev/repot-operator/api/v1alpha1"
	revtesting "repot.dev/repot-operator/api/v1alpha1/testing"
	"repot.dev/repot-operator/contract"
	"repot.dev/repot-operator/controllers/build"
)

// A completed evaluation whose ledgers lack runs must not read as if every
// run were recorded.
func TestCompleteSaysWhenLedgersLackRuns(t *testing.T) {
	const problems = 3
	methods := []repotv1.Method{repotv1.MethodPoT, repotv1.MethodRePoT}
	all := func() []contract.Record {
		var out []contract.Record
		for i := range problems {
			for _, m := range methods {
				out = append(out, contract.Record{Model: "sim", ProblemID: "p" + strconv.Itoa(i), Method: string(m), Success: true})
			}
		}
		return out
	}
	cases := []struct {
		name    string
		records []contract.Record
		missing bool
	}{
		{name: "all runs recorded", records: all()},
		{name: "one run missing", records: all()[1:], missing: true},
		{name: "a run written twice does not make up for a missing one", records: append(all()[1:], all()[1]), missing: true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			e := revtesting.MakeEvaluation("ev", "ns").Simulated("sim", "strong", 1).Methods(methods...).Obj()
			w := newWorld()
			w.Problems.Count = problems
			runToRunning(e, w)
			finishJob(w, build.RunnerJobName("ev", "sim"), batchv1.JobComplete, "CompletionsReached")
			w.Records = tc.records
			p := PlanEvaluation(e, w, testOpts)
			c := findCondition(p.Status.Conditions, repotv1.ConditionComplete)
			if c == nil || c.Status != "True" {
				t.Fatalf("Complete = %+v, want True", c)
			}
			if got := strings.Contains(c.Message, "1 of 6 runs are missing from the ledgers"); got != tc.missing {
				t.Errorf("Complete message %q: says one run is missing = %t, want %t", c.Message, got, tc.missing)
			}
		})
	}
}
