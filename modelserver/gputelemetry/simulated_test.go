package gputelemetry

import (
	"testing"
	"time"

	clocktesting "k8s.io/utils/clock/testing"

	"repot.dev/repot-operator/analysis/gpucost"
	"repot.dev/repot-operator/contract"
)

// TestSimulatedH100FollowsLoad drives the simulated H100 through an idle
// minute, a saturated minute and a half-busy minute, sampling every second.
func TestSimulatedH100FollowsLoad(t *testing.T) {
	const capacity = 2500.0
	clk := clocktesting.NewFakeClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	var tokens, busy float64
	lib := NewSimulatedH100(func() (float64, float64) { return tokens, busy }, capacity, clk.Now)
	s := NewSampler(NewNVMLReader(lib), clk)
	s.Simulated = true
	s.Sample()
	phases := []struct {
		name                  string
		tokensPerSec, busyPer float64
		wantPowerMw           uint32
		wantUtil              uint32
		wantEnergyMj          uint64
	}{
		{"idle", 0, 0, 70_000, 0, 60 * 70_000},
		{"saturated", capacity, 1, 700_000, 100, 60 * 700_000},
		{"half", capacity / 2, 0.5, 385_000, 50, 60 * 385_000},
	}
	var energy uint64
	for _, p := range phases {
		before := s.Reading().GPUs[0].EnergyMillijoules
		for i := 0; i < 60; i++ {
			clk.Step(time.Second)
			tokens += p.tokensPerSec
			busy += p.busyPer
			s.Sample()
		}
		g := s.Reading().GPUs[0]
		if g.PowerMilliwatts != p.wantPowerMw || g.GPUUtilPercent != p.wantUtil || g.EnergyMillijoules-before != p.wantEnergyMj {
			t.Errorf("%s: power %d mW, util %d%%, energy %d mJ; want %d, %d, %d", p.name, g.PowerMilliwatts, g.GPUUtilPercent, g.EnergyMillijoules-before, p.wantPowerMw, p.wantUtil, p.wantEnergyMj)
		}
		energy += p.wantEnergyMj
	}
	r := s.Reading()
	if !r.Simulated || r.GPUs[0].EnergyMillijoules != energy || r.GPUs[0].Name != "NVIDIA H100 80GB HBM3" {
		t.Errorf("reading %+v; want simulated, %d mJ in all", r, energy)
	}
	if c := gpucost.Summarize([]contract.Reading{r}); c.PeakMemoryBytes < 70<<30 {
		t.Errorf("peak memory %d, want vLLM's 90%% of 80 GB", c.PeakMemoryBytes)
	}
}
