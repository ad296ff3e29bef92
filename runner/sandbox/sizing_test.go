package sandbox

import (
	"testing"
	"testing/fstest"

	"github.com/google/go-cmp/cmp"
)

const (
	mib = int64(1) << 20
	gib = int64(1) << 30
)

func TestSize(t *testing.T) {
	tests := []struct {
		name string
		req  SizeRequest
		want Sizing
	}{
		{"no limits: one per CPU, 1 GiB each",
			SizeRequest{CPUs: 16},
			Sizing{Concurrency: 16, MemoryBytes: gib}},
		{"no limits, concurrency asked for",
			SizeRequest{CPUs: 16, Concurrency: 3},
			Sizing{Concurrency: 3, MemoryBytes: gib}},
		{"CPU limit 2.5 on 64 CPUs: 3",
			SizeRequest{CPUs: 64, Limits: ContainerLimits{CPUs: 2.5}},
			Sizing{Concurrency: 3, MemoryBytes: gib, Limits: ContainerLimits{CPUs: 2.5}}},
		{"CPU limit 0.2: 1",
			SizeRequest{CPUs: 64, Limits: ContainerLimits{CPUs: 0.2}},
			Sizing{Concurrency: 1, MemoryBytes: gib, Limits: ContainerLimits{CPUs: 0.2}}},
		{"CPU limit above the CPUs: the CPUs",
			SizeRequest{CPUs: 4, Limits: ContainerLimits{CPUs: 8}},
			Sizing{Concurrency: 4, MemoryBytes: gib, Limits: ContainerLimits{CPUs: 8}}},
		{"asked-for concurrency above the CPU limit is kept",
			SizeRequest{CPUs: 64, Concurrency: 8, Limits: ContainerLimits{CPUs: 2}},
			Sizing{Concurrency: 8, MemoryBytes: gib, Limits: ContainerLimits{CPUs: 2}}},
		{"the issue's shard: 4 GiB on a 64-CPU node holds 3 programs of 1 GiB",
			SizeRequest{CPUs: 64, Limits: ContainerLimits{MemoryBytes: 4 * gib}},
			Sizing{Concurrency: 3, MemoryBytes: gib, Limits: ContainerLimits{MemoryBytes: 4 * gib}, Note: "concurrency lowered from 64 to 3"}},
		{"enough memory: nothing lowered",
			SizeRequest{CPUs: 4, Limits: ContainerLimits{MemoryBytes: 8 * gib, CPUs: 4}},
			Sizing{Concurrency: 4, MemoryBytes: gib, Limits: ContainerLimits{MemoryBytes: 8 * gib, CPUs: 4}}},
		{"exactly enough: 2 x (1 GiB + 16 MiB) + 256 MiB",
			SizeRequest{CPUs: 2, Limits: ContainerLimits{MemoryBytes: 2*(gib+SlotOverheadBytes) + RunnerReserveBytes}},
			Sizing{Concurrency: 2, MemoryBytes: gib, Limits: ContainerLimits{MemoryBytes: 2*(gib+SlotOverheadBytes) + RunnerReserveBytes}}},
		{"one byte short of 2: 1",
			SizeRequest{CPUs: 2, Limits: ContainerLimits{MemoryBytes: 2*(gib+SlotOverheadBytes) + RunnerReserveBytes - 1}},
			Sizing{Concurrency: 1, MemoryBytes: gib, Limits: ContainerLimits{MemoryBytes: 2*(gib+SlotOverheadBytes) + RunnerReserveBytes - 1},
				Note: "concurrency lowered from 2 to 1"}},
		{"asked-for concurrency lowered too",
			SizeRequest{CPUs: 2, Concurrency: 8, Limits: ContainerLimits{MemoryBytes: 2 * gib}},
			Sizing{Concurrency: 1, MemoryBytes: gib, Limits: ContainerLimits{MemoryBytes: 2 * gib}, Note: "concurrency lowered from 8 to 1"}},
		{"smaller programs asked for: more of them",
			SizeRequest{CPUs: 8, MemoryBytes: 256 * mib, Limits: ContainerLimits{MemoryBytes: 2 * gib}},
			Sizing{Concurrency: 6, MemoryBytes: 256 * mib, Limits: ContainerLimits{MemoryBytes: 2 * gib}, Note: "concurrency lowered from 8 to 6"}},
		{"1 GiB container: one program with what is left",
			SizeRequest{CPUs: 2, Limits: ContainerLimits{MemoryBytes: gib}},
			Sizing{Concurrency: 1, MemoryBytes: gib - RunnerReserveBytes - SlotOverheadBytes, Limits: ContainerLimits{MemoryBytes: gib},
				Note: "concurrency lowered from 2 to 1, a program's address space lowered from 1024 to 752 MiB"}},
		{"a container too small for the minimum: the minimum, and a warning",
			SizeRequest{CPUs: 2, Limits: ContainerLimits{MemoryBytes: 300 * mib}},
			Sizing{Concurrency: 1, MemoryBytes: MinMemoryBytes, Limits: ContainerLimits{MemoryBytes: 300 * mib},
				Note: "concurrency lowered from 2 to 1, a program's address space lowered from 1024 to 128 MiB; the container is too small: give it at least 400 MiB"}},
		{"a limit below the reserve",
			SizeRequest{CPUs: 1, Limits: ContainerLimits{MemoryBytes: 128 * mib}},
			Sizing{Concurrency: 1, MemoryBytes: MinMemoryBytes, Limits: ContainerLimits{MemoryBytes: 128 * mib},
				Note: "a program's address space lowered from 1024 to 128 MiB; the container is too small: give it at least 400 MiB"}},
		{"no CPUs reported: 1",
			SizeRequest{},
			Sizing{Concurrency: 1, MemoryBytes: gib}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Size(tt.req)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("Size(%+v) (-want +got):\n%s", tt.req, diff)
			}
			if got.Concurrency < 1 {
				t.Errorf("concurrency %d", got.Concurrency)
			}
			if l := tt.req.Limits.MemoryBytes; l > 0 && got.MemoryBytes > MinMemoryBytes {
				if used := int64(got.Concurrency)*(got.MemoryBytes+SlotOverheadBytes) + RunnerReserveBytes; used > l {
					t.Errorf("programs may use %d bytes with the reserve, limit %d", used, l)
				}
			}
		})
	}
}

