//go:build !linux

package sandbox

import "syscall"

// isolation is one way of starting the zygote. Outside Linux only a process
// group is available (and no seccomp filter, so NewPython fails unless
// Options.Min is MinNone).
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

func killProcess(pid int) {
	_ = syscall.Kill(pid, syscall.SIGKILL)
	_ = syscall.Kill(-pid, syscall.SIGKILL)
}
