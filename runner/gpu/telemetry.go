// Package gpu reads GPU telemetry through NVML for the `repot gpu-telemetry`
// sidecar of vLLM server pods, and serves it in the Prometheus text format.
// The NVML library sits behind go-nvml's nvml.Interface, so tests run against
// go-nvml's simulated DGX H100 where no GPU exists.
package gpu

import (
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
)

// Sample is one device's readings at one moment. A reading the device does
// not support is left zero and its Has flag false.
type Sample struct {
	Index            int
	UUID             string
	Name             string
	MemoryUsedBytes  uint64
	MemoryTotalBytes uint64

	HasUtilization bool
	GPUUtilPercent uint32
	MemUtilPercent uint32

	HasPower        bool
	PowerMilliwatts uint32

	HasTemperature bool
	TemperatureC   uint32
}

// Reader returns the current samples of every device.
type Reader interface {
	Read() ([]Sample, error)
}

// NVMLReader reads devices through an NVML library. Init is called on first
// use and once only; Close shuts the library down if it was started.
type NVMLReader struct {
	lib     nvml.Interface
	once    sync.Once
	started bool // set inside once: Init succeeded
	initErr error
}

// NewNVMLReader returns a reader over lib (nvml.New() for the real library).
func NewNVMLReader(lib nvml.Interface) *NVMLReader { return &NVMLReader{lib: lib} }

func (r *NVMLReader) init() error {
	r.once.Do(func() {
		if ret := r.lib.Init(); ret != nvml.SUCCESS {
			r.initErr = fmt.Errorf("NVML could not start (%s): is this a node with an NVIDIA driver, and is the container given the GPU?", nvml.ErrorString(ret))
			return
		}
		r.started = true
	})
	return r.initErr
}

// Close shuts NVML down if Read started it; a reader never read from does
// not start NVML just to stop it. Call it once, after the last Read.
func (r *NVMLReader) Close() {
	r.once.Do(func() { r.initErr = errors.New("NVML reader is closed") })
	if r.started {
		r.started = false
		r.lib.Shutdown()
	}
}

// Read samples every device.
func (r *NVMLReader) Read() ([]Sample, error) {
	if err := r.init(); err != nil {
		return nil, err
	}
	n, ret := r.lib.DeviceGetCount()
	if ret != nvml.SUCCESS {
		return nil, fmt.Errorf("NVML device count: %s", nvml.ErrorString(ret))
	}
	out := make([]Sample, 0, n)
	for i := 0; i < n; i++ {
		d, ret := r.lib.DeviceGetHandleByIndex(i)
		if ret != nvml.SUCCESS {
			return nil, fmt.Errorf("NVML device %d: %s", i, nvml.ErrorString(ret))
		}
		s, err := sample(i, d)
		if err != nil {
			return nil, err
		}
		out = append(out, s)
	}
	return out, nil
}

// optional calls one NVML getter that a device may not support. It reports
// false for "not supported" (and for getters a simulated device leaves unset).
func optional(get func() nvml.Return) (ok bool) {
	defer func() {
		if recover() != nil {
			ok = false
		}
	}()
	return get() == nvml.SUCCESS
}

func sample(i int, d nvml.Device) (Sample, error) {
	s := Sample{Index: i}
	var ret nvml.Return
	if s.UUID, ret = d.GetUUID(); ret != nvml.SUCCESS {
		return s, fmt.Errorf("NVML device %d UUID: %s", i, nvml.ErrorString(ret))
	}
	if s.Name, ret = d.GetName(); ret != nvml.SUCCESS {
		return s, fmt.Errorf("NVML device %d name: %s", i, nvml.ErrorString(ret))
	}
	mem, ret := d.GetMemoryInfo()
	if ret != nvml.SUCCESS {
		return s, fmt.Errorf("NVML device %d memory: %s", i, nvml.ErrorString(ret))
	}
	s.MemoryUsedBytes, s.MemoryTotalBytes = mem.Used, mem.Total
	// Readings are kept only when the getter succeeds: an unsupported
	// reading stays zero, as Sample promises.
	s.HasUtilization = optional(func() nvml.Return {
		u, ret := d.GetUtilizationRates()
		if ret == nvml.SUCCESS {
			s.GPUUtilPercent, s.MemUtilPercent = u.Gpu, u.Memory
		}
		return ret
	})
	s.HasPower = optional(func() nvml.Return {
		mw, ret := d.GetPowerUsage()
		if ret == nvml.SUCCESS {
			s.PowerMilliwatts = mw
		}
		return ret
	})
	s.HasTemperature = optional(func() nvml.Return {
		c, ret := d.GetTemperature(nvml.TEMPERATURE_GPU)
		if ret == nvml.SUCCESS {
			s.TemperatureC = c
		}
		return ret
	})
	return s, nil
}

// WritePrometheus writes the samples in the Prometheus text exposition format.
func WritePrometheus(w io.Writer, samples []Sample) error {
	type metric struct {
		name, help string
		value      func(Sample) (uint64, bool)
	}
	metrics := []metric{
		{"repot_gpu_memory_used_bytes", "GPU memory in use.", func(s Sample) (uint64, bool) { return s.MemoryUsedBytes, true }},
		{"repot_gpu_memory_total_bytes", "GPU memory in all.", func(s Sample) (uint64, bool) { return s.MemoryTotalBytes, true }},
		{"repot_gpu_utilization_percent", "Share of time a kernel ran.", func(s Sample) (uint64, bool) { return uint64(s.GPUUtilPercent), s.HasUtilization }},
		{"repot_gpu_memory_utilization_percent", "Share of time memory was read or written.", func(s Sample) (uint64, bool) { return uint64(s.MemUtilPercent), s.HasUtilization }},
		{"repot_gpu_power_milliwatts", "Power draw.", func(s Sample) (uint64, bool) { return uint64(s.PowerMilliwatts), s.HasPower }},
		{"repot_gpu_temperature_celsius", "GPU core temperature.", func(s Sample) (uint64, bool) { return uint64(s.TemperatureC), s.HasTemperature }},
	}
	for _, m := range metrics {
		if _, err := fmt.Fprintf(w, "# HELP %s %s\n# TYPE %s gauge\n", m.name, m.help, m.name); err != nil {
			return err
		}
		for _, s := range samples {
			v, ok := m.value(s)
			if !ok {
				continue
			}
			if _, err := fmt.Fprintf(w, "%s{gpu=\"%d\",uuid=\"%s\",name=\"%s\"} %d\n", m.name, s.Index, labelValue(s.UUID), labelValue(s.Name), v); err != nil {
				return err
			}
		}
	}
	return nil
}

// labelValue escapes a label value as the Prometheus text format wants:
// backslash, double quote and newline only (Go's %q would also write \u and
// \x escapes, which Prometheus does not read).
var labelValue = strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", `\n`).Replace
