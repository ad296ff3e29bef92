package summary

import (
	"math/big"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestNewRate(t *testing.T) {
	tests := []struct {
		solved, total int
		want          Rate
	}{
		{75, 120, Rate{Solved: 75, Total: 120, Permille: 625, Percent: "62.5%", LowPermille: 536, HighPermille: 706, Interval: "[53.6%, 70.6%]"}},
		{0, 10, Rate{Solved: 0, Total: 10, Permille: 0, Percent: "0.0%", LowPermille: 0, HighPermille: 278, Interval: "[0.0%, 27.8%]"}},
		{10, 10, Rate{Solved: 10, Total: 10, Permille: 1000, Percent: "100.0%", LowPermille: 722, HighPermille: 1000, Interval: "[72.2%, 100.0%]"}},
		{1, 3, Rate{Solved: 1, Total: 3, Permille: 333, Percent: "33.3%", LowPermille: 61, HighPermille: 792, Interval: "[6.1%, 79.2%]"}},
		{16, 120, Rate{Solved: 16, Total: 120, Permille: 133, Percent: "13.3%", LowPermille: 84, HighPermille: 206, Interval: "[8.4%, 20.6%]"}},
		{0, 1, Rate{Solved: 0, Total: 1, Permille: 0, Percent: "0.0%", LowPermille: 0, HighPermille: 793, Interval: "[0.0%, 79.3%]"}},
		{500, 775, Rate{Solved: 500, Total: 775, Permille: 645, Percent: "64.5%", LowPermille: 611, HighPermille: 678, Interval: "[61.1%, 67.8%]"}},
		{0, 0, Rate{Percent: "n/a", Interval: "n/a"}},
	}
	for _, tc := range tests {
		if diff := cmp.Diff(tc.want, newRate(tc.solved, tc.total)); diff != "" {
			t.Errorf("newRate(%d, %d) mismatch (-want +got):\n%s", tc.solved, tc.total, diff)
		}
	}
}

func TestMcNemar(t *testing.T) {
	tests := []struct {
		b, c    int
		test, p string
	}{
		{10, 2, "mcnemar-exact", "0.0386"},
		{2, 10, "mcnemar-exact", "0.0386"},
		{5, 0, "mcnemar-exact", "0.0625"},
		{3, 3, "mcnemar-exact", "1.0000"},
		{0, 0, "mcnemar-exact", "1.0000"},
		{30, 2, "mcnemar-exact", "<0.0001"},
		{3000, 3000, "mcnemar-chi2", "0.9897"},
	}
	for _, tc := range tests {
		test, p := mcnemar(tc.b, tc.c)
		if test != tc.test || p != tc.p {
			t.Errorf("mcnemar(%d, %d) = %s %s, want %s %s", tc.b, tc.c, test, p, tc.test, tc.p)
		}
	}
}

func TestFormatting(t *testing.T) {
	tests := []struct {
		name, got, want string
	}{
		{"tenths", formatTenths(625), "62.5"},
		{"tenths negative", formatTenths(-58), "-5.8"},
		{"tenths small negative", formatTenths(-5), "-0.5"},
		{"signed", formatSignedTenths(33), "+3.3"},
		{"signed zero", formatSignedTenths(0), "+0.0"},
		{"signed negative", formatSignedTenths(-250), "-25.0"},
		{"milli", formatMilli(1234), "1.23"},
		{"milli rounds half up", formatMilli(1235), "1.24"},
		{"milli whole", formatMilli(2000), "2.00"},
		{"percent", formatPermillePercent(1000), "100.0%"},
		{"p half", formatP4(big.NewRat(1, 2)), "0.5000"},
		{"p rounds", formatP4(big.NewRat(1, 3)), "0.3333"},
		{"p one", formatP4(big.NewRat(1, 1)), "1.0000"},
		{"p zero", formatP4(big.NewRat(0, 1)), "0.0000"},
	}
	for _, tc := range tests {
		if tc.got != tc.want {
			t.Errorf("%s: got %q, want %q", tc.name, tc.got, tc.want)
		}
	}
}

func TestRoundDiv(t *testing.T) {
	tests := []struct{ a, b, want int64 }{
		{5, 2, 3}, {4, 2, 2}, {-5, 2, -3}, {1, 3, 0}, {2, 3, 1}, {7, 0, 0}, {-1, 3, 0}, {-2, 3, -1},
	}
	for _, tc := range tests {
		if got := roundDiv(tc.a, tc.b); got != tc.want {
			t.Errorf("roundDiv(%d, %d) = %d, want %d", tc.a, tc.b, got, tc.want)
		}
	}
}
