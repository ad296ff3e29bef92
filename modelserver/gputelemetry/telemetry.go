// Package gputelemetry reads GPU telemetry through NVML for `repot gpu-telemetry`,
// which runs inside the vLLM container (where the GPUs are visible) as the
// parent of the vLLM process. It samples every device once a second,
// accumulates energy, utilisation and peak memory, and serves the readings
// as Prometheus metrics under dcgm-exporter's names and as a JSON contract.Reading
// that runners record in their ledgers. The NVML library sits behind
// go-nvml's nvml.Interface, so tests run against go-nvml's simulated DGX
// H100 where no GPU exists.
package gputelemetry

import (
	"errors"
	"fmt"
	"sync"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
)

// Sample is one device's readings at one moment. A reading the device does
// not support is left zero and its Has flag false. A device that stopped
// answering (fell off the bus, NVML_ERROR_GPU_IS_LOST) has Err set and
// nothing else but its index and, when known, its UUID.
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

	// HasEnergy: EnergyMillijoules is nvmlDeviceGetTotalEnergyConsumption,
	// the energy since the driver was last loaded (Volta and later).
	HasEnergy         bool
	EnergyMillijoules uint64

	HasSMClock bool
	SMClockMHz uint32

	// HasECC: the volatile (since driver load) corrected and uncorrected
	// ECC error counts; false where ECC is off or unsupported.
	HasECC         bool
	ECCCorrected   uint64
	ECCUncorrected uint64

	// XIDErrors counts the critical XID events seen since the reader
	// started, LastXID is the last one's code (0: none). Only where NVML
	// delivers XID events.
	XIDErrors uint64
	LastXID   uint64

	// Err says why the device could not be read; the other readings are
	// then unset.
	Err string
}

// Reader returns the current samples of every device.
type Reader interface {
	Read() ([]Sample, error)
}

// ErrNoGPU is returned by Read when NVML works but shows no device: the
// container was not given a GPU (no nvidia.com/gpu request, or
// NVIDIA_VISIBLE_DEVICES empty).
var ErrNoGPU = errors.New("NVML sees no GPU: the container was not given one (does the pod request nvidia.com/gpu?)")

// NVMLReader reads devices through an NVML library. Init is called on first
// use and once only; Close shuts the library down if it was started.
type NVMLReader struct {
	lib     nvml.Interface
	once    sync.Once
	started bool // set inside once: Init succeeded
	initErr error

	mu     sync.Mutex
	events nvml.EventSet // nil where XID events are unsupported
	xids   map[string]*xidCount
}

type xidCount struct{ n, last uint64 }

// NewNVMLReader returns a reader over lib (nvml.New() for the real library).
func NewNVMLReader(lib nvml.Interface) *NVMLReader { return &NVMLReader{lib: lib} }

func (r *NVMLReader) init() error {
	r.once.Do(func() {
		ret, panicked := call(r.lib.Init)
		if panicked || ret != nvml.SUCCESS {
			r.initErr = fmt.Errorf("NVML could not start (%s): is this a node with an NVIDIA driver, and is the container given the GPU?", errorString(ret, panicked))
			return
		}
		r.started = true
		r.xids = map[string]*xidCount{}
		r.watchXIDs()
	})
	return r.initErr
}

// call runs an NVML call, reporting a panic (the real library panics when
// libnvidia-ml.so.1 cannot be loaded; a simulated device panics for a
// getter it does not implement) instead of crashing.
func call(f func() nvml.Return) (ret nvml.Return, panicked bool) {
	defer func() {
		if recover() != nil {
			ret, panicked = nvml.ERROR_NOT_SUPPORTED, true
		}
	}()
	return f(), false
}

func errorString(ret nvml.Return, panicked bool) string {
	if panicked {
		return "libnvidia-ml.so.1 not found or not usable"
	}
	s := ""
	func() {
		defer func() {
			if recover() != nil {
				s = fmt.Sprintf("NVML return code %d", int32(ret))
			}
		}()
		s = nvml.ErrorString(ret)
	}()
	return s
}

// watchXIDs registers every device for critical XID events, where NVML
// supports it; without it XIDErrors stays zero.
func (r *NVMLReader) watchXIDs() {
	var set nvml.EventSet
	if ret, p := call(func() nvml.Return { var ret nvml.Return; set, ret = r.lib.EventSetCreate(); return ret }); p || ret != nvml.SUCCESS {
		return
	}
	n, ret := r.lib.DeviceGetCount()
	if ret != nvml.SUCCESS {
		return
	}
	registered := 0
	for i := 0; i < n; i++ {
		d, ret := r.lib.DeviceGetHandleByIndex(i)
		if ret != nvml.SUCCESS {
			continue
		}
		if ret, p := call(func() nvml.Return { return d.RegisterEvents(nvml.EventTypeXidCriticalError, set) }); !p && ret == nvml.SUCCESS {
			registered++
		}
	}
	if registered > 0 {
		r.events = set
	}
}

