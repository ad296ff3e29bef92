package repot

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// The wrapper as a container's PID 1 adopts the orphans of vLLM's process
// tree; it must reap them while the server runs. The test makes a helper
// process (this test binary, re-run) a child subreaper, which adopts
// orphans as PID 1 does, and has it wrap a shell that orphans a short
// sleep: the sleep must be adopted, then reaped (gone from /proc, not a
// zombie) while the shell still runs, and the shell's exit code returned.
func TestRunChildReapsAdoptedOrphans(t *testing.T) {
	if os.Getenv("REPOT_TEST_REAPER_DIR") != "" {
		reaperHelper()
		return
	}
	dir := t.TempDir()
	cmd := exec.Command(os.Args[0], "-test.run=^TestRunChildReapsAdoptedOrphans$")
	cmd.Env = append(os.Environ(), "REPOT_TEST_REAPER_DIR="+dir)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("helper: %v\n%s", err, out)
	}
	if !strings.Contains(string(out), "reaped orphan") || !strings.Contains(string(out), "child exit 3") {
		t.Fatalf("helper output:\n%s", out)
	}
}

func reaperHelper() {
	fail := func(format string, a ...any) { fmt.Printf("FAIL: "+format+"\n", a...); os.Exit(1) }
	if err := unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0); err != nil {
		fail("PR_SET_CHILD_SUBREAPER: %v", err)
	}
	if !adoptsOrphans() {
		fail("adoptsOrphans() is false for a subreaper")
	}
	pidFile := filepath.Join(os.Getenv("REPOT_TEST_REAPER_DIR"), "orphan")
	done := make(chan struct{})
	var code int
	go func() {
		defer close(done)
		var err error
		code, err = runChild(context.Background(), []string{"sh", "-c", `(sleep 0.3 & echo $! > "$0"); sleep 3; exit 3`, pidFile}, nil)
		if err != nil {
			fail("runChild: %v", err)
		}
	}()
	var orphan int
	deadline := time.Now().Add(2 * time.Second)
	for orphan == 0 && time.Now().Before(deadline) {
		if b, err := os.ReadFile(pidFile); err == nil && strings.HasSuffix(string(b), "\n") {
			orphan, _ = strconv.Atoi(strings.TrimSpace(string(b)))
		}
		time.Sleep(10 * time.Millisecond)
	}
	if orphan == 0 {
		fail("the shell never wrote the orphan's pid")
	}
	adopted, reaped := false, false
	for time.Now().Before(deadline.Add(time.Second)) && !reaped {
		stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", orphan))
		if err != nil {
			reaped = true // gone: exited and reaped
			break
		}
		// pid (comm) state ppid ...
		f := strings.Fields(string(stat[strings.LastIndexByte(string(stat), ')')+1:]))
		if ppid, _ := strconv.Atoi(f[1]); ppid == os.Getpid() {
			adopted = true
		}
		time.Sleep(10 * time.Millisecond)
	}
	if !adopted || !reaped {
		fail("orphan %d: adopted %t, reaped %t (a zombie stays in /proc until it is reaped)", orphan, adopted, reaped)
	}
	fmt.Println("reaped orphan", orphan)
	select {
	case <-done:
		fail("the wrapped shell ended before its orphan was checked")
	default:
	}
	<-done
	fmt.Println("child exit", code)
	os.Exit(0)
}
