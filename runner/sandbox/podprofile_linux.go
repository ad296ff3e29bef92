//go:build linux

package sandbox

import (
	"fmt"

	seccomp "github.com/elastic/go-seccomp-bpf"
	"github.com/elastic/go-seccomp-bpf/arch"
	"golang.org/x/sys/unix"
)

// namespaceCloneFlags are the clone(2) flags that make new namespaces.
const namespaceCloneFlags = unix.CLONE_NEWUSER | unix.CLONE_NEWNS | unix.CLONE_NEWNET | unix.CLONE_NEWPID |
	unix.CLONE_NEWIPC | unix.CLONE_NEWUTS | unix.CLONE_NEWCGROUP

// RuntimeDefaultProgram assembles a filter that stands in for a container
// runtime's RuntimeDefault seccomp profile as it applies to a container
// without CAP_SYS_ADMIN: no namespaces (unshare, setns, clone with namespace
// flags; clone3 is ENOSYS so a libc falls back to clone), no mount, keyctl,
// bpf, perf_event_open, userfaultfd or kernel-module and reboot calls.
// The local cluster's process nodes apply it (through `repot sandbox
// restrict-pod`) to containers whose securityContext asks for RuntimeDefault,
// so the end-to-end tests meet the weakest setting a real runner pod gives.
// Like the sandbox's own filter (denyListProgram), it kills a process that
// makes a system call of another architecture.
func RuntimeDefaultProgram() ([]byte, error) {
	info, err := arch.GetInfo("")
	if err != nil {
		return nil, fmt.Errorf("sandbox: seccomp: %w", err)
	}
	names := knownSyscalls(info, []string{"unshare", "setns", "mount", "umount2", "pivot_root", "fsopen", "fsmount",
		"move_mount", "open_tree", "keyctl", "add_key", "request_key", "bpf", "perf_event_open", "userfaultfd",
		"kexec_load", "kexec_file_load", "init_module", "finit_module", "delete_module", "reboot", "swapon",
		"swapoff", "acct", "syslog", "quotactl", "lookup_dcookie", "open_by_handle_at"})
	return denyListProgram(info, []seccomp.SyscallGroup{
		{Action: seccomp.ActionErrno, Names: names},
		{Action: seccomp.ActionErrno | seccomp.Action(unix.ENOSYS), Names: []string{"clone3"}},
		{Action: seccomp.ActionErrno, NamesWithCondtions: []seccomp.NameWithConditions{{
			Name:       "clone",
			Conditions: seccomp.ArgumentConditions{{Argument: 0, Operation: seccomp.BitsSet, Value: namespaceCloneFlags}},
		}}},
	})
}
