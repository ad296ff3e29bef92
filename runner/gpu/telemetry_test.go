package gpu

import (
	"bytes"
	"strings"
	"testing"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
	"github.com/NVIDIA/go-nvml/pkg/nvml/mock/dgxh100"
	mockserver "github.com/NVIDIA/go-nvml/pkg/nvml/mock/server"
	"github.com/google/go-cmp/cmp"
)

// The tests run against go-nvml's simulated DGX H100 (eight H100 80GB): no
// GPU exists on the machines that run the test suite.

func TestReadSimulatedDGXH100(t *testing.T) {
	server := dgxh100.New()
	r := NewNVMLReader(server)
	samples, err := r.Read()
	if err != nil {
		t.Fatal(err)
	}
	if len(samples) != 8 {
		t.Fatalf("got %d devices, want the 8 of a DGX H100", len(samples))
	}
	for i, s := range samples {
		if s.Index != i || !strings.Contains(s.Name, "H100") || s.UUID == "" || s.MemoryTotalBytes == 0 {
			t.Errorf("device %d: %+v", i, s)
		}
		if s.HasUtilization || s.HasPower || s.HasTemperature {
			t.Errorf("device %d reports readings the simulation does not provide: %+v", i, s)
		}
	}
}

func TestReadOptionalReadings(t *testing.T) {
	server := dgxh100.New()
	mockDev := server.Devices[0].(*mockserver.Device)
	mockDev.GetUtilizationRatesFunc = func() (nvml.Utilization, nvml.Return) {
		return nvml.Utilization{Gpu: 87, Memory: 40}, nvml.SUCCESS
	}
	mockDev.GetPowerUsageFunc = func() (uint32, nvml.Return) { return 512000, nvml.SUCCESS }
	// A failing getter's value must not leak into the sample.
	mockDev.GetTemperatureFunc = func(nvml.TemperatureSensors) (uint32, nvml.Return) { return 99, nvml.ERROR_NOT_SUPPORTED }
	samples, err := NewNVMLReader(server).Read()
	if err != nil {
		t.Fatal(err)
	}
	got := samples[0]
	want := Sample{
		Index: 0, UUID: got.UUID, Name: got.Name, MemoryUsedBytes: got.MemoryUsedBytes, MemoryTotalBytes: got.MemoryTotalBytes,
		HasUtilization: true, GPUUtilPercent: 87, MemUtilPercent: 40,
		HasPower: true, PowerMilliwatts: 512000,
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("sample (-want +got):\n%s", diff)
	}
}

func TestInitFailureIsClear(t *testing.T) {
	server := dgxh100.New()
	server.InitFunc = func() nvml.Return { return nvml.ERROR_LIBRARY_NOT_FOUND }
	_, err := NewNVMLReader(server).Read()
	if err == nil || !strings.Contains(err.Error(), "NVIDIA driver") {
		t.Fatalf("err = %v, want a message about the driver", err)
	}
}

func TestWritePrometheus(t *testing.T) {
	samples := []Sample{
		{Index: 0, UUID: "GPU-a", Name: "NVIDIA H100 80GB HBM3", MemoryUsedBytes: 10, MemoryTotalBytes: 80, HasPower: true, PowerMilliwatts: 300000},
		{Index: 1, UUID: "GPU-b", Name: "NVIDIA H100 80GB HBM3", MemoryUsedBytes: 20, MemoryTotalBytes: 80},
	}
	var buf bytes.Buffer
	if err := WritePrometheus(&buf, samples); err != nil {
		t.Fatal(err)
	}
	out := buf.String()
	for _, line := range []string{
		`repot_gpu_memory_used_bytes{gpu="0",uuid="GPU-a",name="NVIDIA H100 80GB HBM3"} 10`,
		`repot_gpu_memory_used_bytes{gpu="1",uuid="GPU-b",name="NVIDIA H100 80GB HBM3"} 20`,
		`repot_gpu_power_milliwatts{gpu="0",uuid="GPU-a",name="NVIDIA H100 80GB HBM3"} 300000`,
	} {
		if !strings.Contains(out, line+"\n") {
			t.Errorf("missing %q in:\n%s", line, out)
		}
	}
	if strings.Contains(out, `repot_gpu_power_milliwatts{gpu="1"`) {
		t.Errorf("device 1 has no power reading, yet one was written:\n%s", out)
	}
}

// countingNVML counts Init and Shutdown calls of the simulated library.
type countingNVML struct {
	nvml.Interface
	inits, shutdowns int
	initRet          nvml.Return
}

func (c *countingNVML) Init() nvml.Return {
	c.inits++
	if c.initRet != nvml.SUCCESS {
		return c.initRet
	}
	return c.Interface.Init()
}

func (c *countingNVML) Shutdown() nvml.Return { c.shutdowns++; return nvml.SUCCESS }

func TestCloseShutsDownOnlyWhatReadStarted(t *testing.T) {
	tests := []struct {
		name                   string
		read                   bool
		initRet                nvml.Return
		wantInits, wantShutdns int
	}{
		{"never read", false, nvml.SUCCESS, 0, 0},
		{"read", true, nvml.SUCCESS, 1, 1},
		{"init failed", true, nvml.ERROR_LIBRARY_NOT_FOUND, 1, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			lib := &countingNVML{Interface: dgxh100.New(), initRet: tc.initRet}
			r := NewNVMLReader(lib)
			if tc.read {
				_, _ = r.Read()
				_, _ = r.Read()
			}
			r.Close()
			if lib.inits != tc.wantInits || lib.shutdowns != tc.wantShutdns {
				t.Errorf("Init called %d times, Shutdown %d; want %d and %d", lib.inits, lib.shutdowns, tc.wantInits, tc.wantShutdns)
			}
			if _, err := r.Read(); err == nil && !tc.read {
				t.Error("Read after Close of an unread reader succeeded")
			}
		})
	}
}

func TestWritePrometheusEscapesLabels(t *testing.T) {
	var buf bytes.Buffer
	s := Sample{UUID: "GPU-é", Name: "a \"quoted\\\" name\nx", MemoryTotalBytes: 1}
	if err := WritePrometheus(&buf, []Sample{s}); err != nil {
		t.Fatal(err)
	}
	want := `repot_gpu_memory_total_bytes{gpu="0",uuid="GPU-é",name="a \"quoted\\\" name\nx"} 1` + "\n"
	if !strings.Contains(buf.String(), want) {
		t.Errorf("missing %q in:\n%s", want, buf.String())
	}
}

// TestReadRealNVML reads the machine's own GPUs through the real library;
// it skips where no NVIDIA driver is installed (the CI machines).
func TestReadRealNVML(t *testing.T) {
	r := NewNVMLReader(nvml.New())
	defer r.Close()
	samples, err := r.Read()
	if err != nil {
		t.Skipf("no usable NVML here: %v", err)
	}
	if len(samples) == 0 {
		t.Skip("NVML reports no GPU")
	}
	for _, s := range samples {
		if s.UUID == "" || s.Name == "" || s.MemoryTotalBytes == 0 || s.MemoryUsedBytes > s.MemoryTotalBytes {
			t.Errorf("implausible reading %+v", s)
		}
	}
	var buf bytes.Buffer
	if err := WritePrometheus(&buf, samples); err != nil {
		t.Fatal(err)
	}
	t.Logf("%s", buf.String())
}
