package gputelemetry

import (
	"math"
	"sync"
	"time"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
	"github.com/NVIDIA/go-nvml/pkg/nvml/mock/dgxh100"
	"github.com/NVIDIA/go-nvml/pkg/nvml/mock/gpus"
	mockserver "github.com/NVIDIA/go-nvml/pkg/nvml/mock/server"
)

// The H100 SXM envelope the SIMULATED GPU follows.
const (
	SimIdleMilliwatts = 70_000
	SimFullMilliwatts = 700_000
	simIdleSMClockMHz = 345
	simFullSMClockMHz = 1980
	// simMemoryFraction is what vLLM takes at start with its default
	// --gpu-memory-utilization 0.9: weights, activations and the KV cache.
	simMemoryFraction = 0.9
)

// DecodeLoad reports a simulated server's cumulative decode work: tokens
// decoded and real seconds during which a sequence was decoding.
type DecodeLoad func() (tokens, busySeconds float64)

// NewSimulatedH100 returns go-nvml's mock of one H100 SXM 80GB whose
// readings follow load: utilisation is the share of time a sequence was
// decoding, power goes from 70 W idle to 700 W at capacity tokens per
// second, the energy counter integrates that power, and memory holds what
// vLLM reserves at start. It is a SIMULATION: its readings say nothing about
// any real GPU. now is time.Now outside tests.
func NewSimulatedH100(load DecodeLoad, capacity float64, now func() time.Time) *mockserver.Server {
	lib := dgxh100.NewWithGPUs(gpus.H100_SXM5_80GB)
	sim := &simGPU{load: load, capacity: capacity, now: now, last: now(), energy: 86_400_000}
	sim.lastTokens, sim.lastBusy = load()
	d := lib.Devices[0].(*mockserver.Device)
	total := d.MemoryInfo.Total
	used := uint64(float64(total) * simMemoryFraction)
	d.GetMemoryInfoFunc = func() (nvml.Memory, nvml.Return) {
		return nvml.Memory{Total: total, Used: used, Free: total - used}, nvml.SUCCESS
	}
	d.GetUtilizationRatesFunc = func() (nvml.Utilization, nvml.Return) {
		s := sim.advance()
		return nvml.Utilization{Gpu: s.util, Memory: s.util / 2}, nvml.SUCCESS
	}
	d.GetPowerUsageFunc = func() (uint32, nvml.Return) { return sim.advance().power, nvml.SUCCESS }
	d.GetTotalEnergyConsumptionFunc = func() (uint64, nvml.Return) { return sim.advance().energy, nvml.SUCCESS }
	d.GetClockInfoFunc = func(t nvml.ClockType) (uint32, nvml.Return) {
		if t != nvml.CLOCK_SM {
			return 0, nvml.ERROR_NOT_SUPPORTED
		}
		if sim.advance().load > 0 {
			return simFullSMClockMHz, nvml.SUCCESS
		}
		return simIdleSMClockMHz, nvml.SUCCESS
	}
	d.GetTemperatureFunc = func(nvml.TemperatureSensors) (uint32, nvml.Return) {
		return 30 + uint32(40*sim.advance().load), nvml.SUCCESS
	}
	d.GetTotalEccErrorsFunc = func(nvml.MemoryErrorType, nvml.EccCounterType) (uint64, nvml.Return) { return 0, nvml.SUCCESS }
	return lib
}

type simGPU struct {
	load     DecodeLoad
	capacity float64
	now      func() time.Time

	mu                   sync.Mutex
	last                 time.Time
	lastTokens, lastBusy float64
	state                simState
	energy               uint64 // mJ since the simulated driver load
}

type simState struct {
	load   float64
	util   uint32
	power  uint32
	energy uint64
}

// minStep is the shortest interval over which load is measured; readings in
// between repeat the last state.
const minStep = 200 * time.Millisecond

func (s *simGPU) advance() simState {
	s.mu.Lock()
	defer s.mu.Unlock()
	t := s.now()
	dt := t.Sub(s.last)
	if dt < minStep {
		s.state.energy = s.energy
		return s.state
	}
	tokens, busy := s.load()
	secs := dt.Seconds()
	load := 0.0
	if s.capacity > 0 {
		load = math.Min(1, math.Max(0, (tokens-s.lastTokens)/(s.capacity*secs)))
	}
	util := math.Min(1, math.Max(0, (busy-s.lastBusy)/secs))
	if tokens > s.lastTokens && util == 0 { // answers at once (latency scale 0)
		util = load
	}
	power := float64(SimIdleMilliwatts) + load*float64(SimFullMilliwatts-SimIdleMilliwatts)
	s.energy += uint64(power * secs)
	s.last, s.lastTokens, s.lastBusy = t, tokens, busy
	s.state = simState{load: load, util: uint32(math.Round(util * 100)), power: uint32(power), energy: s.energy}
	return s.state
}