func TestSizingString(t *testing.T) {
	s := Size(SizeRequest{CPUs: 64, Limits: ContainerLimits{MemoryBytes: 4 * gib, CPUs: 2}})
	want := "2 programs at once, 1024 MiB of address space each (container: memory limit 4096 MiB, 256 MiB kept for the runner, CPU limit 2)"
	if got := s.String(); got != want {
		t.Errorf("String() = %q, want %q", got, want)
	}
	s = Size(SizeRequest{CPUs: 2, Limits: ContainerLimits{MemoryBytes: gib}})
	want = "1 program at once, 752 MiB of address space each (container: memory limit 1024 MiB, 256 MiB kept for the runner, no CPU limit): " +
		"concurrency lowered from 2 to 1, a program's address space lowered from 1024 to 752 MiB"
	if got := s.String(); got != want {
		t.Errorf("String() = %q, want %q", got, want)
	}
	s = Size(SizeRequest{CPUs: 8})
	want = "8 programs at once, 1024 MiB of address space each (container: no memory limit, no CPU limit)"
	if got := s.String(); got != want {
		t.Errorf("String() = %q, want %q", got, want)
	}
}

func TestReadContainerLimits(t *testing.T) {
	file := func(s string) *fstest.MapFile { return &fstest.MapFile{Data: []byte(s)} }
	tests := []struct {
		name  string
		files fstest.MapFS
		want  ContainerLimits
	}{
		{"nothing readable: no limit", fstest.MapFS{}, ContainerLimits{}},
		{"cgroup v2 in a cgroup namespace", fstest.MapFS{
			"proc/self/cgroup":          file("0::/\n"),
			"sys/fs/cgroup/memory.max":  file("4294967296\n"),
			"sys/fs/cgroup/cpu.max":     file("250000 100000\n"),
			"sys/fs/cgroup/memory.high": file("1\n"),
		}, ContainerLimits{MemoryBytes: 4 * gib, CPUs: 2.5}},
		{"cgroup v2, no limits", fstest.MapFS{
			"proc/self/cgroup":         file("0::/\n"),
			"sys/fs/cgroup/memory.max": file("max\n"),
			"sys/fs/cgroup/cpu.max":    file("max 100000\n"),
		}, ContainerLimits{}},
		{"cgroup v2 without a namespace: the tightest of the path up to the root", fstest.MapFS{
			"proc/self/cgroup": file("0::/kubepods.slice/pod1/ctr\n"),
			"sys/fs/cgroup/kubepods.slice/pod1/ctr/memory.max": file("max\n"),
			"sys/fs/cgroup/kubepods.slice/pod1/ctr/cpu.max":    file("max 100000\n"),
			"sys/fs/cgroup/kubepods.slice/pod1/memory.max":     file("2147483648\n"),
			"sys/fs/cgroup/kubepods.slice/pod1/cpu.max":        file("50000 100000\n"),
			"sys/fs/cgroup/kubepods.slice/memory.max":          file("8589934592\n"),
		}, ContainerLimits{MemoryBytes: 2 * gib, CPUs: 0.5}},
		{"cgroup v2, the named path not mounted (the container's own cgroup at the root)", fstest.MapFS{
			"proc/self/cgroup":         file("0::/kubepods.slice/pod1/ctr\n"),
			"sys/fs/cgroup/memory.max": file("1073741824\n"),
		}, ContainerLimits{MemoryBytes: gib}},
		{"cgroup v1", fstest.MapFS{
			"proc/self/cgroup":                                       file("12:pids:/docker/abc\n4:memory:/docker/abc\n3:cpu,cpuacct:/docker/abc\n1:name=systemd:/docker/abc\n"),
			"sys/fs/cgroup/memory/memory.limit_in_bytes":             file("9223372036854771712\n"),
			"sys/fs/cgroup/memory/docker/memory.limit_in_bytes":      file("9223372036854771712\n"),
			"sys/fs/cgroup/memory/docker/abc/memory.limit_in_bytes":  file("3221225472\n"),
			"sys/fs/cgroup/cpu,cpuacct/docker/abc/cpu.cfs_quota_us":  file("150000\n"),
			"sys/fs/cgroup/cpu,cpuacct/docker/abc/cpu.cfs_period_us": file("100000\n"),
			"sys/fs/cgroup/cpu,cpuacct/cpu.cfs_quota_us":             file("-1\n"),
			"sys/fs/cgroup/cpu,cpuacct/cpu.cfs_period_us":            file("100000\n"),
		}, ContainerLimits{MemoryBytes: 3 * gib, CPUs: 1.5}},
		{"cgroup v1, unlimited (the largest page-aligned int64)", fstest.MapFS{
			"proc/self/cgroup":                           file("4:memory:/\n1:cpu:/\n"),
			"sys/fs/cgroup/memory/memory.limit_in_bytes": file("9223372036854771712\n"),
			"sys/fs/cgroup/cpu/cpu.cfs_quota_us":         file("-1\n"),
			"sys/fs/cgroup/cpu/cpu.cfs_period_us":        file("100000\n"),
		}, ContainerLimits{}},
		{"cgroup v1, a parent's limit is tighter", fstest.MapFS{
			"proc/self/cgroup": file("4:memory:/a/b\n"),
			"sys/fs/cgroup/memory/a/b/memory.limit_in_bytes": file("4294967296\n"),
			"sys/fs/cgroup/memory/a/memory.limit_in_bytes":   file("1073741824\n"),
		}, ContainerLimits{MemoryBytes: gib}},
		{"garbage is ignored", fstest.MapFS{
			"proc/self/cgroup":         file("0::/\n"),
			"sys/fs/cgroup/memory.max": file("lots\n"),
			"sys/fs/cgroup/cpu.max":    file("1 2 3\n"),
		}, ContainerLimits{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, ReadContainerLimits(tt.files)); diff != "" {
				t.Errorf("ReadContainerLimits (-want +got):\n%s", diff)
			}
		})
	}
}
