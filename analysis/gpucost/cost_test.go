package gpucost

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/utils/ptr"

	"repot.dev/repot-operator/contract"
)

func reading(inst string, uptimeMs int64, gpus ...contract.GPUTotals) contract.Reading {
	return contract.Reading{Instance: inst, UptimeMillis: uptimeMs, GPUs: gpus}
}

func TestSummarize(t *testing.T) {
	g := func(uuid string, mj, util, sampled, peak uint64) contract.GPUTotals {
		return contract.GPUTotals{UUID: uuid, EnergyMillijoules: mj, UtilPercentMillis: util, SampledMillis: sampled, PeakMemoryBytes: peak}
	}
	tests := []struct {
		name     string
		readings []contract.Reading
		want     Cost
	}{
		{"nothing", nil, Cost{}},
		{
			name: "two shards overlapping on one server: first to last, not the sum of shards",
			readings: []contract.Reading{
				reading("a", 10_000, g("G0", 1_000_000, 0, 9_000, 1<<30)),              // shard 0 start
				reading("a", 12_000, g("G0", 1_200_000, 100_000, 11_000, 1<<30)),       // shard 1 start
				reading("a", 110_000, g("G0", 41_000_000, 5_000_000, 109_000, 70<<30)), // shard 1 end
				reading("a", 100_000, g("G0", 37_000_000, 4_000_000, 99_000, 60<<30)),  // shard 0 end
				reading("a", 100_000, g("G0", 37_000_000, 4_000_000, 99_000, 60<<30)),  // the same line again
			},
			want: Cost{Readings: 5, GPUSecondsMeasured: 110, WindowMillis: 100_000, EnergyMillijoules: 40_000_000,
				UtilPermille: ptr.To[int32](500), PeakMemoryBytes: 70 << 30},
		},
		{
			name: "a restarted server is a new instance: its counters start again and add",
			readings: []contract.Reading{
				reading("a", 1_000, g("G0", 500, 0, 0, 0), g("G1", 700, 0, 0, 0)),
				reading("a", 51_000, g("G0", 20_500, 0, 0, 0), g("G1", 30_700, 0, 0, 0)),
				reading("b", 2_000, g("G2", 100, 0, 0, 0), g("G3", 100, 0, 0, 0)),
				reading("b", 12_000, g("G2", 5_100, 0, 0, 0), g("G3", 5_100, 0, 0, 0)),
			},
			want: Cost{Readings: 4, GPUSecondsMeasured: 2*51 + 2*12, WindowMillis: 60_000, EnergyMillijoules: 20_000 + 30_000 + 5_000 + 5_000},
		},
		{
			name: "errors are reported once each",
			readings: []contract.Reading{
				{Instance: "a", UptimeMillis: 1, Simulated: true, GPUs: []contract.GPUTotals{{Index: 1, UUID: "G1", XIDErrors: 2, LastXID: 79}}},
				{Instance: "a", UptimeMillis: 2, Simulated: true, GPUs: []contract.GPUTotals{{Index: 1, UUID: "G1", XIDErrors: 2, LastXID: 79, ECCUncorrected: 1, Error: "GPU 1 is lost"}}},
			},
			want: Cost{Readings: 2, WindowMillis: 1, Simulated: true, XIDErrors: 2, ECCUncorrected: 1, Errors: []string{
				"GPU 1 (G1) reported 1 uncorrected ECC errors", "GPU 1 (G1) reported 2 critical XID errors, the last XID 79", "GPU 1 is lost",
			}},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, Summarize(tc.readings)); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestAttribute(t *testing.T) {
	tests := []struct {
		name   string
		total  int64
		tokens []int64
		want   []int64
	}{
		{"proportional", 1000, []int64{100, 300, 600}, []int64{100, 300, 600}},
		{"remainders go to the largest fractions and the sum is exact", 100, []int64{1, 1, 1}, []int64{34, 33, 33}},
		{"uneven", 10, []int64{39141, 63194, 50040, 59903}, []int64{2, 3, 2, 3}},
		{"a method without tokens gets nothing", 90, []int64{0, 10, 20}, []int64{0, 30, 60}},
		{"no tokens at all", 90, []int64{0, 0}, []int64{0, 0}},
		{"no energy", 0, []int64{5}, []int64{0}},
		{"large values do not overflow", 1 << 40, []int64{1 << 40, 1 << 40}, []int64{1 << 39, 1 << 39}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := Attribute(tc.total, tc.tokens)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
			var sum int64
			for _, x := range got {
				sum += x
			}
			if tc.total > 0 && sum != tc.total && sum != 0 {
				t.Errorf("parts sum to %d, want %d", sum, tc.total)
			}
		})
	}
}
