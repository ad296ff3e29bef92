package summary

import (
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"

	"repot.dev/repot-operator/contract"
)

func outcomes(prefix string, solved ...bool) []contract.Record {
	var out []contract.Record
	for i, s := range solved {
		out = append(out, contract.Record{Model: "m", Method: contract.MethodPoT, ProblemID: fmt.Sprintf("%s%d", prefix, i), Success: s})
	}
	return out
}

func repeat(v bool, n int) []bool {
	out := make([]bool, n)
	for i := range out {
		out[i] = v
	}
	return out
}

func TestPaired(t *testing.T) {
	infra := contract.Record{Model: "m", Method: contract.MethodPoT, ProblemID: "p0", InfraError: "timeout"}
	cases := []struct {
		name          string
		records, base []contract.Record
		want          Comparison
	}{
		{
			name:    "ten lost, none gained: significant drop",
			records: outcomes("p", append(repeat(false, 10), repeat(true, 10)...)...),
			base:    outcomes("p", repeat(true, 20)...),
			want: Comparison{Problems: 20, MethodSolved: 10, BaselineSolved: 20, BaselineOnly: 10,
				DiffPermille: -500, DiffPoints: "-50.0", Test: "mcnemar-exact", PValue: "0.0020"},
		},
		{
			name:    "one each way: no change",
			records: outcomes("p", true, false, true),
			base:    outcomes("p", false, true, true),
			want: Comparison{Problems: 3, MethodSolved: 2, BaselineSolved: 2, MethodOnly: 1, BaselineOnly: 1,
				DiffPermille: 0, DiffPoints: "+0.0", Test: "mcnemar-exact", PValue: "1.0000"},
		},
		{
			name:    "infra errors and unpaired problems are left out",
			records: append([]contract.Record{infra}, outcomes("q", true)...),
			base:    append(outcomes("p", true), outcomes("q", false)...),
			want: Comparison{Problems: 1, MethodSolved: 1, BaselineSolved: 0, MethodOnly: 1,
				DiffPermille: 1000, DiffPoints: "+100.0", Test: "mcnemar-exact", PValue: "1.0000"},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, Paired(tc.records, tc.base)); diff != "" {
				t.Errorf("Paired (-want +got):\n%s", diff)
			}
		})
	}
}
