package sandbox

import (
	"encoding/binary"
	"fmt"

	seccomp "github.com/elastic/go-seccomp-bpf"
	"github.com/elastic/go-seccomp-bpf/arch"
	"golang.org/x/net/bpf"
	"golang.org/x/sys/unix"
)

// deniedSyscalls are refused (EPERM) to every program. The filter is a deny
// list over an interpreter that needs nothing of this after it started: a
// program cannot open any file (the modules it may import are loaded before
// the fork), make any socket, start any process or thread, signal or trace
// any process, leave its process group, change the limits, priority or
// scheduling of any process, have the kernel signal one (signal-driven
// I/O), or reach the kernel's namespace, mount, key, BPF, io_uring and perf
// interfaces.
var deniedSyscalls = []string{
	// Files: no open of any kind, so nothing outside can be read or written.
	"open", "openat", "openat2", "creat", "open_by_handle_at", "name_to_handle_at",
	"mkdir", "mkdirat", "rmdir", "unlink", "unlinkat", "rename", "renameat", "renameat2",
	"link", "linkat", "symlink", "symlinkat", "chmod", "fchmod", "fchmodat", "chown",
	"fchown", "lchown", "fchownat", "truncate", "mknod", "mknodat", "utime", "utimes",
	"utimensat", "futimesat", "setxattr", "lsetxattr", "fsetxattr", "removexattr",
	"lremovexattr", "fremovexattr", "chroot", "pivot_root", "acct", "swapon", "swapoff",
	"uselib", "fanotify_init", "inotify_init", "inotify_init1", "memfd_create",
	"memfd_secret", "userfaultfd",
	// Network: sockets of every family.
	"socket", "socketpair", "connect", "bind", "listen", "accept", "accept4",
	"sendto", "recvfrom", "sendmsg", "recvmsg", "sendmmsg", "recvmmsg",
	"setsockopt", "getsockopt", "shutdown", "getsockname", "getpeername",
	// Processes and threads: none; no exec after start.
	"fork", "vfork", "clone", "execve", "execveat",
	// Signals to any process (the program's own fatal signals come from the
	// kernel, which seccomp does not filter), pidfds, tracing.
	"kill", "tkill", "tgkill", "rt_sigqueueinfo", "rt_tgsigqueueinfo",
	"pidfd_open", "pidfd_send_signal", "pidfd_getfd", "ptrace",
	"process_vm_readv", "process_vm_writev", "kcmp", "process_madvise",
	// Process group and session: the runner kills the group it created.
	"setpgid", "setsid",
	// Limits, priorities, CPU and I/O scheduling, memory placement: each
	// reaches other processes of the same uid (the runner among them when
	// it runs as the programs' uid). prlimit64 is refused with arguments
	// only (argumentRules): reading its own limits stays allowed. The
	// zygote sets a child's rlimits before it installs the filter.
	"setrlimit", "setpriority", "sched_setaffinity", "sched_setscheduler",
	"sched_setparam", "sched_setattr", "ioprio_set", "migrate_pages", "move_pages",
	// Identity.
	"setuid", "setgid", "setreuid", "setregid", "setresuid", "setresgid",
	"setfsuid", "setfsgid", "setgroups", "capset",
	// Namespaces, mounts, keys, BPF, io_uring, perf and the rest of the
	// kernel's administrative surface.
	"unshare", "setns", "mount", "umount2", "fsopen", "fsconfig", "fsmount", "fspick",
	"move_mount", "open_tree", "mount_setattr", "keyctl", "add_key", "request_key",
	"bpf", "io_uring_setup", "io_uring_enter", "io_uring_register", "perf_event_open",
	"seccomp", "personality", "modify_ldt", "iopl", "ioperm", "kexec_load",
	"kexec_file_load", "init_module", "finit_module", "delete_module", "reboot",
	"syslog", "quotactl", "settimeofday", "clock_settime", "adjtimex", "clock_adjtime",
	"lookup_dcookie", "vhangup", "sethostname", "setdomainname",
	"landlock_create_ruleset", "landlock_add_rule", "landlock_restrict_self",
	// System V and POSIX IPC, shared with the runner without an IPC namespace.
	"shmget", "shmat", "shmctl", "shmdt", "msgget", "msgsnd", "msgrcv", "msgctl",
	"semget", "semop", "semctl", "semtimedop", "mq_open", "mq_unlink",
	"mq_timedsend", "mq_timedreceive", "mq_notify", "mq_getsetattr",
}

// requiredSyscalls must exist on the architecture: a filter without them
// would not be the filter docs/sandbox.md describes.
var requiredSyscalls = []string{
	"openat", "socket", "socketpair", "clone", "execve", "kill", "tgkill", "ptrace",
	"process_vm_readv", "setpgid", "setsid", "unshare", "mount", "keyctl", "bpf",
	"io_uring_setup", "perf_event_open",
}

// prGetSeccomp is PR_GET_SECCOMP, the one prctl a child may still make
// (to confirm the filter is in force).
const prGetSeccomp = 21

// FilterProgram assembles the seccomp-bpf filter for this architecture and
// returns it as struct sock_filter records (8 bytes each, native byte
// order), ready for prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER). System calls
// of another architecture (i386 through int 0x80 on x86_64, for one) kill
// the process; x32 calls fail with ENOSYS; clone3 fails with ENOSYS, so a
// libc falls back to clone, which is refused.
func FilterProgram() ([]byte, error) {
	info, err := arch.GetInfo("")
	if err != nil {
		return nil, fmt.Errorf("sandbox: seccomp: %w", err)
	}
	for _, n := range requiredSyscalls {
		if _, ok := info.SyscallNames[n]; !ok {
			return nil, fmt.Errorf("sandbox: seccomp: system call %s unknown on %s", n, info.Name)
		}
	}
	return denyListProgram(info, []seccomp.SyscallGroup{
		{Action: seccomp.ActionErrno, Names: knownSyscalls(info, deniedSyscalls)},
		{Action: seccomp.ActionErrno | seccomp.Action(unix.ENOSYS), Names: []string{"clone3"}},
		{Action: seccomp.ActionErrno, NamesWithCondtions: argumentRules()},
	})
}

