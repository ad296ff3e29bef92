//go:build !linux

package sandbox

import "syscall"

// isolation is one way of starting the sandboxed process. Outside Linux
// only a process group is available.
type isolation struct {
	name  string
	attr  func() *syscall.SysProcAttr
	owner int
}

func isolations(want Isolation) []isolation {
	if want == IsolationNamespaces {
		return nil
	}
	return []isolation{{name: "none", owner: -1, attr: func() *syscall.SysProcAttr {
		return &syscall.SysProcAttr{Setpgid: true}
	}}}
}

func killGroup(pid int) { _ = syscall.Kill(-pid, syscall.SIGKILL) }

// waitExited is a no-op outside Linux; the group is killed after reaping.
func waitExited(pid int) {}
