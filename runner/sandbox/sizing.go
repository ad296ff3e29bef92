package sandbox

import (
	"fmt"
	"io/fs"
	"math"
	"os"
	"path"
	"runtime"
	"strconv"
	"strings"
)

// Sizing constants. A program's address-space limit (RLIMIT_AS) bounds the
// memory it can make resident, so programs at once x their limit, plus
// what the runner and the zygotes hold, is the most the sandbox can use.
const (
	// DefaultMemoryBytes is a program's address-space limit unless the
	// container is too small to hold one such program (Options.MemoryBytes).
	DefaultMemoryBytes = 1 << 30
	// RunnerReserveBytes is kept out of a container's memory limit for the
	// Go runner (its heap, the traces it writes, the model client).
	RunnerReserveBytes = 256 << 20
	// SlotOverheadBytes is charged per concurrency slot on top of a
	// program's limit: its zygote (about 16 MiB resident, most of it shared
	// with the child, whose address space counts it too) and the spare child
	// forked ahead (a few MiB of copied pages).
	SlotOverheadBytes = 16 << 20
	// MinMemoryBytes is the least address space a program is given: a
	// forked child already maps about 21 MiB, and the catalogue runs at
	// 128 MiB. A container too small for one such program gets it anyway,
	// and Sizing says so.
	MinMemoryBytes = 128 << 20
)

// ContainerLimits are the limits of the cgroup the runner runs in.
type ContainerLimits struct {
	// MemoryBytes is the memory limit; 0 when there is none.
	MemoryBytes int64
	// CPUs is the CPU bandwidth limit (quota / period); 0 when there is none.
	CPUs float64
}

// ReadContainerLimits reads the memory and CPU limits of the calling
// process's cgroup, and of every cgroup above it, from fsys, the file
// system's root (os.DirFS("/")): proc/self/cgroup names the cgroups, and
// the limits are read from cgroup v2's memory.max and cpu.max under
// sys/fs/cgroup, and from cgroup v1's memory.limit_in_bytes and
// cpu.cfs_quota_us / cpu.cfs_period_us under sys/fs/cgroup/memory and
// sys/fs/cgroup/cpu (or cpu,cpuacct). The tightest limit found wins; "max",
// -1 and v1's near-2^63 value mean none. Where a container's own cgroup is
// mounted at the root (a cgroup namespace, or a bind mount), the path
// /proc/self/cgroup names may not exist under the mount: the root's files
// are read then. Nothing readable means no limit.
func ReadContainerLimits(fsys fs.FS) ContainerLimits {
	var l ContainerLimits
	paths := ownCgroups(fsys)
	tighterMemory := func(v int64) {
		if v > 0 && (l.MemoryBytes == 0 || v < l.MemoryBytes) {
			l.MemoryBytes = v
		}
	}
	tighterCPU := func(v float64) {
		if v > 0 && (l.CPUs == 0 || v < l.CPUs) {
			l.CPUs = v
		}
	}
	// cgroup v2: one hierarchy at sys/fs/cgroup.
	for _, dir := range ancestors("sys/fs/cgroup", paths[""]) {
		if v, ok := readLimit(fsys, path.Join(dir, "memory.max")); ok {
			tighterMemory(v)
		}
		if v, ok := readCPUMax(fsys, path.Join(dir, "cpu.max")); ok {
			tighterCPU(v)
		}
	}
	// cgroup v1: a hierarchy per controller.
	for _, dir := range ancestors("sys/fs/cgroup/memory", paths["memory"]) {
		if v, ok := readLimit(fsys, path.Join(dir, "memory.limit_in_bytes")); ok {
			tighterMemory(v)
		}
	}
	for _, mount := range []string{"sys/fs/cgroup/cpu", "sys/fs/cgroup/cpu,cpuacct"} {
		for _, dir := range ancestors(mount, paths["cpu"]) {
			quota, ok1 := readLimit(fsys, path.Join(dir, "cpu.cfs_quota_us"))
			period, ok2 := readLimit(fsys, path.Join(dir, "cpu.cfs_period_us"))
			if ok1 && ok2 && quota > 0 && period > 0 {
				tighterCPU(float64(quota) / float64(period))
			}
		}
	}
	return l
}

// ownCgroups parses proc/self/cgroup ("ID:CONTROLLERS:PATH" lines) into the
// path of each v1 controller, and of the v2 hierarchy under "".
func ownCgroups(fsys fs.FS) map[string]string {
	out := map[string]string{}
	b, err := fs.ReadFile(fsys, "proc/self/cgroup")
	if err != nil {
		return out
	}
	for _, line := range strings.Split(string(b), "\n") {
		parts := strings.SplitN(line, ":", 3)
		if len(parts) != 3 {
			continue
		}
		if parts[0] == "0" && parts[1] == "" {
			out[""] = parts[2]
			continue
		}
		for _, c := range strings.Split(parts[1], ",") {
			out[c] = parts[2]
		}
	}
	return out
}

// ancestors lists mount/cgroup and every directory above it up to mount,
// as paths fs.FS accepts.
func ancestors(mount, cgroup string) []string {
	dirs := []string{}
	for p := path.Clean("/" + cgroup); p != "/"; p = path.Dir(p) {
		dirs = append(dirs, mount+p)
	}
	return append(dirs, mount)
}

// unlimited is the least value taken for "no limit": cgroup v1 reports
// none as the largest page-aligned int64 (9223372036854771712).
const unlimited = int64(1) << 62

