package planning

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/utils/ptr"

	repotv1 "repot.dev/repot-operator/api/v1alpha1"
	revtesting "repot.dev/repot-operator/api/v1alpha1/testing"
	"repot.dev/repot-operator/contract"
)

// TestRepairDynamics maps the rounds and loop stops of summary.json into
// status.models[].methods[].repairDynamics.
func TestRepairDynamics(t *testing.T) {
	ev := revtesting.MakeEvaluation("ev", "ns").Simulated("m", "strong", 1).
		Methods(repotv1.MethodPoT, repotv1.MethodRePoT, repotv1.MethodVRR).RepairBudget(8).Obj()
	rec := func(p, method, stop string, rounds ...contract.Round) contract.Record {
		return contract.Record{Model: "m", ProblemID: p, Method: method, Environment: "tower_of_hanoi", Complexity: 3,
			Calls: len(rounds), Success: len(rounds) > 0 && rounds[len(rounds)-1].Valid, Rounds: rounds, LoopStop: stop}
	}
	bad := func(tokens int) contract.Round { return contract.Round{Tokens: tokens, Prefix: 1} }
	good := func(tokens int) contract.Round {
		return contract.Round{Valid: true, Accepts: 1, Tokens: tokens, Prefix: 3}
	}
	long := make([]contract.Round, 12) // more rounds than the status holds
	for i := range long {
		long[i] = bad(10)
	}
	tests := []struct {
		name string
		recs []contract.Record
		want map[repotv1.Method]*repotv1.RepairDynamics
	}{{
		name: "no rounds recorded",
		recs: []contract.Record{rec("p1", "pot", ""), rec("p1", "repot", "")},
		want: map[repotv1.Method]*repotv1.RepairDynamics{},
	}, {
		name: "only first plans: one round is no dynamics",
		recs: []contract.Record{rec("p1", "repot-vrr", contract.LoopAccepted, good(100)), rec("p2", "repot-vrr", contract.LoopAccepted, good(80))},
		want: map[repotv1.Method]*repotv1.RepairDynamics{},
	}, {
		name: "repot-vrr repairs",
		recs: []contract.Record{
			rec("p1", "repot-vrr", contract.LoopAccepted, bad(100), good(50)),
			rec("p2", "repot-vrr", contract.LoopAccepted, good(100)),
			rec("p3", "repot-vrr", contract.LoopBudget, bad(100), bad(60), bad(60)),
			rec("p1", "pot", ""),
		},
		want: map[repotv1.Method]*repotv1.RepairDynamics{repotv1.MethodVRR: {
			Runs: 3,
			Rounds: []repotv1.RepairRound{
				{Round: 0, Entered: 3, LeftSolved: 1, Tokens: 300, ValidAfterPermille: 333, AcceptedAfterPermille: 333},
				{Round: 1, Entered: 2, LeftSolved: 1, AlphaPermille: ptr.To[int32](500), AlphaTrials: 2, Tokens: 110, ValidAfterPermille: 667, AcceptedAfterPermille: 667},
				{Round: 2, Entered: 1, AlphaPermille: ptr.To[int32](0), AlphaTrials: 1, Tokens: 60, ValidAfterPermille: 667, AcceptedAfterPermille: 667},
			},
			LoopStops: []repotv1.LoopStopCount{{Reason: "accepted", Count: 2}, {Reason: "budget", Count: 1}},
		}},
	}, {
		name: "a loop longer than the status holds is cut at 9 rounds",
		recs: []contract.Record{rec("p1", "repot", contract.LoopBudget, long...)},
		want: map[repotv1.Method]*repotv1.RepairDynamics{repotv1.MethodRePoT: {Runs: 1}},
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			res := ComputeResults(ev, tc.recs)
			for _, mr := range MethodResults(ev, res.Models["m"]) {
				want := tc.want[mr.Method]
				got := mr.RepairDynamics
				if mr.Method == repotv1.MethodRePoT && want != nil {
					// only the shape of the long loop matters
					if got == nil || len(got.Rounds) != 9 || got.Rounds[8].Round != 8 || got.Runs != 1 {
						t.Errorf("repot: %+v, want 9 rounds 0..8 of 1 run", got)
					}
					continue
				}
				if d := cmp.Diff(want, got); d != "" {
					t.Errorf("%s (-want +got):\n%s", mr.Method, d)
				}
			}
		})
	}
}
