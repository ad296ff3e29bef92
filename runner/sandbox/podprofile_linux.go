//go:build linux

package sandbox

import (
	"encoding/binary"
	"fmt"

	seccomp "github.com/elastic/go-seccomp-bpf"
	"github.com/elastic/go-seccomp-bpf/arch"
	"golang.org/x/net/bpf"
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
func RuntimeDefaultProgram() ([]byte, error) {
	info, err := arch.GetInfo("")
	if err != nil {
		return nil, fmt.Errorf("sandbox: seccomp: %w", err)
	}
	var names []string
	for _, n := range []string{"unshare", "setns", "mount", "umount2", "pivot_root", "fsopen", "fsmount",
		"move_mount", "open_tree", "keyctl", "add_key", "request_key", "bpf", "perf_event_open", "userfaultfd",
		"kexec_load", "kexec_file_load", "init_module", "finit_module", "delete_module", "reboot", "swapon",
		"swapoff", "acct", "syslog", "quotactl", "lookup_dcookie", "open_by_handle_at"} {
		if _, ok := info.SyscallNames[n]; ok {
			names = append(names, n)
		}
	}
	policy := seccomp.Policy{
		DefaultAction: seccomp.ActionAllow,
		Syscalls: []seccomp.SyscallGroup{
			{Action: seccomp.ActionErrno, Names: names},
			{Action: seccomp.ActionErrno | seccomp.Action(unix.ENOSYS), Names: []string{"clone3"}},
			{Action: seccomp.ActionErrno, NamesWithCondtions: []seccomp.NameWithConditions{{
				Name:       "clone",
				Conditions: seccomp.ArgumentConditions{{Argument: 0, Operation: seccomp.BitsSet, Value: namespaceCloneFlags}},
			}}},
		},
	}
	insns, err := policy.Assemble()
	if err != nil {
		return nil, fmt.Errorf("sandbox: seccomp: %w", err)
	}
	raw, err := bpf.Assemble(insns)
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
