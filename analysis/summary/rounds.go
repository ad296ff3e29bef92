package summary

import "repot.dev/repot-operator/contract"

// RoundSummary is round K of the repair loops of one method: K 0 is the
// first plan, K k >= 1 repair call k (docs/vrr.md gives the definitions).
type RoundSummary struct {
	K int `json:"k"`
	// Entered counts the runs that made round K's call (every run for K 0);
	// a round that only verified again (contract.Round.NoCall) is not entered.
	Entered int `json:"entered"`
	// LeftSolved counts those whose committed plan was valid after it.
	LeftSolved int `json:"left_solved"`
	// AlphaTrials counts the runs that entered round K (K >= 1) with an
	// invalid committed plan, AlphaHits those of them that left it valid:
	// the empirical alpha_K is AlphaHits/AlphaTrials (AlphaPermille).
	AlphaTrials   int `json:"alpha_trials,omitempty"`
	AlphaHits     int `json:"alpha_hits,omitempty"`
	AlphaPermille int `json:"alpha_permille,omitempty"`
	// BetaTrials counts the runs that entered round K with a valid
	// committed plan (only a noisy verdict repairs one), BetaHits those of
	// them that left it invalid: beta_K = BetaHits/BetaTrials.
	BetaTrials   int `json:"beta_trials,omitempty"`
	BetaHits     int `json:"beta_hits,omitempty"`
	BetaPermille int `json:"beta_permille,omitempty"`
	// Shortened counts the runs whose verified prefix was shorter after
	// round K than before it (a restart repair, or a repair from a
	// spurious rejection that did not get back as far).
	Shortened int `json:"shortened,omitempty"`
	// Tokens sums the prompt and completion tokens of round K's calls.
	Tokens int64 `json:"tokens"`
	// Runs counts every run with rounds; ValidAt and AcceptedAt count
	// those whose committed plan after round K was valid (the truth) and
	// observed accepted (the verdict), a run that stopped earlier counting
	// with the plan it stopped on. They are the two curves of VRR-Stop's
	// figure.
	Runs               int `json:"runs"`
	ValidAt            int `json:"valid_at"`
	AcceptedAt         int `json:"accepted_at"`
	ValidAtPermille    int `json:"valid_at_permille"`
	AcceptedAtPermille int `json:"accepted_at_permille"`
}

// Rounds aggregates the rounds of finished runs (infra errors left out by
// the caller): one RoundSummary per round up to the longest loop, and the
// runs counted by loop stop reason. Both are nil when no run has rounds.
func Rounds(done []contract.Record) ([]RoundSummary, []ReasonCount) {
	var withRounds []contract.Record
	longest := 0
	stops := map[string]int{}
	for _, r := range done {
		if len(r.Rounds) == 0 {
			continue
		}
		withRounds = append(withRounds, r)
		longest = max(longest, len(r.Rounds))
		stops[r.LoopStop]++
	}
	if len(withRounds) == 0 {
		return nil, nil
	}
	out := make([]RoundSummary, longest)
	for k := range out {
		rs := &out[k]
		rs.K, rs.Runs = k, len(withRounds)
		for _, r := range withRounds {
			last := r.Rounds[min(k, len(r.Rounds)-1)]
			if last.Valid {
				rs.ValidAt++
			}
			if last.Accepted(r.Votes) {
				rs.AcceptedAt++
			}
			if k >= len(r.Rounds) {
				continue
			}
			cur := r.Rounds[k]
			if cur.NoCall {
				continue
			}
			rs.Entered++
			rs.Tokens += int64(cur.Tokens)
			if cur.Valid {
				rs.LeftSolved++
			}
			if k == 0 {
				continue
			}
			prev := r.Rounds[k-1]
			if prev.Valid {
				rs.BetaTrials++
				if !cur.Valid {
					rs.BetaHits++
				}
			} else {
				rs.AlphaTrials++
				if cur.Valid {
					rs.AlphaHits++
				}
			}
			if cur.Prefix < prev.Prefix {
				rs.Shortened++
			}
		}
		rs.AlphaPermille = int(roundDiv(1000*int64(rs.AlphaHits), int64(rs.AlphaTrials)))
		rs.BetaPermille = int(roundDiv(1000*int64(rs.BetaHits), int64(rs.BetaTrials)))
		rs.ValidAtPermille = int(roundDiv(1000*int64(rs.ValidAt), int64(rs.Runs)))
		rs.AcceptedAtPermille = int(roundDiv(1000*int64(rs.AcceptedAt), int64(rs.Runs)))
	}
	counts := make([]ReasonCount, 0, len(stops))
	for _, k := range sortedKeys(stops) {
		counts = append(counts, ReasonCount{Reason: k, Count: stops[k]})
	}
	return out, counts
}
