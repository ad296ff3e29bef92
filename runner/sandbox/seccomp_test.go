package sandbox

import (
	"encoding/binary"
	"testing"

	seccomp "github.com/elastic/go-seccomp-bpf"
	"github.com/elastic/go-seccomp-bpf/arch"
	"golang.org/x/net/bpf"
	"golang.org/x/sys/unix"
)

// filterVM runs FilterProgram in x/net/bpf's interpreter. The kernel loads
// seccomp_data words in native byte order and the interpreter loads them
// big-endian, so the data is handed over word by word in big-endian.
type filterVM struct {
	vm   *bpf.VM
	info *arch.Info
}

func newFilterVM(t *testing.T) *filterVM {
	t.Helper()
	info, err := arch.GetInfo("")
	if err != nil {
		t.Skipf("no seccomp syscall table for this architecture: %v", err)
	}
	b, err := FilterProgram()
	if err != nil {
		t.Fatal(err)
	}
	raw := make([]bpf.RawInstruction, len(b)/8)
	for i := range raw {
		r := b[8*i:]
		raw[i] = bpf.RawInstruction{Op: binary.NativeEndian.Uint16(r), Jt: r[2], Jf: r[3], K: binary.NativeEndian.Uint32(r[4:])}
	}
	insns, ok := bpf.Disassemble(raw)
	if !ok {
		t.Fatal("the filter holds an instruction x/net/bpf cannot decode")
	}
	vm, err := bpf.NewVM(insns)
	if err != nil {
		t.Fatal(err)
	}
	return &filterVM{vm: vm, info: info}
}

// decide returns the filter's action for system call name with args on
// architecture auditArch (0: the native one).
func (f *filterVM) decide(t *testing.T, auditArch uint32, name string, args ...uint64) uint32 {
	t.Helper()
	nr, ok := f.info.SyscallNames[name]
	if !ok {
		t.Fatalf("system call %s unknown on %s", name, f.info.Name)
	}
	if auditArch == 0 {
		auditArch = uint32(f.info.ID)
	}
	// struct seccomp_data: nr, arch, instruction_pointer, args[6].
	data := binary.NativeEndian.AppendUint32(nil, uint32(nr))
	data = binary.NativeEndian.AppendUint32(data, auditArch)
	data = binary.NativeEndian.AppendUint64(data, 0)
	for i := range 6 {
		var a uint64
		if i < len(args) {
			a = args[i]
		}
		data = binary.NativeEndian.AppendUint64(data, a)
	}
	words := make([]byte, 0, len(data))
	for i := 0; i < len(data); i += 4 {
		words = binary.BigEndian.AppendUint32(words, binary.NativeEndian.Uint32(data[i:]))
	}
	out, err := f.vm.Run(words)
	if err != nil {
		t.Fatal(err)
	}
	return uint32(out)
}

