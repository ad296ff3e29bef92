package sandbox

import (
	"bytes"
	"net"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// canaryEnv is set in the test process; its value must never reach a
// program's output.
const (
	canaryEnv   = "REPOT_SANDBOX_CANARY"
	canaryValue = "canary-value-5f1e0c7a9b"
	secretText  = "secret-file-content-8d2b4e"
)

func TestMain(m *testing.M) {
	os.Setenv(canaryEnv, canaryValue)
	os.Exit(m.Run())
}

// fixture is the world around a batch of sandbox runs: a TCP listener that
// must receive no connection, a directory outside the sandbox that must not
// change, and the parent of the runs' temporary directories, which must be
// empty at the end.
type fixture struct {
	sb       *Python
	port     int
	conns    atomic.Int64
	outside  string
	root     string
	passwd   string // first line of /etc/passwd, when readable
	snapshot map[string]string
}

func newFixture(t *testing.T, opts Options) *fixture {
	t.Helper()
	if len(interpreters(opts.Python)) == 0 {
		t.Skip("no python3 on this machine: the sandbox cannot be tested")
	}
	// root is private to the test's uid (t.TempDir's parent is 0700): the
	// sandbox must work without searching the path to its directory.
	f := &fixture{root: t.TempDir(), outside: traversableTempDir(t)}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	f.port = ln.Addr().(*net.TCPAddr).Port
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			f.conns.Add(1)
			c.Close()
		}
	}()
	// Readable and traversable by others, but not writable: a program that
	// escaped the static check must still fail to change it.
	if err := os.Chmod(f.outside, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(f.outside, "secret.txt"), []byte(secretText), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(f.outside, "keep.txt"), []byte("unchanged"), 0o644); err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile("/etc/passwd"); err == nil {
		f.passwd, _, _ = strings.Cut(string(b), "\n")
	}
	f.snapshot = snapshotDir(t, f.outside)
	opts.TempDir = f.root
	sb, err := NewPython(opts)
	if err != nil {
		t.Fatalf("NewPython: %v", err)
	}
	// Registered after t.TempDir, so it runs first: the zygotes and the
	// directories made ahead are gone before the test removes f.root.
	t.Cleanup(sb.Close)
	f.sb = sb
	t.Logf("sandbox: %s, isolation %s", sb.Interpreter(), sb.Mode())
	return f
}

// traversableTempDir makes a directory directly in the system temporary
// directory (t.TempDir's parent is private) that the sandbox's uid (nobody,
// when the tests run as root) can traverse.
func traversableTempDir(t *testing.T) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "repot-sandbox-test-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if err := os.Chmod(dir, 0o711); err != nil {
		t.Fatal(err)
	}
	return dir
}

// expand fills the placeholders a program may use.
func (f *fixture) expand(code string) string {
	return strings.NewReplacer("{{PORT}}", strconv.Itoa(f.port), "{{OUTSIDE}}", f.outside,
		"{{CANARY_ENV}}", canaryEnv, "{{ESCAPE}}", escapePath,
		"{{RUNNER_PID}}", strconv.Itoa(os.Getpid())).Replace(code)
}

// checkOutput fails when anything secret appears in r.
func (f *fixture) checkOutput(t *testing.T, r Result) {
	t.Helper()
	all := r.Stdout + "\x00" + r.Stderr + "\x00" + r.Failure
	// REPOT_API_KEY is set when CI runs the catalogue the way a runner pod
	// holds it; AWS_SECRET_ACCESS_KEY as if the runner held the artifact
	// store's key (in a pod only the ledger sidecar does).
	for _, secret := range []string{canaryValue, secretText, f.passwd, os.Getenv("REPOT_API_KEY"), os.Getenv("AWS_SECRET_ACCESS_KEY")} {
		if secret != "" && strings.Contains(all, secret) {
			t.Errorf("output leaks %q", secret)
		}
	}
}

