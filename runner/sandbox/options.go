package sandbox

import (
	"fmt"
	"os"
	"runtime"
	"time"
)

// Isolation selects how the sandboxed process is separated from the host.
type Isolation string

const (
	// IsolationAuto (the default) uses the strongest mode the kernel allows:
	// user+network+IPC+UTS namespaces, else user+network namespaces, else
	// none. There is no PID namespace (see isolations).
	IsolationAuto Isolation = ""
	// IsolationNamespaces requires at least user and network namespaces;
	// NewPython fails when the kernel refuses them.
	IsolationNamespaces Isolation = "namespaces"
	// IsolationNone uses no namespaces (process group, rlimits, empty
	// environment, temporary directory and, when running as root, the
	// unprivileged uid 65534 still apply).
	IsolationNone Isolation = "none"
)

// Landlock selects whether programs are confined with Landlock.
type Landlock string

const (
	// LandlockAuto (the default) applies Landlock where the kernel has it.
	LandlockAuto Landlock = ""
	// LandlockOff never applies it (to test the weakest setting).
	LandlockOff Landlock = "off"
)

// Minimum is the least confinement NewPython accepts; it fails, saying what
// to change, when the system cannot give it.
type Minimum string

const (
	// MinSeccomp (the default) requires the seccomp filter.
	MinSeccomp Minimum = "seccomp"
	// MinSeccompLandlock requires the filter and Landlock.
	MinSeccompLandlock Minimum = "seccomp+landlock"
	// MinSeccompNamespaces requires the filter and user+net namespaces.
	MinSeccompNamespaces Minimum = "seccomp+namespaces"
	// MinNone accepts a sandbox without the filter. Only for development on
	// systems without seccomp: programs can then open files and sockets.
	MinNone Minimum = "none"
)

// ParseMinimum checks a --sandbox-min value ("" is MinSeccomp).
func ParseMinimum(s string) (Minimum, error) {
	switch m := Minimum(s); m {
	case "":
		return MinSeccomp, nil
	case MinSeccomp, MinSeccompLandlock, MinSeccompNamespaces, MinNone:
		return m, nil
	}
	return "", fmt.Errorf("sandbox minimum %q: want one of seccomp, seccomp+landlock, seccomp+namespaces, none", s)
}

// Options configure NewPython. Zero values take the defaults listed.
type Options struct {
	// Python is the interpreter. Default: the real executable behind
	// "python3" on PATH, then /usr/bin/python3 and /usr/local/bin/python3,
	// whichever first runs under the chosen isolation.
	Python string
	// Timeout is the wall-clock limit per program. Default 10s.
	Timeout time.Duration
	// CPUTime is the RLIMIT_CPU limit (whole seconds, rounded up).
	// Default: Timeout.
	CPUTime time.Duration
	// MemoryBytes is the RLIMIT_AS limit. Default DefaultMemoryBytes
	// (1 GiB). SizeForContainer chooses it, and Concurrency, so that the
	// programs fit the container's memory limit.
	MemoryBytes int64
	// MaxOutputBytes caps stdout; past it the process group is killed and the
	// run fails with FailureOutputLimit. Default 16 MiB.
	MaxOutputBytes int
	// MaxStderrBytes is how much stderr is kept; the rest is discarded.
	// Default 64 KiB.
	MaxStderrBytes int
	// MaxCodeBytes is the largest program accepted. Default 1 MiB.
	MaxCodeBytes int
	// MaxFileBytes is the RLIMIT_FSIZE limit. Default 1 MiB.
	MaxFileBytes int64
	// MaxOpenFiles is the RLIMIT_NOFILE limit. Default 32.
	MaxOpenFiles int
	// MaxProcesses is the RLIMIT_NPROC limit. It counts every process of the
	// sandbox's user, so the default 1 forbids fork outright.
	MaxProcesses int
	// Concurrency bounds programs running at once. Default runtime.NumCPU()
	// (SizeForContainer: the container's CPU and memory limits).
	Concurrency int
	// TempDir is the parent of the per-run directories (programs enter
	// theirs through a descriptor, so TempDir need not be searchable by
	// them). Default os.TempDir().
	TempDir string
	// Isolation selects namespaces. Default IsolationAuto.
	Isolation Isolation
	// Now is the clock used for Result.Duration. Default time.Now.
	Now func() time.Time
	// Landlock selects Landlock. Default LandlockAuto.
	Landlock Landlock
	// Min is the least confinement accepted. Default MinSeccomp.
	Min Minimum
}

func (o Options) withDefaults() Options {
	if o.Timeout <= 0 {
		o.Timeout = 10 * time.Second
	}
	if o.CPUTime <= 0 {
		o.CPUTime = o.Timeout
	}
	if o.MemoryBytes <= 0 {
		o.MemoryBytes = DefaultMemoryBytes
	}
	if o.MaxOutputBytes <= 0 {
		o.MaxOutputBytes = 16 << 20
	}
	if o.MaxStderrBytes <= 0 {
		o.MaxStderrBytes = 64 << 10
	}
	if o.MaxCodeBytes <= 0 {
		o.MaxCodeBytes = 1 << 20
	}
	if o.MaxFileBytes <= 0 {
		o.MaxFileBytes = 1 << 20
	}
	if o.MaxOpenFiles <= 0 {
		o.MaxOpenFiles = 32
	}
	if o.MaxProcesses <= 0 {
		o.MaxProcesses = 1
	}
	if o.Concurrency <= 0 {
		o.Concurrency = runtime.NumCPU()
	}
	if o.TempDir == "" {
		o.TempDir = os.TempDir()
	}
	if o.Min == "" {
		o.Min = MinSeccomp
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	return o
}

// cpuSeconds is CPUTime rounded up to whole seconds, at least 1.
func (o Options) cpuSeconds() int64 {
	s := int64((o.CPUTime + time.Second - 1) / time.Second)
	if s < 1 {
		s = 1
	}
	return s
}
