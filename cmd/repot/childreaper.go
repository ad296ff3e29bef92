package repot

import (
	"os"
	"os/exec"
	"os/signal"
	"syscall"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// adoptsOrphans says whether this process inherits the orphans of its
// children's process trees: it is PID 1 (of a container: `gpu-telemetry
// --exec` is the vLLM container's entrypoint), or a child subreaper.
func adoptsOrphans() bool {
	if os.Getpid() == 1 {
		return true
	}
	var v int32
	_, _, errno := syscall.Syscall(syscall.SYS_PRCTL, unix.PR_GET_CHILD_SUBREAPER, uintptr(unsafe.Pointer(&v)), 0)
	return errno == 0 && v != 0
}

// reapUntilExit waits for cmd's process like cmd.Wait, and meanwhile
// reaps every orphan this process adopted (vLLM's worker processes, a
// helper a tokenizer left behind) as it exits, so that none stays a zombie
// while the server runs: what a container's init does. It sends the child's
// exit code once the child has exited.
func reapUntilExit(cmd *exec.Cmd) <-chan int {
	ch := make(chan int, 1)
	chld := make(chan os.Signal, 1)
	signal.Notify(chld, syscall.SIGCHLD)
	go func() {
		defer signal.Stop(chld)
		// SIGCHLDs coalesce, and one may have come before Notify: look
		// every second as well.
		tick := time.NewTicker(time.Second)
		defer tick.Stop()
		for {
			if ws, exited := reapExited(cmd.Process.Pid); exited {
				_ = cmd.Process.Release()
				ch <- waitStatusCode(ws)
				return
			}
			select {
			case <-chld:
			case <-tick.C:
			}
		}
	}()
	return ch
}

// reapExited reaps every child that has exited, without blocking, and
// reports the wait status of main if it was among them.
func reapExited(main int) (ws syscall.WaitStatus, mainExited bool) {
	for {
		var st syscall.WaitStatus
		pid, err := syscall.Wait4(-1, &st, syscall.WNOHANG, nil)
		if err == syscall.EINTR {
			continue
		}
		if err != nil || pid <= 0 {
			return ws, mainExited
		}
		if pid == main {
			ws, mainExited = st, true
		}
	}
}

// waitStatusCode is the child's exit code, or 128+N when signal N killed it.
func waitStatusCode(ws syscall.WaitStatus) int {
	if ws.Signaled() {
		return 128 + int(ws.Signal())
	}
	return ws.ExitStatus()
}
