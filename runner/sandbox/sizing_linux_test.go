//go:build linux

package sandbox

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// hungryPrograms is how many programs the survival tests run at once, each
// allocating (and, bytearray being zero-filled, touching) 900 MB.
const hungryPrograms = 4

const hungryProgram = "b = bytearray(900 * 1024 * 1024)\nprint('allocated', len(b))\n"

// runHungry runs hungryPrograms copies of hungryProgram at once in a
// sandbox sized s and returns their failures.
func runHungry(t *testing.T, s Sizing) []string {
	t.Helper()
	opts := Options{Concurrency: s.Concurrency, MemoryBytes: s.MemoryBytes, Timeout: 60 * time.Second, TempDir: t.TempDir()}
	if len(interpreters("")) == 0 {
		t.Skip("no python3 on this machine: the sandbox cannot be tested")
	}
	sb, err := NewPython(opts)
	if err != nil {
		t.Fatalf("NewPython: %v", err)
	}
	defer sb.Close()
	failures := make([]string, hungryPrograms)
	var wg sync.WaitGroup
	for i := range failures {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r, err := sb.Run(context.Background(), hungryProgram)
			if err != nil {
				failures[i] = "infrastructure error: " + err.Error()
				return
			}
			failures[i] = r.Failure
		}()
	}
	wg.Wait()
	return failures
}

// allMemory is what every hungry program must come back as.
var allMemory = []string{FailureMemory, FailureMemory, FailureMemory, FailureMemory}

// TestSizedSandboxRecordsMemoryErrors runs the hungry programs at once in a
// sandbox sized for a (pretended) 1 GiB container: each must fail with a
// recorded MemoryError at its address-space limit, which keeps what they
// really use far below the limit.
func TestSizedSandboxRecordsMemoryErrors(t *testing.T) {
	s := Size(SizeRequest{Limits: ContainerLimits{MemoryBytes: gib}, CPUs: 4, Concurrency: hungryPrograms})
	if diff := cmp.Diff(allMemory, runHungry(t, s)); diff != "" {
		t.Errorf("failures with %s (-want +got):\n%s", s, diff)
	}
}

// cgroupChildEnv marks the test binary started inside the memory cgroup.
const cgroupChildEnv = "REPOT_SANDBOX_CGROUP_CHILD"

// TestRunnerSurvivesItsProgramsInAMemoryCgroup is the shard of the issue:
// this test binary runs again inside a new memory cgroup limited to 1 GiB
// (memory.oom.group set on cgroup v2, as the kubelet does, so an OOM kill
// takes the whole group), sizes the sandbox with SizeForContainer exactly as
// `repot run` does, and runs the hungry programs with 4 asked for at once.
// The child must exit normally, every program must be recorded as a
// memory failure, and the cgroup must have seen no OOM kill. Needs root and
// a writable memory cgroup hierarchy; skipped elsewhere
// (TestSizedSandboxRecordsMemoryErrors covers the sizing there).
func TestRunnerSurvivesItsProgramsInAMemoryCgroup(t *testing.T) {
	if os.Getenv(cgroupChildEnv) != "" {
		cgroupChild(t)
		return
	}
	if len(interpreters("")) == 0 {
		t.Skip("no python3 on this machine: the sandbox cannot be tested")
	}
	dir, oomKills := memoryCgroup(t, gib)
	cmd := exec.Command("/bin/sh", "-c", `echo $$ > "$1/cgroup.procs" && shift && exec "$@"`, "sh", dir,
		os.Args[0], "-test.run=^TestRunnerSurvivesItsProgramsInAMemoryCgroup$", "-test.v")
	cmd.Env = append(os.Environ(), cgroupChildEnv+"=1")
	out, err := cmd.CombinedOutput()
	t.Logf("child in %s:\n%s", dir, out)
	if err != nil {
		t.Fatalf("the runner in the 1 GiB cgroup did not survive: %v", err)
	}
	var got struct {
		Limits   ContainerLimits
		Sizing   string
		Failures []string
	}
	found := false
	for sc := bufio.NewScanner(strings.NewReader(string(out))); sc.Scan(); {
		if line, ok := strings.CutPrefix(strings.TrimSpace(sc.Text()), "RESULT "); ok {
			if err := json.Unmarshal([]byte(line), &got); err != nil {
				t.Fatal(err)
			}
			found = true
		}
	}
	if !found {
		t.Fatal("the child printed no RESULT line")
	}
	if got.Limits.MemoryBytes != gib {
		t.Errorf("the child read a memory limit of %d bytes, want %d (sizing: %s)", got.Limits.MemoryBytes, gib, got.Sizing)
	}
	if diff := cmp.Diff(allMemory, got.Failures); diff != "" {
		t.Errorf("failures with %s (-want +got):\n%s", got.Sizing, diff)
	}
	if n := oomKills(); n != 0 {
		t.Errorf("the cgroup saw %d OOM kills", n)
	}
}