// fcntl and ioctl commands and the flag that make the kernel signal a
// chosen process: F_SETOWN and F_SETOWN_EX name the process that gets
// SIGIO (or, after F_SETSIG, any signal, SIGTERM included) when the
// descriptor becomes ready; O_ASYNC, set by F_SETFL or FIOASYNC, turns that
// on. A program holds a pipe (stdout) whose reader is the runner, so with
// them it could signal the runner, or any process of its uid, at will.
const (
	fSetFL    = unix.F_SETFL
	fSetOwn   = unix.F_SETOWN
	fSetSig   = unix.F_SETSIG
	fSetOwnEx = unix.F_SETOWN_EX
	asyncFlag = unix.O_ASYNC
	// fioAsync is FIOASYNC of asm-generic/ioctls.h (x86, arm), which
	// x/sys/unix does not name.
	fioAsync = 0x5452
)

// argumentRules are the calls refused only with some arguments (the groups
// of one name are alternatives):
//
//   - prctl, except PR_GET_SECCOMP (to confirm the filter is in force);
//   - prlimit64 on another process, or setting a limit (its own limits may
//     be read: pid 0 and no new limit);
//   - fcntl F_SETOWN, F_SETOWN_EX, F_SETSIG, and F_SETFL with O_ASYNC;
//   - ioctl FIOASYNC.
//
// The kernel reads fcntl's and ioctl's command as a 32-bit int and ignores
// the upper half of the register, which the library's Equal compares too:
// a program could set a bit there and pass. Commands are therefore
// compared on their lower 32 bits only (lowEqual).
func argumentRules() []seccomp.NameWithConditions {
	rules := []seccomp.NameWithConditions{
		{Name: "prctl", Conditions: seccomp.ArgumentConditions{{Argument: 0, Operation: seccomp.NotEqual, Value: prGetSeccomp}}},
		// pid is an int: a set upper half only makes NotEqual refuse more.
		{Name: "prlimit64", Conditions: seccomp.ArgumentConditions{{Argument: 0, Operation: seccomp.NotEqual, Value: 0}}},
		{Name: "prlimit64", Conditions: seccomp.ArgumentConditions{{Argument: 2, Operation: seccomp.NotEqual, Value: 0}}},
		{Name: "fcntl", Conditions: append(lowEqual(1, fSetFL), seccomp.Condition{Argument: 2, Operation: seccomp.BitsSet, Value: asyncFlag})},
		{Name: "ioctl", Conditions: lowEqual(1, fioAsync)},
	}
	for _, cmd := range []uint32{fSetOwn, fSetSig, fSetOwnEx} {
		rules = append(rules, seccomp.NameWithConditions{Name: "fcntl", Conditions: lowEqual(1, cmd)})
	}
	return rules
}

// lowEqual is the condition "the lower 32 bits of argument arg equal v",
// whatever the upper 32 bits hold. The library has no masked compare, but
// its BitsSet and BitsNotSet with a 32-bit value test only the lower half:
// every bit of v set, and every other bit of the lower half clear.
func lowEqual(arg uint32, v uint32) seccomp.ArgumentConditions {
	var c seccomp.ArgumentConditions
	for bit := uint32(1); bit != 0; bit <<= 1 {
		if v&bit != 0 {
			c = append(c, seccomp.Condition{Argument: arg, Operation: seccomp.BitsSet, Value: uint64(bit)})
		}
	}
	return append(c, seccomp.Condition{Argument: arg, Operation: seccomp.BitsNotSet, Value: uint64(^v)})
}

// knownSyscalls returns the names among names that the architecture has.
func knownSyscalls(info *arch.Info, names []string) []string {
	var out []string
	for _, n := range names {
		if _, ok := info.SyscallNames[n]; ok {
			out = append(out, n)
		}
	}
	return out
}

// denyListProgram assembles a filter that allows every system call but
// those of groups, as struct sock_filter records (8 bytes each, native byte
// order). The library lets a foreign architecture through to the default
// action; with a deny list that would be a way around it, so an
// architecture guard in front kills the process instead.
func denyListProgram(info *arch.Info, groups []seccomp.SyscallGroup) ([]byte, error) {
	policy := seccomp.Policy{DefaultAction: seccomp.ActionAllow, Syscalls: groups}
	insns, err := policy.Assemble()
	if err != nil {
		return nil, fmt.Errorf("sandbox: seccomp: %w", err)
	}
	guard := []bpf.Instruction{
		bpf.LoadAbsolute{Off: 4, Size: 4}, // seccomp_data.arch
		bpf.JumpIf{Cond: bpf.JumpEqual, Val: uint32(info.ID), SkipTrue: 1},
		bpf.RetConstant{Val: uint32(seccomp.ActionKillProcess)},
	}
	raw, err := bpf.Assemble(append(guard, insns...))
	if err != nil {
		return nil, fmt.Errorf("sandbox: seccomp: %w", err)
	}
	out := make([]byte, 0, 8*len(raw))
	for _, r := range raw {
		out = binary.NativeEndian.AppendUint16(out, r.Op)
		out = append(out, r.Jt, r.Jf)
		out = binary.NativeEndian.AppendUint32(out, r.K)
	}
	return out, nil
}
