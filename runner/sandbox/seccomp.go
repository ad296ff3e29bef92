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
// any process, leave its process group, or reach the kernel's namespace,
// mount, key, BPF, io_uring and perf interfaces.
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

// prSetSeccompGet is PR_GET_SECCOMP, the one prctl a child may still make
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
		{Action: seccomp.ActionErrno, NamesWithCondtions: []seccomp.NameWithConditions{{
			Name:       "prctl",
			Conditions: seccomp.ArgumentConditions{{Argument: 0, Operation: seccomp.NotEqual, Value: prGetSeccomp}},
		}}},
	})
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
