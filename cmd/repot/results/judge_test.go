package results

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	repotv1 "repot.dev/repot-operator/api/v1alpha1"
	revtesting "repot.dev/repot-operator/api/v1alpha1/testing"
	"repot.dev/repot-operator/contract"
)

func verdict(line int, problem, method string, trace, judged, success bool) contract.TraceVerdict {
	return contract.TraceVerdict{Line: line, Model: "a", Method: method, ProblemID: problem, TraceSuccess: trace, Judged: judged, Success: success}
}

func TestCompareJudged(t *testing.T) {
	status := func(solved map[string]int32) repotv1.RepotEvaluationStatus {
		ms := repotv1.ModelStatus{Name: "a"}
		for _, m := range []string{"pot", "vex"} {
			if n, ok := solved[m]; ok {
				ms.Methods = append(ms.Methods, repotv1.MethodResult{Method: repotv1.Method(m), Solved: n})
			}
		}
		return repotv1.RepotEvaluationStatus{Models: []repotv1.ModelStatus{ms}}
	}
	agreeing := []contract.TraceVerdict{
		verdict(1, "p1", "pot", true, true, true),
		verdict(2, "p2", "pot", false, true, false),
		{Line: 3, Model: "a", Method: "vex", ProblemID: "p1", TraceSuccess: true, NotJudged: "vex: why"},
		{Line: 4, Model: "a", Method: "pot", ProblemID: "p3", InfraError: true},
	}
	records := []contract.Record{
		resultRecord("a", "p1", "pot", true, ""),
		resultRecord("a", "p2", "pot", false, ""),
		resultRecord("a", "p1", "vex", true, ""),
		resultRecord("a", "p3", "pot", false, "connection refused"),
	}
	tests := []struct {
		name     string
		solved   map[string]int32
		records  []contract.Record
		verdicts []contract.TraceVerdict
		want     JudgeReport
	}{
		{
			name: "everything agrees", solved: map[string]int32{"pot": 1, "vex": 1}, records: records, verdicts: agreeing,
			want: JudgeReport{
				Rows: []JudgeRow{
					{Model: "a", Method: "pot", Runs: 2, StatusSolved: 1, LedgerSolved: 1, TracesSolved: 1, JudgeSolved: 1},
					{Model: "a", Method: "vex", Runs: 1, StatusSolved: 1, LedgerSolved: 1, TracesSolved: 1, NotJudged: 1},
				},
				NotJudged:   []JudgeCount{{Reason: "vex: why", Runs: 1}},
				InfraErrors: 1,
			},
		},
		{
			name: "a flipped trace, a judge that differs, a wrong status, a missing trace and a bad line", solved: map[string]int32{"pot": 2, "vex": 1},
			records: append(records, resultRecord("a", "p4", "pot", false, "")),
			verdicts: []contract.TraceVerdict{
				verdict(1, "p1", "pot", false, true, true),
				verdict(2, "p2", "pot", false, true, true),
				{Line: 3, Model: "a", Method: "vex", ProblemID: "p1", TraceSuccess: true, NotJudged: "vex: why"},
				{Line: 4, Malformed: "not a trace: unexpected end of JSON input"},
				verdict(5, "p1", "pot", false, true, true),
			},
			want: JudgeReport{
				Rows: []JudgeRow{
					{Model: "a", Method: "pot", Runs: 3, StatusSolved: 2, LedgerSolved: 1, JudgeSolved: 2, Disagreements: 4},
					{Model: "a", Method: "vex", Runs: 1, StatusSolved: 1, LedgerSolved: 1, TracesSolved: 1, NotJudged: 1},
				},
				Disagreements: []JudgeDisagreement{
					{Model: "a", Method: "pot", What: "status solved 2, ledger solved 1"},
					{Model: "a", Method: "pot", ProblemID: "p1", What: "judge solved, trace not solved; ledger solved, trace not solved"},
					{Model: "a", Method: "pot", ProblemID: "p2", What: "judge solved, trace not solved; judge solved, ledger not solved"},
					{Model: "a", Method: "pot", ProblemID: "p4", What: "no stored trace"},
				},
				Malformed:       []string{"line 4: not a trace: unexpected end of JSON input"},
				NotJudged:       []JudgeCount{{Reason: "vex: why", Runs: 1}},
				DuplicateTraces: 1,
			},
		},
		{
			// A run cut off after its trace was stored and before its
			// record was written ran again: the rerun's trace, which
			// agrees with the record, counts wherever it is.
			name: "a run traced twice", solved: map[string]int32{"pot": 1, "vex": 1}, records: records,
			verdicts: append([]contract.TraceVerdict{verdict(0, "p2", "pot", true, true, true)}, agreeing...),
			want: JudgeReport{
				Rows: []JudgeRow{
					{Model: "a", Method: "pot", Runs: 2, StatusSolved: 1, LedgerSolved: 1, TracesSolved: 1, JudgeSolved: 1},
					{Model: "a", Method: "vex", Runs: 1, StatusSolved: 1, LedgerSolved: 1, TracesSolved: 1, NotJudged: 1},
				},
				NotJudged:       []JudgeCount{{Reason: "vex: why", Runs: 1}},
				InfraErrors:     1,
				DuplicateTraces: 1,
			},
		},
		{
			name: "an inconsistent trace and a trace without a record", solved: map[string]int32{"pot": 1},
			records: records[:2],
			verdicts: []contract.TraceVerdict{
				{Line: 1, Model: "a", Method: "pot", ProblemID: "p1", TraceSuccess: true, Inconsistent: "call 0: the recorded program is not the completion's program"},
				verdict(2, "p2", "pot", false, true, false),
				verdict(3, "p9", "pot", false, true, false),
			},
			want: JudgeReport{
				Rows: []JudgeRow{{Model: "a", Method: "pot", Runs: 3, StatusSolved: 1, LedgerSolved: 1, TracesSolved: 1, Disagreements: 2}},
				Disagreements: []JudgeDisagreement{
					{Model: "a", Method: "pot", ProblemID: "p1", What: "the trace is inconsistent: call 0: the recorded program is not the completion's program"},
					{Model: "a", Method: "pot", ProblemID: "p9", What: "no ledger record"},
				},
			},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e := revtesting.MakeEvaluation("ev", "ns").Simulated("a", "strong", 1).Methods("pot", "vex").Obj()
			e.Status = status(tc.solved)
			got := CompareJudged(e, tc.records, tc.verdicts)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("report (-want +got):\n%s", diff)
			}
			if got.Found() != (len(tc.want.Disagreements) > 0 || len(tc.want.Malformed) > 0) {
				t.Errorf("Found() = %v", got.Found())
			}
		})
	}
}
