// Package proc starts the local cluster's child processes so that none
// outlives it: each child leads its own process group (so signals reach its
// descendants too) and gets SIGKILL from the kernel when the local cluster
// dies (Pdeathsig).
package proc

import (
	"errors"
	"os/exec"
	"runtime"
	"sync"
	"syscall"
	"time"
)

type startReq struct {
	cmd  *exec.Cmd
	done chan error
}

var (
	spawnOnce sync.Once
	spawnCh   chan startReq
)

// spawner forks every child from one OS thread that never exits. Pdeathsig
// fires when the *thread* that forked a child exits, and the Go runtime may
// retire threads, so children are started from a goroutine locked to its
// thread for the life of the process.
func spawner() {
	runtime.LockOSThread()
	for req := range spawnCh {
		req.done <- req.cmd.Start()
	}
}

// Start starts cmd as the leader of a new process group that receives
// SIGKILL when this process dies.
func Start(cmd *exec.Cmd) error {
	spawnOnce.Do(func() {
		spawnCh = make(chan startReq)
		go spawner()
	})
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Setpgid = true
	cmd.SysProcAttr.Pdeathsig = syscall.SIGKILL
	done := make(chan error, 1)
	spawnCh <- startReq{cmd, done}
	return <-done
}

// SignalGroup sends sig to the process group led by pid.
func SignalGroup(pid int, sig syscall.Signal) error {
	if pid <= 0 {
		return errors.New("proc: no pid")
	}
	err := syscall.Kill(-pid, sig)
	if errors.Is(err, syscall.ESRCH) {
		return nil
	}
	return err
}

// Stop sends SIGTERM to the process group of pid, waits up to grace for
// exited to be closed, then sends SIGKILL to the group and waits for exited.
// It reports whether the process had to be killed.
func Stop(pid int, exited <-chan struct{}, grace time.Duration) (killed bool) {
	_ = SignalGroup(pid, syscall.SIGTERM)
	t := time.NewTimer(grace)
	defer t.Stop()
	select {
	case <-exited:
		// The leader is gone; make sure nothing of its group lingers.
		_ = SignalGroup(pid, syscall.SIGKILL)
		return false
	case <-t.C:
	}
	_ = SignalGroup(pid, syscall.SIGKILL)
	<-exited
	return true
}
