//go:build linux

package sandbox

import (
	"os"
	"syscall"
)

// nobody is the unprivileged uid/gid programs run as when the runner is
// root: RLIMIT_NPROC is not enforced for root, and root could write
// anywhere.
const nobody = 65534

// isolation is one way of starting the zygote, and with it every program.
type isolation struct {
	// name is reported by Python.Mode.
	name string
	// attr returns fresh process attributes for the zygote.
	attr func() *syscall.SysProcAttr
	// owner is the host uid/gid that must own the run's directory, or -1
	// when the runner's own uid is used.
	owner int
}

// isolations lists the modes to try for want, strongest first. There is no
// PID namespace: the runner kills each program by its (host) pid and
// process group, and the seccomp filter forbids new processes.
func isolations(want Isolation) []isolation {
	root := os.Geteuid() == 0
	uid, gid, owner := os.Getuid(), os.Getgid(), -1
	if root {
		uid, gid, owner = nobody, nobody, nobody
	}
	ns := func(name string, flags uintptr) isolation {
		return isolation{name: name, owner: owner, attr: func() *syscall.SysProcAttr {
			// The namespace maps the program's uid to itself, so it holds
			// no capability once python3 starts (execve as a non-zero uid).
			a := &syscall.SysProcAttr{
				Setpgid:     true,
				Pdeathsig:   syscall.SIGKILL, // the runner died: so does the zygote
				Cloneflags:  flags,
				UidMappings: []syscall.SysProcIDMap{{ContainerID: uid, HostID: uid, Size: 1}},
				GidMappings: []syscall.SysProcIDMap{{ContainerID: gid, HostID: gid, Size: 1}},
				Credential:  &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid), NoSetGroups: true},
			}
			if root {
				// Drop root's supplementary groups too.
				a.GidMappingsEnableSetgroups = true
				a.Credential.NoSetGroups = false
				a.Credential.Groups = []uint32{}
			}
			return a
		}}
	}
	full := ns("user+net+ipc+uts namespaces",
		syscall.CLONE_NEWUSER|syscall.CLONE_NEWNET|syscall.CLONE_NEWIPC|syscall.CLONE_NEWUTS)
	netOnly := ns("user+net namespaces", syscall.CLONE_NEWUSER|syscall.CLONE_NEWNET)
	none := isolation{name: "none", owner: owner, attr: func() *syscall.SysProcAttr {
		a := &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
		if root {
			a.Credential = &syscall.Credential{Uid: nobody, Gid: nobody, Groups: []uint32{}}
		}
		return a
	}}
	switch want {
	case IsolationNamespaces:
		return []isolation{full, netOnly}
	case IsolationNone:
		return []isolation{none}
	default:
		return []isolation{full, netOnly, none}
	}
}

// killProcess sends SIGKILL to pid and to the process group pid leads
// (which the program cannot leave: setpgid and setsid are filtered).
func killProcess(pid int) {
	_ = syscall.Kill(pid, syscall.SIGKILL)
	_ = syscall.Kill(-pid, syscall.SIGKILL)
}