// readLimit reads a file holding one integer, "max" or -1 (no limit: ok
// and 0).
func readLimit(fsys fs.FS, name string) (int64, bool) {
	b, err := fs.ReadFile(fsys, name)
	if err != nil {
		return 0, false
	}
	s := strings.TrimSpace(string(b))
	if s == "max" {
		return 0, true
	}
	v, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		return 0, false
	}
	if v < 0 || v >= unlimited {
		return 0, true
	}
	return v, true
}

// readCPUMax reads cgroup v2's cpu.max, "QUOTA PERIOD" or "max PERIOD", as
// CPUs (0: no limit).
func readCPUMax(fsys fs.FS, name string) (float64, bool) {
	b, err := fs.ReadFile(fsys, name)
	if err != nil {
		return 0, false
	}
	f := strings.Fields(string(b))
	if len(f) != 2 {
		return 0, false
	}
	if f[0] == "max" {
		return 0, true
	}
	quota, err1 := strconv.ParseInt(f[0], 10, 64)
	period, err2 := strconv.ParseInt(f[1], 10, 64)
	if err1 != nil || err2 != nil || quota <= 0 || period <= 0 {
		return 0, false
	}
	return float64(quota) / float64(period), true
}

// SizeRequest is what Size decides from.
type SizeRequest struct {
	// Limits are the container's (ReadContainerLimits).
	Limits ContainerLimits
	// CPUs is the number of logical CPUs (runtime.NumCPU()).
	CPUs int
	// Concurrency is the most programs at once asked for
	// (--program-concurrency); 0: one per CPU the container may use.
	Concurrency int
	// MemoryBytes is a program's address-space limit asked for; 0:
	// DefaultMemoryBytes.
	MemoryBytes int64
}

// Sizing is how many programs run at once and how much address space each
// may map.
type Sizing struct {
	Concurrency int
	MemoryBytes int64
	// Limits are the container's limits it was sized for.
	Limits ContainerLimits
	// Note says what the container's limits changed, "" when nothing.
	Note string
}

// Size chooses program concurrency and each program's address-space limit
// so that the programs cannot together exceed the container's memory
// limit, which would get the whole runner OOM-killed: concurrency x
// (limit + SlotOverheadBytes) <= memory limit - RunnerReserveBytes.
//
// Concurrency is the one asked for, else one per CPU the container may use
// (its CPU limit rounded up, at most CPUs), lowered to what the memory
// holds, at least 1. A program keeps the limit asked for, so that whether
// it runs out of memory does not depend on the pod it ran in, unless the
// container cannot hold even one: then it gets what there is, at least
// MinMemoryBytes.
func Size(r SizeRequest) Sizing {
	s := Sizing{Concurrency: r.Concurrency, MemoryBytes: r.MemoryBytes, Limits: r.Limits}
	if s.MemoryBytes <= 0 {
		s.MemoryBytes = DefaultMemoryBytes
	}
	if s.Concurrency <= 0 {
		s.Concurrency = max(r.CPUs, 1)
		if r.Limits.CPUs > 0 {
			s.Concurrency = max(1, min(s.Concurrency, int(math.Ceil(r.Limits.CPUs))))
		}
	}
	if r.Limits.MemoryBytes <= 0 {
		return s
	}
	budget := r.Limits.MemoryBytes - RunnerReserveBytes
	fits := budget / (s.MemoryBytes + SlotOverheadBytes)
	switch {
	case fits >= int64(s.Concurrency):
	case fits >= 1:
		s.Note = fmt.Sprintf("concurrency lowered from %d to %d", s.Concurrency, fits)
		s.Concurrency = int(fits)
	default:
		mem := max(budget-SlotOverheadBytes, MinMemoryBytes)
		s.Note = fmt.Sprintf("a program's address space lowered from %d to %d MiB", s.MemoryBytes>>20, mem>>20)
		if s.Concurrency > 1 {
			s.Note = fmt.Sprintf("concurrency lowered from %d to 1, %s", s.Concurrency, s.Note)
		}
		if mem+SlotOverheadBytes > budget {
			s.Note += fmt.Sprintf("; the container is too small: give it at least %d MiB", (RunnerReserveBytes+SlotOverheadBytes+MinMemoryBytes)>>20)
		}
		s.Concurrency, s.MemoryBytes = 1, mem
	}
	return s
}

// String describes the sizing for the runner's start-up line.
func (s Sizing) String() string {
	mem, cpu := "no memory limit", "no CPU limit"
	if s.Limits.MemoryBytes > 0 {
		mem = fmt.Sprintf("memory limit %d MiB, %d MiB kept for the runner", s.Limits.MemoryBytes>>20, RunnerReserveBytes>>20)
	}
	if s.Limits.CPUs > 0 {
		cpu = fmt.Sprintf("CPU limit %g", s.Limits.CPUs)
	}
	programs := "programs"
	if s.Concurrency == 1 {
		programs = "program"
	}
	out := fmt.Sprintf("%d %s at once, %d MiB of address space each (container: %s, %s)", s.Concurrency, programs, s.MemoryBytes>>20, mem, cpu)
	if s.Note != "" {
		out += ": " + s.Note
	}
	return out
}

// SizeForContainer sizes the sandbox for the container the calling process
// runs in: Size with the limits ReadContainerLimits finds under / and
// runtime.NumCPU(). concurrency and memoryBytes are what was asked for (0:
// the defaults).
func SizeForContainer(concurrency int, memoryBytes int64) Sizing {
	return Size(SizeRequest{
		Limits: ReadContainerLimits(os.DirFS("/")), CPUs: runtime.NumCPU(),
		Concurrency: concurrency, MemoryBytes: memoryBytes,
	})
}
