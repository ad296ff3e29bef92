package summary

import (
	"testing"

	"repot.dev/repot-operator/contract"
)

func TestSettledInFlight(t *testing.T) {
	tests := []struct {
		name   string
		limits []int
		want   int
		ok     bool
	}{
		{"no records", nil, 0, false},
		{"records from before the field", []int{0, 0}, 0, false},
		{"the median of those that carry it", []int{4, 0, 27, 25, 26, 64}, 26, true},
		{"one record", []int{9}, 9, true},
	}
	for _, tc := range tests {
		var recs []contract.Record
		for _, l := range tc.limits {
			recs = append(recs, contract.Record{Model: "m", ProblemID: "p", Method: "pot", InFlightLimit: l})
		}
		got, ok := SettledInFlight(recs)
		if got != tc.want || ok != tc.ok {
			t.Errorf("%s: SettledInFlight = %d, %v; want %d, %v", tc.name, got, ok, tc.want, tc.ok)
		}
	}
}
