package summary

import "repot.dev/repot-operator/contract"

// Paired compares one method's outcomes in two runs of the same problems
// (for example two scheduled runs of an evaluation): records and baseline
// hold one model's records of one method each. Duplicate keys count once
// (as in Dedupe) and runs ended by an infrastructure error are left out; the
// comparison covers the problems both sides finished, with the same McNemar
// test Aggregate uses between methods. Method and Baseline of the result
// are left empty for the caller to name.
func Paired(records, baseline []contract.Record) Comparison {
	return compare("", "", finishedByProblem(records), finishedByProblem(baseline))
}

// finishedByProblem maps problem id to the record of a finished run.
func finishedByProblem(records []contract.Record) map[string]contract.Record {
	recs, _ := Dedupe(records)
	out := make(map[string]contract.Record, len(recs))
	for _, r := range recs {
		if r.InfraError == "" {
			out[r.ProblemID] = r
		}
	}
	return out
}
