//go:build linux

package sandbox

import (
	"os"
	"syscall"
	"unsafe"
)

// nobody is the unprivileged uid/gid programs run as when the runner is
// root: RLIMIT_NPROC is not enforced for root, and root could write
// anywhere.
const nobody = 65534

// isolation is one way of starting the sandboxed process.
type isolation struct {
	// name is reported by Python.Mode.
	name string
	// attr returns fresh process attributes for one run.
	attr func() *syscall.SysProcAttr
	// owner is the host uid/gid that must own the run's directory, or -1
	// when the runner's own uid is used.
	owner int
}

// isolations lists the modes to try for want, strongest first.
func isolations(want Isolation) []isolation {
	root := os.Geteuid() == 0
	hostID, owner := os.Getuid(), -1
	hostGID := os.Getgid()
	if root {
		hostID, hostGID, owner = nobody, nobody, nobody
	}
	ns := func(name string, flags uintptr) isolation {
		return isolation{name: name, owner: owner, attr: func() *syscall.SysProcAttr {
			a := &syscall.SysProcAttr{
				Setpgid:     true,
				Pdeathsig:   syscall.SIGKILL, // the runner died: so does the program
				Cloneflags:  flags,
				UidMappings: []syscall.SysProcIDMap{{ContainerID: 0, HostID: hostID, Size: 1}},
				GidMappings: []syscall.SysProcIDMap{{ContainerID: 0, HostID: hostGID, Size: 1}},
			}
			if root {
				// Drop root's supplementary groups inside the namespace.
				a.GidMappingsEnableSetgroups = true
				a.Credential = &syscall.Credential{Uid: 0, Gid: 0, Groups: []uint32{}}
			}
			return a
		}}
	}
	full := ns("user+net+pid+ipc+uts namespaces",
		syscall.CLONE_NEWUSER|syscall.CLONE_NEWNET|syscall.CLONE_NEWPID|syscall.CLONE_NEWIPC|syscall.CLONE_NEWUTS)
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

// killGroup sends SIGKILL to the process group led by pid.
func killGroup(pid int) { _ = syscall.Kill(-pid, syscall.SIGKILL) }

// waitExited blocks until pid has exited without reaping it (waitid with
// WNOWAIT), so that its pid, and with it the process-group id, cannot be
// reused while leftovers of the group are killed.
func waitExited(pid int) {
	var info [128]byte // siginfo_t
	for {
		_, _, e := syscall.Syscall6(syscall.SYS_WAITID, 1 /* P_PID */, uintptr(pid),
			uintptr(unsafe.Pointer(&info[0])), syscall.WEXITED|syscall.WNOWAIT, 0, 0)
		if e != syscall.EINTR {
			return
		}
	}
}
