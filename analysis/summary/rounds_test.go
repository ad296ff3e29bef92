package summary

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"repot.dev/repot-operator/contract"
)

func TestRounds(t *testing.T) {
	recs := []contract.Record{
		// Repaired twice: invalid, invalid, valid.
		{ProblemID: "a", Rounds: []contract.Round{{Prefix: 1, Tokens: 100}, {Prefix: 2, Tokens: 50}, {Valid: true, Prefix: 5, Accepts: 1, Tokens: 50}}, LoopStop: contract.LoopAccepted},
		// Valid at once.
		{ProblemID: "b", Rounds: []contract.Round{{Valid: true, Prefix: 3, Accepts: 1, Tokens: 100}}, LoopStop: contract.LoopAccepted},
		// A noisy loop: valid, falsely rejected (1 of 3 votes), broken by
		// the repair with a shorter prefix, then only verified again.
		{ProblemID: "c", Votes: 3, Rounds: []contract.Round{{Valid: true, Prefix: 4, Accepts: 1, Tokens: 100}, {Prefix: 2, Accepts: 2, Tokens: 60}, {Prefix: 2, Accepts: 2, NoCall: true}}, LoopStop: contract.LoopBudget},
		// No rounds: left out.
		{ProblemID: "d"},
	}
	got, stops := Rounds(recs)
	want := []RoundSummary{
		{K: 0, Entered: 3, LeftSolved: 2, Tokens: 300, Runs: 3, ValidAt: 2, AcceptedAt: 1, ValidAtPermille: 667, AcceptedAtPermille: 333},
		{K: 1, Entered: 2, AlphaTrials: 1, BetaTrials: 1, BetaHits: 1, BetaPermille: 1000, Shortened: 1, Tokens: 110, Runs: 3, ValidAt: 1, AcceptedAt: 2, ValidAtPermille: 333, AcceptedAtPermille: 667},
		{K: 2, Entered: 1, LeftSolved: 1, AlphaTrials: 1, AlphaHits: 1, AlphaPermille: 1000, Tokens: 50, Runs: 3, ValidAt: 2, AcceptedAt: 3, ValidAtPermille: 667, AcceptedAtPermille: 1000},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("rounds (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]ReasonCount{{contract.LoopAccepted, 2}, {contract.LoopBudget, 1}}, stops); diff != "" {
		t.Errorf("loop stops (-want +got):\n%s", diff)
	}
	if r, s := Rounds(recs[3:]); r != nil || s != nil {
		t.Errorf("records without rounds give %v %v, want nil", r, s)
	}
}