// drainXIDs counts the XID events waiting, without blocking.
func (r *NVMLReader) drainXIDs() {
	if r.events == nil {
		return
	}
	for i := 0; i < 64; i++ {
		var ev nvml.EventData
		ret, p := call(func() nvml.Return { var ret nvml.Return; ev, ret = r.events.Wait(0); return ret })
		if p || ret != nvml.SUCCESS || ev.Device == nil {
			return
		}
		uuid, ret := ev.Device.GetUUID()
		if ret != nvml.SUCCESS {
			continue
		}
		c := r.xids[uuid]
		if c == nil {
			c = &xidCount{}
			r.xids[uuid] = c
		}
		c.n++
		c.last = ev.EventData
	}
}

// Close shuts NVML down if Read started it; a reader never read from does
// not start NVML just to stop it. Call it once, after the last Read.
func (r *NVMLReader) Close() {
	r.once.Do(func() { r.initErr = errors.New("NVML reader is closed") })
	if r.started {
		r.started = false
		if r.events != nil {
			_, _ = call(r.events.Free) // nothing to do about a failed release at close
		}
		_, _ = call(r.lib.Shutdown)
	}
}

// Read samples every device. It fails when NVML cannot start or shows no
// device; a single device that cannot be read is a Sample with Err set.
func (r *NVMLReader) Read() ([]Sample, error) {
	if err := r.init(); err != nil {
		return nil, err
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	n, ret := r.lib.DeviceGetCount()
	if ret != nvml.SUCCESS {
		return nil, fmt.Errorf("NVML device count: %s", errorString(ret, false))
	}
	if n == 0 {
		return nil, ErrNoGPU
	}
	r.drainXIDs()
	out := make([]Sample, 0, n)
	for i := 0; i < n; i++ {
		d, ret := r.lib.DeviceGetHandleByIndex(i)
		if ret != nvml.SUCCESS {
			out = append(out, Sample{Index: i, Err: deviceError(i, "handle", ret)})
			continue
		}
		s := sample(i, d)
		if c := r.xids[s.UUID]; c != nil {
			s.XIDErrors, s.LastXID = c.n, c.last
		}
		out = append(out, s)
	}
	return out, nil
}

// deviceError words a failed NVML call on device i; a lost GPU says so.
func deviceError(i int, what string, ret nvml.Return) string {
	if ret == nvml.ERROR_GPU_IS_LOST {
		return fmt.Sprintf("GPU %d is lost (NVML_ERROR_GPU_IS_LOST reading its %s): it fell off the bus or stopped answering; the node needs attention", i, what)
	}
	return fmt.Sprintf("GPU %d: reading its %s: %s", i, what, errorString(ret, false))
}

// optional calls one NVML getter that a device may not support. It reports
// false for "not supported" (and for getters a simulated device leaves unset).
func optional(get func() nvml.Return) bool {
	ret, panicked := call(get)
	return !panicked && ret == nvml.SUCCESS
}

func sample(i int, d nvml.Device) Sample {
	s := Sample{Index: i}
	var ret nvml.Return
	if s.UUID, ret = d.GetUUID(); ret != nvml.SUCCESS {
		return Sample{Index: i, Err: deviceError(i, "UUID", ret)}
	}
	if s.Name, ret = d.GetName(); ret != nvml.SUCCESS {
		return Sample{Index: i, UUID: s.UUID, Err: deviceError(i, "name", ret)}
	}
	mem, ret := d.GetMemoryInfo()
	if ret != nvml.SUCCESS {
		return Sample{Index: i, UUID: s.UUID, Err: deviceError(i, "memory", ret)}
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
	s.HasEnergy = optional(func() nvml.Return {
		mj, ret := d.GetTotalEnergyConsumption()
		if ret == nvml.SUCCESS {
			s.EnergyMillijoules = mj
		}
		return ret
	})
	s.HasSMClock = optional(func() nvml.Return {
		mhz, ret := d.GetClockInfo(nvml.CLOCK_SM)
		if ret == nvml.SUCCESS {
			s.SMClockMHz = mhz
		}
		return ret
	})
	s.HasECC = optional(func() nvml.Return {
		c, ret := d.GetTotalEccErrors(nvml.MEMORY_ERROR_TYPE_CORRECTED, nvml.VOLATILE_ECC)
		if ret != nvml.SUCCESS {
			return ret
		}
		u, ret := d.GetTotalEccErrors(nvml.MEMORY_ERROR_TYPE_UNCORRECTED, nvml.VOLATILE_ECC)
		if ret == nvml.SUCCESS {
			s.ECCCorrected, s.ECCUncorrected = c, u
		}
		return ret
	})
	return s
}
