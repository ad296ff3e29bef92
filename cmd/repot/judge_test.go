package repot

import (
	"io"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"repot.dev/repot-operator/cmd/repot/results"
)

func TestWriteJudgeReport(t *testing.T) {
	tests := []struct {
		name string
		rep  results.JudgeReport
		want string
	}{
		{
			name: "agreement",
			rep: results.JudgeReport{
				Rows:      []results.JudgeRow{{Model: "m", Method: "pot", Runs: 2, StatusSolved: 1, LedgerSolved: 1, TracesSolved: 1, JudgeSolved: 1}},
				NotJudged: []results.JudgeCount{{Reason: "why", Runs: 3}},
			},
			want: `MODEL  METHOD  RUNS  STATUS SOLVED  LEDGER SOLVED  TRACES SOLVED  JUDGE SOLVED  NOT JUDGED  DISAGREEMENTS
m      pot     2     1              1              1              1             0           0

2 lines read; 0 traces of runs ended by an infrastructure error and 0 of runs whose record the status leaves out (left out); 0 more traces of a run traced more than once (the one that agrees with its record counts, else the first)
not re-judged (3 runs): why

no disagreements
`,
		},
		{
			name: "disagreements and a bad line",
			rep: results.JudgeReport{
				Rows:          []results.JudgeRow{{Model: "m", Method: "pot", Runs: 1, StatusSolved: -1, JudgeSolved: 1, Disagreements: 2}},
				Malformed:     []string{"line 2: not a trace: EOF"},
				Disagreements: []results.JudgeDisagreement{{Model: "m", Method: "pot", What: "status solved 1, ledger solved 0"}, {Model: "m", Method: "pot", ProblemID: "p", What: "judge solved, trace not solved"}},
				InfraErrors:   1,
			},
			want: `MODEL  METHOD  RUNS  STATUS SOLVED  LEDGER SOLVED  TRACES SOLVED  JUDGE SOLVED  NOT JUDGED  DISAGREEMENTS
m      pot     1     -              0              0              1             0           2

2 lines read; 1 traces of runs ended by an infrastructure error and 0 of runs whose record the status leaves out (left out); 0 more traces of a run traced more than once (the one that agrees with its record counts, else the first)

lines that are not traces (1):
  line 2: not a trace: EOF

disagreements (2):
  m pot (status): status solved 1, ledger solved 0
  m pot p: judge solved, trace not solved
`,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var b strings.Builder
			if err := writeJudgeReport(&b, tc.rep, 2); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, b.String()); diff != "" {
				t.Errorf("report (-want +got):\n%s", diff)
			}
		})
	}
}

func TestJudgeFlagErrors(t *testing.T) {
	tests := []struct {
		args []string
		want string
	}{
		{nil, "--evaluation NAME is required"},
		{[]string{"--evaluation", "ev", "extra"}, `unknown command "extra" for "judge"`},
	}
	for _, tc := range tests {
		cmd := newJudgeCommand()
		cmd.SetArgs(tc.args)
		cmd.SetOut(io.Discard)
		cmd.SetErr(io.Discard)
		if err := cmd.Execute(); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: error %v, want it to say %q", tc.args, err, tc.want)
		}
	}
}