// cgroupChild is the runner's side, inside the cgroup: it prints what it
// read and how its programs ended as "RESULT {json}".
func cgroupChild(t *testing.T) {
	s := SizeForContainer(hungryPrograms, 0)
	t.Logf("sandbox sizing: %s", s)
	b, err := json.Marshal(map[string]any{"Limits": s.Limits, "Sizing": s.String(), "Failures": runHungry(t, s)})
	if err != nil {
		t.Fatal(err)
	}
	fmt.Printf("\nRESULT %s\n", b)
}

// memoryCgroup makes a cgroup below this process's own, limited to limit
// bytes of memory, and returns it with a function that counts the OOM
// kills in it. It is removed at the end of the test. The test is skipped
// where no such cgroup can be made (not root, no writable memory
// controller).
func memoryCgroup(t *testing.T, limit int64) (string, func() int) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("making a memory cgroup needs root")
	}
	own := ownCgroups(os.DirFS("/"))
	name := fmt.Sprintf("repot-sandbox-test-%d", os.Getpid())
	var dir, limitFile, eventsFile string
	if _, err := os.Stat("/sys/fs/cgroup/cgroup.controllers"); err == nil {
		// cgroup v2. The memory controller must be enabled for children
		// of this process's cgroup.
		dir = filepath.Join("/sys/fs/cgroup", own[""], name)
		limitFile, eventsFile = "memory.max", "memory.events"
	} else if p, ok := own["memory"]; ok {
		dir = filepath.Join("/sys/fs/cgroup/memory", p, name)
		limitFile, eventsFile = "memory.limit_in_bytes", "memory.oom_control"
	} else {
		t.Skip("no memory cgroup hierarchy")
	}
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Skipf("cannot make a cgroup: %v", err)
	}
	t.Cleanup(func() {
		// The child and its processes are gone once it exited; the kernel
		// may take a moment to let the group go.
		for i := 0; ; i++ {
			err := os.Remove(dir)
			if err == nil || errors.Is(err, os.ErrNotExist) {
				return
			}
			if i == 50 {
				t.Errorf("removing %s: %v", dir, err)
				return
			}
			time.Sleep(100 * time.Millisecond)
		}
	})
	if err := os.WriteFile(filepath.Join(dir, limitFile), []byte(strconv.FormatInt(limit, 10)), 0o644); err != nil {
		t.Skipf("cannot limit the cgroup's memory (%s): %v", limitFile, err)
	}
	if limitFile == "memory.max" {
		if err := os.WriteFile(filepath.Join(dir, "memory.oom.group"), []byte("1"), 0o644); err != nil {
			t.Fatalf("memory.oom.group: %v", err)
		}
	}
	return dir, func() int {
		b, err := os.ReadFile(filepath.Join(dir, eventsFile))
		if err != nil {
			t.Errorf("reading %s: %v", eventsFile, err)
			return -1
		}
		for _, line := range strings.Split(string(b), "\n") {
			if v, ok := strings.CutPrefix(line, "oom_kill "); ok {
				n, _ := strconv.Atoi(strings.TrimSpace(v))
				return n
			}
		}
		t.Errorf("%s has no oom_kill count: %q", eventsFile, b)
		return -1
	}
}
