package gputelemetry

import (
	"fmt"
	"io"
	"strings"

	"repot.dev/repot-operator/contract"
)

// WritePrometheus writes the latest samples and the sampler's totals in the
// Prometheus text exposition format. Metrics that dcgm-exporter also
// exports carry its names, units and labels (gpu, UUID, modelName), so
// existing dashboards work; the totals the runners use are repot_gpu_*.
// readErr is the error of the last read, exported as repot_gpu_up 0.
func WritePrometheus(w io.Writer, samples []Sample, r contract.Reading, readErr string) error {
	p := &promWriter{w: w}
	if r.Simulated {
		p.raw("# SIMULATED GPU: these readings come from repot sim-server --fake-gpu, not from any hardware.\n")
		p.family("repot_gpu_simulated", "gauge", "1: the readings on this page are SIMULATED (repot sim-server --fake-gpu).")
		p.raw("repot_gpu_simulated 1\n")
	}
	up := 1
	if readErr != "" {
		up = 0
	}
	p.family("repot_gpu_up", "gauge", "1 when the last NVML read succeeded, 0 when NVML failed or shows no GPU.")
	p.raw(fmt.Sprintf("repot_gpu_up %d\n", up))

	type metric struct {
		name, typ, help string
		value           func(Sample) (string, bool)
	}
	u := func(v uint64, ok bool) (string, bool) { return fmt.Sprint(v), ok }
	ok := func(s Sample) bool { return s.Err == "" }
	for _, m := range []metric{
		{"DCGM_FI_DEV_GPU_UTIL", "gauge", "GPU utilization (in %).", func(s Sample) (string, bool) { return u(uint64(s.GPUUtilPercent), ok(s) && s.HasUtilization) }},
		{"DCGM_FI_DEV_MEM_COPY_UTIL", "gauge", "Memory utilization (in %).", func(s Sample) (string, bool) { return u(uint64(s.MemUtilPercent), ok(s) && s.HasUtilization) }},
		{"DCGM_FI_DEV_FB_USED", "gauge", "Framebuffer memory used (in MiB).", func(s Sample) (string, bool) { return u(s.MemoryUsedBytes>>20, ok(s)) }},
		{"DCGM_FI_DEV_FB_FREE", "gauge", "Framebuffer memory free (in MiB).", func(s Sample) (string, bool) {
			return u((s.MemoryTotalBytes-min(s.MemoryUsedBytes, s.MemoryTotalBytes))>>20, ok(s))
		}},
		{"DCGM_FI_DEV_POWER_USAGE", "gauge", "Power draw (in W).", func(s Sample) (string, bool) {
			return fmt.Sprintf("%d.%03d", s.PowerMilliwatts/1000, s.PowerMilliwatts%1000), ok(s) && s.HasPower
		}},
		{"DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION", "counter", "Total energy consumption since boot (in mJ).", func(s Sample) (string, bool) { return u(s.EnergyMillijoules, ok(s) && s.HasEnergy) }},
		{"DCGM_FI_DEV_SM_CLOCK", "gauge", "SM clock frequency (in MHz).", func(s Sample) (string, bool) { return u(uint64(s.SMClockMHz), ok(s) && s.HasSMClock) }},
		{"DCGM_FI_DEV_GPU_TEMP", "gauge", "GPU temperature (in C).", func(s Sample) (string, bool) { return u(uint64(s.TemperatureC), ok(s) && s.HasTemperature) }},
		{"DCGM_FI_DEV_XID_ERRORS", "gauge", "Value of the last XID error encountered.", func(s Sample) (string, bool) { return u(s.LastXID, ok(s)) }},
		{"DCGM_FI_DEV_ECC_SBE_VOL_TOTAL", "counter", "Total number of single-bit volatile ECC errors.", func(s Sample) (string, bool) { return u(s.ECCCorrected, ok(s) && s.HasECC) }},
		{"DCGM_FI_DEV_ECC_DBE_VOL_TOTAL", "counter", "Total number of double-bit volatile ECC errors.", func(s Sample) (string, bool) { return u(s.ECCUncorrected, ok(s) && s.HasECC) }},
		{"repot_gpu_xid_errors_total", "counter", "Critical XID events seen since the telemetry started.", func(s Sample) (string, bool) { return u(s.XIDErrors, ok(s)) }},
		{"repot_gpu_lost", "gauge", "1 when the device cannot be read (NVML_ERROR_GPU_IS_LOST or another per-device failure).", func(s Sample) (string, bool) {
			if s.Err != "" {
				return "1", true
			}
			return "0", true
		}},
	} {
		p.family(m.name, m.typ, m.help)
		for _, s := range samples {
			if v, has := m.value(s); has {
				p.raw(fmt.Sprintf("%s{gpu=\"%d\",UUID=\"%s\",modelName=\"%s\"} %s\n", m.name, s.Index, labelValue(s.UUID), labelValue(s.Name), v))
			}
		}
	}
	type total struct {
		name, typ, help string
		value           func(contract.GPUTotals) uint64
	}
	for _, m := range []total{
		{"repot_gpu_energy_millijoules_total", "counter", "Energy used since the telemetry started, from the driver's energy counter deltas (counter resets handled).", func(g contract.GPUTotals) uint64 { return g.EnergyMillijoules }},
		{"repot_gpu_utilization_percent_milliseconds_total", "counter", "Integral of GPU utilization (percent) over time, in percent-milliseconds; divide by repot_gpu_sampled_milliseconds_total.", func(g contract.GPUTotals) uint64 { return g.UtilPercentMillis }},
		{"repot_gpu_sampled_milliseconds_total", "counter", "Time covered by utilization samples.", func(g contract.GPUTotals) uint64 { return g.SampledMillis }},
		{"repot_gpu_peak_memory_used_bytes", "gauge", "Peak GPU memory in use since the telemetry started.", func(g contract.GPUTotals) uint64 { return g.PeakMemoryBytes }},
	} {
		p.family(m.name, m.typ, m.help)
		for _, g := range r.GPUs {
			p.raw(fmt.Sprintf("%s{gpu=\"%d\",UUID=\"%s\",modelName=\"%s\"} %d\n", m.name, g.Index, labelValue(g.UUID), labelValue(g.Name), m.value(g)))
		}
	}
	return p.err
}

type promWriter struct {
	w   io.Writer
	err error
}

func (p *promWriter) raw(s string) {
	if p.err == nil {
		_, p.err = io.WriteString(p.w, s)
	}
}

func (p *promWriter) family(name, typ, help string) {
	p.raw(fmt.Sprintf("# HELP %s %s\n# TYPE %s %s\n", name, help, name, typ))
}

// labelValue escapes a label value as the Prometheus text format wants:
// backslash, double quote and newline only (Go's %q would also write \u and
// \x escapes, which Prometheus does not read).
var labelValue = strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", `\n`).Replace
