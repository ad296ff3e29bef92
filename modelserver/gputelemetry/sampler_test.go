package gputelemetry

import (
	"strings"
	"testing"
	"time"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
	"github.com/NVIDIA/go-nvml/pkg/nvml/mock/dgxh100"
	mockserver "github.com/NVIDIA/go-nvml/pkg/nvml/mock/server"
	"github.com/google/go-cmp/cmp"
	clocktesting "k8s.io/utils/clock/testing"

	"repot.dev/repot-operator/contract"
)

// scripted gives device 0 of a simulated DGX H100 readings that change on
// every call of step, from the tables of each test.
type scripted struct {
	energy  []uint64 // mJ, nvmlDeviceGetTotalEnergyConsumption
	power   []uint32 // mW
	util    []uint32 // %
	memUsed []uint64 // bytes
	lost    []bool
	i       int
}

func (s *scripted) install(d *mockserver.Device) {
	at := func(i int) int { return min(s.i, i-1) }
	if s.energy != nil {
		d.GetTotalEnergyConsumptionFunc = func() (uint64, nvml.Return) { return s.energy[at(len(s.energy))], nvml.SUCCESS }
	}
	if s.power != nil {
		d.GetPowerUsageFunc = func() (uint32, nvml.Return) { return s.power[at(len(s.power))], nvml.SUCCESS }
	}
	if s.util != nil {
		d.GetUtilizationRatesFunc = func() (nvml.Utilization, nvml.Return) {
			return nvml.Utilization{Gpu: s.util[at(len(s.util))]}, nvml.SUCCESS
		}
	}
	mem := d.MemoryInfo
	d.GetMemoryInfoFunc = func() (nvml.Memory, nvml.Return) {
		if s.lost != nil && s.lost[at(len(s.lost))] {
			return nvml.Memory{}, nvml.ERROR_GPU_IS_LOST
		}
		m := mem
		if s.memUsed != nil {
			m.Used = s.memUsed[at(len(s.memUsed))]
		}
		return m, nvml.SUCCESS
	}
}

func TestSamplerAccumulates(t *testing.T) {
	const gib = 1 << 30
	tests := []struct {
		name   string
		script scripted
		want   contract.GPUTotals // of device 0, name/uuid/memory total filled in by the test
	}{
		{
			name:   "energy counter deltas",
			script: scripted{energy: []uint64{5_000_000, 5_700_000, 6_400_000, 6_470_000}, util: []uint32{0, 100, 100, 10}, power: []uint32{70_000, 700_000, 700_000, 70_000}},
			want:   contract.GPUTotals{EnergyMillijoules: 1_470_000, UtilPercentMillis: 210 * 1000, SampledMillis: 3000, PowerMilliwatts: 70_000, GPUUtilPercent: 10},
		},
		{
			name: "counter reset between samples",
			// 5.7 MJ -> reset -> 200 J since the reload -> +300 J.
			script: scripted{energy: []uint64{5_000_000, 5_700_000, 200_000, 500_000}},
			want:   contract.GPUTotals{EnergyMillijoules: 700_000 + 200_000 + 300_000, EnergyCounterResets: 1},
		},
		{
			name:   "no energy counter: integrated from power",
			script: scripted{power: []uint32{100_000, 300_000, 300_000, 500_000}},
			want:   contract.GPUTotals{EnergyMillijoules: 300_000 + 300_000 + 500_000, EnergyFromPower: true, PowerMilliwatts: 500_000},
		},
		{
			name:   "peak memory",
			script: scripted{memUsed: []uint64{1 * gib, 60 * gib, 70 * gib, 65 * gib}},
			want:   contract.GPUTotals{PeakMemoryBytes: 70 * gib, MemoryUsedBytes: 65 * gib},
		},
		{
			name:   "GPU lost mid-run keeps the totals so far",
			script: scripted{energy: []uint64{1_000, 2_000, 3_000, 4_000}, lost: []bool{false, false, true, true}},
			want:   contract.GPUTotals{EnergyMillijoules: 1_000, Error: "GPU 0 is lost (NVML_ERROR_GPU_IS_LOST reading its memory): it fell off the bus or stopped answering; the node needs attention"},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			server := dgxh100.New()
			dev := server.Devices[0].(*mockserver.Device)
			sc := tc.script
			sc.install(dev)
			clk := clocktesting.NewFakeClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
			s := NewSampler(NewNVMLReader(server), clk)
			for sc.i = 0; sc.i < 4; sc.i++ {
				s.Sample()
				clk.Step(time.Second)
			}
			r := s.Reading()
			if r.UptimeMillis != 4000 || len(r.GPUs) != 8 || r.Instance == "" {
				t.Fatalf("reading: uptime %d, %d GPUs, instance %q", r.UptimeMillis, len(r.GPUs), r.Instance)
			}
			got := r.GPUs[0]
			want := tc.want
			want.UUID = dev.UUID
			if got.Error == "" {
				want.Name, want.MemoryTotalBytes = got.Name, dev.MemoryInfo.Total
				if want.MemoryUsedBytes == 0 {
					want.MemoryUsedBytes = got.MemoryUsedBytes
				}
			} else {
				want.Name, want.MemoryTotalBytes, want.MemoryUsedBytes = got.Name, got.MemoryTotalBytes, got.MemoryUsedBytes
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("GPU 0 totals (-want +got):\n%s", diff)
			}
		})
	}
}

func TestSamplerNoGPUAndNoDriver(t *testing.T) {
	tests := []struct {
		name    string
		setup   func(*mockserver.Server)
		wantErr string
	}{
		{"no driver", func(s *mockserver.Server) { s.InitFunc = func() nvml.Return { return nvml.ERROR_LIBRARY_NOT_FOUND } }, "NVIDIA driver"},
		{"library panics", func(s *mockserver.Server) {
			s.InitFunc = func() nvml.Return { panic("libnvidia-ml.so.1: cannot open") }
		}, "libnvidia-ml.so.1 not found"},
		{"no GPU visible", func(s *mockserver.Server) {
			s.DeviceGetCountFunc = func() (int, nvml.Return) { return 0, nvml.SUCCESS }
		}, "sees no GPU"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			server := dgxh100.New()
			tc.setup(server)
			s := NewSampler(NewNVMLReader(server), clocktesting.NewFakeClock(time.Now()))
			s.Sample()
			_, err := s.Latest()
			if r := s.Reading(); !strings.Contains(err, tc.wantErr) || r.Error != err || len(r.GPUs) != 0 {
				t.Errorf("error %q (reading %+v); want one containing %q", err, r, tc.wantErr)
			}
		})
	}
}
