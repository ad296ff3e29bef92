package gputelemetry

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"strconv"
	"sync"
	"time"

	"k8s.io/utils/clock"

	"repot.dev/repot-operator/contract"
)

// Sampler reads every device at a fixed interval and accumulates, per GPU,
// the energy used, the utilisation integral, the peak memory and the error
// counts since it started. Its contract.Reading is what runners record.
type Sampler struct {
	Reader Reader
	Clock  clock.WithTicker
	// Interval between samples; default one second.
	Interval time.Duration
	// Simulated marks readings of a simulated GPU (repot sim-server
	// --fake-gpu); they say so wherever they appear.
	Simulated bool

	mu       sync.Mutex
	instance string
	started  time.Time
	last     []Sample
	lastErr  string
	gpus     map[string]*gpuTotals // by UUID
	order    []string
	samples  int64
}

type gpuTotals struct {
	contract.GPUTotals
	prevAt     time.Time
	prevEnergy uint64
	havePrev   bool
}

// NewSampler returns a sampler over r with a fresh instance id: readings of
// different sampler lifetimes (a restarted server) are never subtracted
// from each other.
func NewSampler(r Reader, clk clock.WithTicker) *Sampler {
	if clk == nil {
		clk = clock.RealClock{}
	}
	var id [8]byte
	_, _ = rand.Read(id[:])
	return &Sampler{Reader: r, Clock: clk, instance: hex.EncodeToString(id[:]), started: clk.Now(), gpus: map[string]*gpuTotals{}}
}

// Run samples until ctx ends.
func (s *Sampler) Run(ctx context.Context) {
	iv := s.Interval
	if iv <= 0 {
		iv = time.Second
	}
	s.Sample()
	t := s.Clock.NewTicker(iv)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C():
			s.Sample()
		}
	}
}

// Sample reads every device once and adds what happened since the previous
// sample. Energy comes from the total-energy counter's delta; a counter
// that went backwards was reset (driver reload), and the delta is then the
// new value. A device without the counter is integrated from its power.
func (s *Sampler) Sample() {
	samples, err := s.Reader.Read()
	now := s.Clock.Now()
	s.mu.Lock()
	defer s.mu.Unlock()
	s.samples++
	if err != nil {
		s.lastErr = err.Error()
		s.last = nil
		return
	}
	s.lastErr = ""
	s.last = samples
	for _, x := range samples {
		key := x.UUID
		if key == "" {
			key = "index-" + strconv.Itoa(x.Index)
		}
		g := s.gpus[key]
		if g == nil {
			g = &gpuTotals{GPUTotals: contract.GPUTotals{UUID: x.UUID, Index: x.Index, Name: x.Name}}
			s.gpus[key] = g
			s.order = append(s.order, key)
		}
		if x.Err != "" {
			g.Error = x.Err
			g.havePrev = false
			continue
		}
		g.Error = ""
		g.Name = x.Name
		g.MemoryUsedBytes, g.MemoryTotalBytes = x.MemoryUsedBytes, x.MemoryTotalBytes
		g.PeakMemoryBytes = max(g.PeakMemoryBytes, x.MemoryUsedBytes)
		g.PowerMilliwatts, g.GPUUtilPercent, g.SMClockMHz = x.PowerMilliwatts, x.GPUUtilPercent, x.SMClockMHz
		g.ECCCorrected, g.ECCUncorrected = x.ECCCorrected, x.ECCUncorrected
		g.XIDErrors, g.LastXID = x.XIDErrors, x.LastXID
		if g.havePrev {
			dtMs := now.Sub(g.prevAt).Milliseconds()
			if dtMs < 0 {
				dtMs = 0
			}
			if x.HasUtilization {
				g.UtilPercentMillis += uint64(x.GPUUtilPercent) * uint64(dtMs)
				g.SampledMillis += uint64(dtMs)
			}
			switch {
			case x.HasEnergy && x.EnergyMillijoules >= g.prevEnergy:
				g.EnergyMillijoules += x.EnergyMillijoules - g.prevEnergy
			case x.HasEnergy:
				g.EnergyMillijoules += x.EnergyMillijoules
				g.EnergyCounterResets++
			case x.HasPower:
				g.EnergyMillijoules += uint64(x.PowerMilliwatts) * uint64(dtMs) / 1000
				g.EnergyFromPower = true
			}
		}
		g.prevAt, g.prevEnergy, g.havePrev = now, x.EnergyMillijoules, true
	}
}

// Latest returns the last sample of each device and the error of the last
// read ("" when it succeeded).
func (s *Sampler) Latest() ([]Sample, string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Sample(nil), s.last...), s.lastErr
}

// Reading returns the totals so far.
func (s *Sampler) Reading() contract.Reading {
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.Clock.Now()
	r := contract.Reading{
		Instance:     s.instance,
		Simulated:    s.Simulated,
		At:           now.UTC().Truncate(time.Millisecond),
		UptimeMillis: now.Sub(s.started).Milliseconds(),
		Error:        s.lastErr,
	}
	for _, k := range s.order {
		r.GPUs = append(r.GPUs, s.gpus[k].GPUTotals)
	}
	return r
}
