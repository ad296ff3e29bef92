package planning

import (
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"

	"repot.dev/repot-operator/analysis/summary"
	"repot.dev/repot-operator/contract"
)

// pairs lists every (later, earlier) pair of methods, in the summary's
// order, each with the given number of paired problems.
func pairs(methods []string, problems int) []summary.Comparison {
	var out []summary.Comparison
	for j := range methods {
		for i := 0; i < j; i++ {
			out = append(out, summary.Comparison{Method: methods[j], Baseline: methods[i], Problems: problems})
		}
	}
	return out
}

// TestMethodComparisons: the status keeps every comparison when they fit,
// and beyond MaxComparisons keeps each method's comparison against pot.
func TestMethodComparisons(t *testing.T) {
	paper := []string{contract.MethodPoT, contract.MethodPoTRetry, contract.MethodRePoT, contract.MethodAdaptive,
		contract.MethodCoT, contract.MethodSelfConsistency, contract.MethodVEX}
	for _, tc := range []struct {
		name        string
		comparisons []summary.Comparison
		wantLen     int
		// wantAgainstPoT are the methods that must have a comparison with
		// baseline pot.
		wantAgainstPoT []string
	}{
		{"four methods", pairs(paper[:4], 10), 6, paper[1:4]},
		{"the paper's seven", pairs(paper, 10), 21, paper[1:]},
		{"all ten", pairs(contract.Methods, 10), MaxComparisons, contract.Methods[1:]},
		{"no paired problems", pairs(paper, 0), 0, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := methodComparisons(&summary.ModelSummary{Comparisons: tc.comparisons})
			if len(got) != tc.wantLen {
				t.Errorf("%d comparisons, want %d", len(got), tc.wantLen)
			}
			var against []string
			seen := map[string]bool{}
			for _, c := range got {
				key := fmt.Sprint(c.Method, "/", c.Baseline)
				if seen[key] {
					t.Errorf("%s listed twice", key)
				}
				seen[key] = true
				if c.Baseline == contract.MethodPoT {
					against = append(against, string(c.Method))
				}
			}
			if diff := cmp.Diff(tc.wantAgainstPoT, against); diff != "" {
				t.Errorf("methods compared with pot (-want +got):\n%s", diff)
			}
		})
	}
}