// TestFilterDecisions checks the filter's answer to chosen calls, those
// refused only for some arguments above all.
func TestFilterDecisions(t *testing.T) {
	f := newFilterVM(t)
	allow := uint32(seccomp.ActionAllow)
	eperm := uint32(seccomp.ActionErrno) | uint32(unix.EPERM)
	enosys := uint32(seccomp.ActionErrno) | uint32(unix.ENOSYS)
	const high = 1 << 32 // a bit the kernel drops from a 32-bit argument
	const runner, ptr = 1, 0x7ffd0000
	tests := []struct {
		name    string
		syscall string
		args    []uint64
		want    uint32
	}{
		{"read", "read", []uint64{0, ptr, 10}, allow},
		{"write", "write", []uint64{1, ptr, 10}, allow},
		{"openat", "openat", []uint64{0, ptr, 0}, eperm},
		{"kill", "kill", []uint64{runner, 15}, eperm},
		{"clone3 is ENOSYS", "clone3", nil, enosys},
		{"prctl PR_GET_SECCOMP", "prctl", []uint64{prGetSeccomp}, allow},
		{"prctl PR_SET_PDEATHSIG", "prctl", []uint64{unix.PR_SET_PDEATHSIG, 9}, eperm},

		{"prlimit64 reading its own limits", "prlimit64", []uint64{0, unix.RLIMIT_AS, 0, ptr}, allow},
		{"prlimit64 setting its own limits", "prlimit64", []uint64{0, unix.RLIMIT_CORE, ptr, 0}, eperm},
		{"prlimit64 reading the runner's limits", "prlimit64", []uint64{runner, unix.RLIMIT_AS, 0, ptr}, eperm},
		{"prlimit64 setting the runner's limits", "prlimit64", []uint64{runner, unix.RLIMIT_NOFILE, ptr, 0}, eperm},
		{"prlimit64 with pid 0 in the high half", "prlimit64", []uint64{high, unix.RLIMIT_CORE, 0, ptr}, eperm},
		{"setrlimit", "setrlimit", []uint64{unix.RLIMIT_CORE, ptr}, eperm},
		{"setpriority of the runner", "setpriority", []uint64{unix.PRIO_PROCESS, runner, 19}, eperm},
		{"sched_setaffinity", "sched_setaffinity", []uint64{runner, 8, ptr}, eperm},
		{"ioprio_set", "ioprio_set", []uint64{1, runner, 3 << 13}, eperm},

		{"fcntl F_GETFL", "fcntl", []uint64{1, unix.F_GETFL}, allow},
		{"fcntl F_SETFD", "fcntl", []uint64{1, unix.F_SETFD, unix.FD_CLOEXEC}, allow},
		{"fcntl F_SETFL O_NONBLOCK", "fcntl", []uint64{1, unix.F_SETFL, unix.O_NONBLOCK | unix.O_WRONLY}, allow},
		{"fcntl F_SETFL O_ASYNC", "fcntl", []uint64{1, unix.F_SETFL, unix.O_ASYNC | unix.O_WRONLY}, eperm},
		{"fcntl F_SETFL O_ASYNC, command's high half set", "fcntl", []uint64{1, high | unix.F_SETFL, unix.O_ASYNC}, eperm},
		{"fcntl F_SETOWN", "fcntl", []uint64{1, unix.F_SETOWN, runner}, eperm},
		{"fcntl F_SETOWN, command's high half set", "fcntl", []uint64{1, high | unix.F_SETOWN, runner}, eperm},
		{"fcntl F_SETOWN_EX", "fcntl", []uint64{1, unix.F_SETOWN_EX, ptr}, eperm},
		{"fcntl F_SETSIG", "fcntl", []uint64{1, unix.F_SETSIG, 15}, eperm},
		{"fcntl F_SETSIG, command's high half set", "fcntl", []uint64{1, high | unix.F_SETSIG, 15}, eperm},
		{"fcntl F_GETOWN", "fcntl", []uint64{1, unix.F_GETOWN}, allow},
		{"fcntl F_DUPFD_CLOEXEC (a superset of F_SETOWN's bits)", "fcntl", []uint64{1, unix.F_DUPFD_CLOEXEC, 3}, allow},
		{"ioctl FIOASYNC", "ioctl", []uint64{1, fioAsync, ptr}, eperm},
		{"ioctl FIOASYNC, command's high half set", "ioctl", []uint64{1, high | fioAsync, ptr}, eperm},
		{"ioctl FIONBIO (0x5421)", "ioctl", []uint64{1, 0x5421, ptr}, allow},
		{"ioctl TCGETS", "ioctl", []uint64{1, unix.TCGETS, ptr}, allow},

		{"a foreign architecture is killed", "read", []uint64{0}, uint32(seccomp.ActionKillProcess)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var foreign uint32
			if tt.name == "a foreign architecture is killed" {
				foreign = 0x40000003 // AUDIT_ARCH_I386
				if uint32(f.info.ID) == foreign {
					foreign = 0xc000003e // AUDIT_ARCH_X86_64
				}
			}
			if got := f.decide(t, foreign, tt.syscall, tt.args...); got != tt.want {
				t.Errorf("%s%v: action %#x, want %#x", tt.syscall, tt.args, got, tt.want)
			}
		})
	}
}

// TestLowEqual checks the masked compare against every command fcntl's
// rules name and its neighbours.
func TestLowEqual(t *testing.T) {
	f := newFilterVM(t)
	eperm := uint32(seccomp.ActionErrno) | uint32(unix.EPERM)
	refused := map[uint64]bool{unix.F_SETOWN: true, unix.F_SETSIG: true, unix.F_SETOWN_EX: true}
	for cmd := uint64(0); cmd < 1040; cmd++ {
		for _, hi := range []uint64{0, 1 << 32, 0xffffffff << 32} {
			got := f.decide(t, 0, "fcntl", 1, hi|cmd, 0) == eperm
			if got != refused[cmd] {
				t.Errorf("fcntl command %#x: refused %v, want %v", hi|cmd, got, refused[cmd])
			}
		}
	}
}