// checkWorld verifies, after all runs, that nothing outside changed.
func (f *fixture) checkWorld(t *testing.T) {
	t.Helper()
	if n := f.conns.Load(); n != 0 {
		t.Errorf("the host listener received %d connections", n)
	}
	if got := snapshotDir(t, f.outside); !mapsEqual(got, f.snapshot) {
		t.Errorf("outside directory changed: %v, want %v", got, f.snapshot)
	}
	ahead := f.sb.dirs.settled()
	entries, err := os.ReadDir(f.root)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		dir := filepath.Join(f.root, e.Name())
		if !ahead[dir] {
			t.Errorf("temporary directory left behind: %s", e.Name())
			continue
		}
		if inside, err := os.ReadDir(dir); err != nil || len(inside) != 0 {
			t.Errorf("directory made ahead for the next program is not empty: %s %v %v", e.Name(), inside, err)
		}
	}
}

// settled waits for d's background work and returns the directories made
// ahead for the next programs, the only ones that may exist between runs.
func (d *runDirs) settled() map[string]bool {
	d.wg.Wait()
	out := map[string]bool{}
	for {
		select {
		case dir := <-d.ready:
			out[dir] = true
		default:
			for dir := range out {
				d.ready <- dir
			}
			return out
		}
	}
}

func snapshotDir(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		v := info.Mode().String()
		if !d.IsDir() {
			b, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			v += ":" + string(b)
		}
		out[path] = v
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func mapsEqual(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

// processWatch records the processes a sandbox starts so a test can check
// that none of them, nor anything they spawned, outlives the run.
type processWatch struct {
	mu   sync.Mutex
	pid  int
	nsID string // the run's PID namespace, when it has its own
}

func (w *processWatch) onStart(pid int) {
	ns, _ := os.Readlink("/proc/" + strconv.Itoa(pid) + "/ns/pid")
	self, _ := os.Readlink("/proc/self/ns/pid")
	w.mu.Lock()
	defer w.mu.Unlock()
	w.pid = pid
	if ns != self {
		w.nsID = ns
	}
}

// leftovers lists live processes in the run's process group, session or PID
// namespace.
func (w *processWatch) leftovers() []string {
	w.mu.Lock()
	pid, nsID := w.pid, w.nsID
	w.mu.Unlock()
	if pid == 0 {
		return []string{"no process was started"}
	}
	var out []string
	dirs, _ := os.ReadDir("/proc")
	for _, d := range dirs {
		p, err := strconv.Atoi(d.Name())
		if err != nil {
			continue
		}
		stat, err := os.ReadFile("/proc/" + d.Name() + "/stat")
		if err != nil {
			continue
		}
		// Fields after the command name: state ppid pgrp session ...
		i := bytes.LastIndexByte(stat, ')')
		fields := strings.Fields(string(stat[i+1:]))
		if len(fields) < 4 || fields[0] == "Z" {
			continue
		}
		if fields[2] == strconv.Itoa(pid) || fields[3] == strconv.Itoa(pid) {
			out = append(out, d.Name()+" (group/session)")
			continue
		}
		if nsID != "" {
			if ns, _ := os.Readlink("/proc/" + d.Name() + "/ns/pid"); ns == nsID && p != os.Getpid() {
				out = append(out, d.Name()+" (namespace)")
			}
		}
	}
	sort.Strings(out)
	return out
}

// waitNoLeftovers polls briefly: the kernel finishes tearing down a PID
// namespace asynchronously.
func waitNoLeftovers(w *processWatch) []string {
	var left []string
	for i := 0; i < 50; i++ {
		if left = w.leftovers(); len(left) == 0 {
			return nil
		}
		time.Sleep(20 * time.Millisecond)
	}
	return left
}

// failureMatches reports whether got is one of want; an entry ending in '*'
// matches by prefix.
func failureMatches(got string, want []string) bool {
	for _, w := range want {
		if p, ok := strings.CutSuffix(w, "*"); ok && strings.HasPrefix(got, p) || got == w {
			return true
		}
	}
	return false
}
