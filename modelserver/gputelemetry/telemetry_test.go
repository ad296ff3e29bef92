package gputelemetry

import (
	"bytes"
	"strings"
	"testing"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
	"github.com/NVIDIA/go-nvml/pkg/nvml/mock/dgxh100"
	mockserver "github.com/NVIDIA/go-nvml/pkg/nvml/mock/server"
	"github.com/google/go-cmp/cmp"

	"repot.dev/repot-operator/contract"
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
		if s.HasUtilization || s.HasPower || s.HasTemperature || s.HasEnergy || s.HasSMClock || s.HasECC || s.Err != "" {
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
		{Index: 0, UUID: "GPU-a", Name: "NVIDIA H100 80GB HBM3", MemoryUsedBytes: 10 << 20, MemoryTotalBytes: 80 << 20, HasPower: true, PowerMilliwatts: 300250},
		{Index: 1, UUID: "GPU-b", Name: "NVIDIA H100 80GB HBM3", MemoryUsedBytes: 20 << 20, MemoryTotalBytes: 80 << 20},
		{Index: 2, UUID: "GPU-c", Err: "GPU 2 is lost"},
	}
	var buf bytes.Buffer
	if err := WritePrometheus(&buf, samples, contract.Reading{GPUs: []contract.GPUTotals{{Index: 0, UUID: "GPU-a", EnergyMillijoules: 1234}}}, ""); err != nil {
		t.Fatal(err)
	}
	out := buf.String()
	for _, line := range []string{
		`DCGM_FI_DEV_FB_USED{gpu="0",UUID="GPU-a",modelName="NVIDIA H100 80GB HBM3"} 10`,
		`DCGM_FI_DEV_FB_USED{gpu="1",UUID="GPU-b",modelName="NVIDIA H100 80GB HBM3"} 20`,
		`DCGM_FI_DEV_POWER_USAGE{gpu="0",UUID="GPU-a",modelName="NVIDIA H100 80GB HBM3"} 300.250`,
		`repot_gpu_lost{gpu="2",UUID="GPU-c",modelName=""} 1`,
		`repot_gpu_energy_millijoules_total{gpu="0",UUID="GPU-a",modelName=""} 1234`,
		`repot_gpu_up 1`,
	} {
		if !strings.Contains(out, line+"\n") {
			t.Errorf("missing %q in:\n%s", line, out)
		}
	}
	for _, absent := range []string{`DCGM_FI_DEV_POWER_USAGE{gpu="1"`, `DCGM_FI_DEV_FB_USED{gpu="2"`, "SIMULATED"} {
		if strings.Contains(out, absent) {
			t.Errorf("%q written, yet that reading does not exist:\n%s", absent, out)
		}
	}
	buf.Reset()
	if err := WritePrometheus(&buf, nil, contract.Reading{Simulated: true}, "NVML sees no GPU"); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(buf.String(), "repot_gpu_simulated 1\n") || !strings.Contains(buf.String(), "repot_gpu_up 0\n") || !strings.Contains(buf.String(), "# SIMULATED GPU") {
		t.Errorf("simulated page without the marks:\n%s", buf.String())
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
	s := Sample{UUID: "GPU-é", Name: "a \"quoted\\\" name\nx", MemoryTotalBytes: 1 << 20}
	if err := WritePrometheus(&buf, []Sample{s}, contract.Reading{}, ""); err != nil {
		t.Fatal(err)
	}
	want := `DCGM_FI_DEV_FB_FREE{gpu="0",UUID="GPU-é",modelName="a \"quoted\\\" name\nx"} 1` + "\n"
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
	if err := WritePrometheus(&buf, samples, contract.Reading{}, ""); err != nil {
		t.Fatal(err)
	}
	t.Logf("%s", buf.String())
}
