package proc

import (
	"os/exec"
	"syscall"
	"testing"
	"time"
)

func TestStopKillsWholeGroup(t *testing.T) {
	// The shell ignores SIGTERM and its child sleeps: Stop must escalate to
	// SIGKILL and take the child with it.
	cmd := exec.Command("sh", "-c", `trap "" TERM; sleep 60 & echo $! ; wait`)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := Start(cmd); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 32)
	n, _ := out.Read(buf)
	var child int
	for _, c := range buf[:n] {
		if c >= '0' && c <= '9' {
			child = child*10 + int(c-'0')
		}
	}
	exited := make(chan struct{})
	go func() { _ = cmd.Wait(); close(exited) }()
	if !Stop(cmd.Process.Pid, exited, 200*time.Millisecond) {
		t.Errorf("Stop reported a graceful exit for a shell that ignores SIGTERM")
	}
	// The child is killed with the group; give the kernel a moment to reap it
	// (it is reparented, so we cannot wait for it).
	for i := 0; i < 100; i++ {
		if err := syscall.Kill(child, 0); err != nil {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Errorf("child %d of the process group still alive after Stop", child)
}

func TestStopGraceful(t *testing.T) {
	cmd := exec.Command("sleep", "60")
	if err := Start(cmd); err != nil {
		t.Fatal(err)
	}
	exited := make(chan struct{})
	go func() { _ = cmd.Wait(); close(exited) }()
	if Stop(cmd.Process.Pid, exited, 10*time.Second) {
		t.Errorf("sleep was killed although it exits on SIGTERM")
	}
}
