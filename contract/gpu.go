package contract

import (
	"encoding/json"
	"errors"
	"fmt"
	"time"
)

// Reading is the totals of one telemetry process (one server's lifetime)
// at one moment: what `repot gpu-telemetry` serves at /telemetry and what
// a runner records, with Model, Shard and Phase filled in, at the start and
// the end of its shard. Every counter is cumulative since the process
// started, so two readings of the same Instance subtract.
type Reading struct {
	// Model, Shard and Phase ("start" or "end") are set by the runner.
	Model string `json:"model,omitempty"`
	Shard int    `json:"shard"`
	Phase string `json:"phase,omitempty"`

	// Instance identifies the telemetry process; a restarted server has a
	// new one.
	Instance string `json:"instance"`
	// Simulated marks readings of a simulated GPU (repot sim-server
	// --fake-gpu): not a measurement of any hardware.
	Simulated bool      `json:"simulated,omitempty"`
	At        time.Time `json:"at"`
	// UptimeMillis is how long the process (and so the GPUs it holds) has
	// been running.
	UptimeMillis int64       `json:"uptime_ms"`
	GPUs         []GPUTotals `json:"gpus"`
	// Error is the last read's error (NVML failed or shows no GPU).
	Error string `json:"error,omitempty"`
}

// GPUTotals is one device's totals since the telemetry process started,
// and its last instantaneous values.
type GPUTotals struct {
	Index int    `json:"index"`
	UUID  string `json:"uuid"`
	Name  string `json:"name,omitempty"`

	EnergyMillijoules uint64 `json:"energy_mj"`
	// EnergyCounterResets counts times the driver's energy counter went
	// backwards (a driver reload); the energy is still complete.
	EnergyCounterResets uint64 `json:"energy_counter_resets,omitempty"`
	// EnergyFromPower: the device has no energy counter, so energy was
	// integrated from one-second power readings.
	EnergyFromPower bool `json:"energy_from_power,omitempty"`
	// UtilPercentMillis is the integral of utilisation (percent) over
	// SampledMillis milliseconds: their ratio is the mean utilisation.
	UtilPercentMillis uint64 `json:"util_percent_ms"`
	SampledMillis     uint64 `json:"sampled_ms"`
	PeakMemoryBytes   uint64 `json:"peak_memory_bytes"`

	MemoryUsedBytes  uint64 `json:"memory_used_bytes"`
	MemoryTotalBytes uint64 `json:"memory_total_bytes"`
	PowerMilliwatts  uint32 `json:"power_mw"`
	GPUUtilPercent   uint32 `json:"util_percent"`
	SMClockMHz       uint32 `json:"sm_clock_mhz"`

	ECCCorrected   uint64 `json:"ecc_corrected,omitempty"`
	ECCUncorrected uint64 `json:"ecc_uncorrected,omitempty"`
	XIDErrors      uint64 `json:"xid_errors,omitempty"`
	LastXID        uint64 `json:"last_xid,omitempty"`
	// Error is set while the device cannot be read (a lost GPU).
	Error string `json:"error,omitempty"`
}

// Phases of a runner's readings.
const (
	PhaseStart = "start"
	PhaseEnd   = "end"
)

// ParseReading parses one line of a readings file. It rejects what would
// corrupt the sums: no instance, a negative shard, or more than 64 GPUs.
func ParseReading(line []byte) (Reading, error) {
	var r Reading
	if err := json.Unmarshal(line, &r); err != nil {
		return r, err
	}
	switch {
	case r.Instance == "":
		return r, errors.New("reading lacks instance")
	case r.Shard < 0:
		return r, fmt.Errorf("reading has negative shard %d", r.Shard)
	case len(r.GPUs) > 64:
		return r, fmt.Errorf("reading lists %d GPUs, more than 64", len(r.GPUs))
	case r.Phase != "" && r.Phase != PhaseStart && r.Phase != PhaseEnd:
		return r, fmt.Errorf("reading has phase %q, want start or end", r.Phase)
	}
	return r, nil
}
