package sandbox

import (
	"context"
	_ "embed"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

//go:embed wrapper.py
var wrapperSource string

// probeTimeout bounds each start-up probe, generous because the machine may
// be busy.
const probeTimeout = 60 * time.Second

// Python is the real Sandbox: one python3 process per program.
type Python struct {
	opts   Options
	python string
	iso    isolation
	sem    chan struct{}
	// confinement is what the wrapper reported about Landlock.
	confinement string

	// policy is the wrapper's policy: "full" (static check and restricted
	// execution); tests use "runtime" and "off" to exercise the inner layers
	// alone.
	policy string
	// onStart, when set, is called with the pid of each started process.
	onStart func(pid int)
}

var _ Sandbox = (*Python)(nil)

// NewPython finds a working interpreter and the strongest isolation the
// kernel allows (see Options.Isolation) by running a probe program, and
// returns the sandbox. It fails when no python3 can run at all.
func NewPython(opts Options) (*Python, error) {
	opts = opts.withDefaults()
	p := &Python{opts: opts, sem: make(chan struct{}, opts.Concurrency), policy: "full"}
	pythons := interpreters(opts.Python)
	if len(pythons) == 0 {
		return nil, errors.New("sandbox: no python3 found on PATH, in /usr/bin or in /usr/local/bin")
	}
	var errs []error
	for _, iso := range isolations(opts.Isolation) {
		for _, py := range pythons {
			p.python, p.iso = py, iso
			res, st, err := p.runOnce(context.Background(), "print('probe ok')", probeTimeout)
			if err == nil && res.Failure == "" && res.Stdout == "probe ok\n" {
				p.confinement = st.readyInfo
				return p, nil
			}
			if err == nil {
				err = fmt.Errorf("probe failed: %q %q %q", res.Failure, res.Stdout, lastLine(res.Stderr))
			}
			errs = append(errs, fmt.Errorf("%s with isolation %q: %w", py, iso.name, err))
		}
	}
	if len(errs) == 0 {
		return nil, fmt.Errorf("sandbox: isolation %q is not available on this system", opts.Isolation)
	}
	hint := ""
	if os.Geteuid() == 0 {
		hint = " (running as root, programs run as uid 65534, which must be able to execute the interpreter)"
	}
	return nil, fmt.Errorf("sandbox: no usable python3%s: %w", hint, errors.Join(errs...))
}

// Mode names the isolation in use: the namespaces ("user+net+pid+ipc+uts
// namespaces", "user+net namespaces" or "none") and whether Landlock
// confines the process, for example
// "user+net+pid+ipc+uts namespaces, landlock ABI 7". Log it at start-up.
func (p *Python) Mode() string { return p.iso.name + ", " + p.confinement }

// Interpreter is the python3 executable in use.
func (p *Python) Interpreter() string { return p.python }

// interpreters lists the python3 executables to try.
func interpreters(explicit string) []string {
	if explicit != "" {
		return []string{explicit}
	}
	var out []string
	seen := map[string]bool{}
	add := func(s string) {
		if s != "" && !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	if path, err := exec.LookPath("python3"); err == nil {
		// PATH may hold a launcher script (pyenv); ask for the real binary.
		// This runs no model code.
		if b, err := exec.Command(path, "-I", "-S", "-c", "import sys; print(sys.executable)").Output(); err == nil {
			add(strings.TrimSpace(string(b)))
		}
		add(path)
	}
	for _, p := range []string{"/usr/bin/python3", "/usr/local/bin/python3"} {
		if _, err := os.Stat(p); err == nil {
			add(p)
		}
	}
	return out
}

// Run executes code in a fresh sandboxed process. It waits for a free slot
// (Options.Concurrency) first; the error is ctx's when ctx ends before or
// during the run, or an infrastructure failure.
func (p *Python) Run(ctx context.Context, code string) (Result, error) {
	if len(code) > p.opts.MaxCodeBytes {
		return Result{ExitCode: -1, Failure: PrefixRejected + fmt.Sprintf("program larger than %d bytes", p.opts.MaxCodeBytes)}, nil
	}
	select {
	case p.sem <- struct{}{}:
	case <-ctx.Done():
		return Result{}, ctx.Err()
	}
	defer func() { <-p.sem }()
	res, _, err := p.runOnce(ctx, code, p.opts.Timeout)
	return res, err
}

// runOnce runs one program without taking a concurrency slot.
func (p *Python) runOnce(ctx context.Context, code string, timeout time.Duration) (Result, wrapperStatus, error) {
	start := p.opts.Now()
	dir, err := p.makeDir()
	if err != nil {
		return Result{}, wrapperStatus{}, err
	}
	defer removeDir(dir)
	res, st, err := p.exec(ctx, dir, code, timeout)
	res.Duration = p.opts.Now().Sub(start)
	return res, st, err
}

// makeDir creates the run's private working directory.
func (p *Python) makeDir() (string, error) {
	dir, err := os.MkdirTemp(p.opts.TempDir, "repot-sandbox-")
	if err != nil {
		return "", fmt.Errorf("sandbox: temp dir: %w", err)
	}
	if p.iso.owner >= 0 {
		if err := os.Chown(dir, p.iso.owner, p.iso.owner); err != nil {
			removeDir(dir)
			return "", fmt.Errorf("sandbox: temp dir: %w", err)
		}
	}
	return dir, nil
}

// removeDir removes dir, first making everything in it writable in case the
// program changed permissions.
func removeDir(dir string) {
	if os.RemoveAll(dir) == nil {
		return
	}
	_ = filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
		if err == nil && d.IsDir() {
			_ = os.Chmod(path, 0o700)
		}
		return nil
	})
	_ = os.RemoveAll(dir)
}

// exec starts the wrapper in dir, feeds it code and supervises it.
func (p *Python) exec(ctx context.Context, dir, code string, timeout time.Duration) (Result, wrapperStatus, error) {
	o := p.opts
	cmd := exec.Command(p.python, "-I", "-S", "-B", "-c", wrapperSource,
		strconv.FormatInt(o.cpuSeconds(), 10), strconv.FormatInt(o.MemoryBytes, 10),
		strconv.FormatInt(o.MaxFileBytes, 10), strconv.Itoa(o.MaxOpenFiles),
		strconv.Itoa(o.MaxProcesses), strconv.Itoa(o.MaxCodeBytes), p.policy)
	cmd.Env = []string{} // empty, not inherited
	cmd.Stdin = strings.NewReader(code)
	cmd.SysProcAttr = p.iso.attr()
	cmd.WaitDelay = time.Second

	var (
		mu       sync.Mutex
		pid      int
		reaped   bool
		timedOut atomic.Bool
	)
	kill := func() {
		mu.Lock()
		defer mu.Unlock()
		if pid > 0 && !reaped {
			killGroup(pid)
		}
	}
	stdout := &capWriter{limit: o.MaxOutputBytes, onExceed: kill}
	stderr := &capWriter{limit: o.MaxStderrBytes}
	cmd.Stdout, cmd.Stderr = stdout, stderr

	statusR, statusW, err := os.Pipe()
	if err != nil {
		return Result{}, wrapperStatus{}, fmt.Errorf("sandbox: status pipe: %w", err)
	}
	defer statusR.Close()
	// The wrapper enters dir through this descriptor (fd 4), so the path to
	// it need not be searchable by the program's uid.
	dirFile, err := os.Open(dir)
	if err != nil {
		statusW.Close()
		return Result{}, wrapperStatus{}, fmt.Errorf("sandbox: open temp dir: %w", err)
	}
	cmd.ExtraFiles = []*os.File{statusW, dirFile}

	err = cmd.Start()
	statusW.Close()
	dirFile.Close()
	if err != nil {
		return Result{}, wrapperStatus{}, fmt.Errorf("sandbox: start %s: %w", p.python, err)
	}
	mu.Lock()
	pid = cmd.Process.Pid
	mu.Unlock()
	if p.onStart != nil {
		p.onStart(pid)
	}

	statusCh := make(chan []byte, 1)
	go func() {
		b, _ := io.ReadAll(io.LimitReader(statusR, 64<<10))
		statusCh <- b
	}()
	timer := time.AfterFunc(timeout, func() { timedOut.Store(true); kill() })
	done := make(chan struct{})
	var cancelled atomic.Bool
	go func() {
		select {
		case <-ctx.Done():
			cancelled.Store(true)
			kill()
		case <-done:
		}
	}()

	waitExited(pid)
	timer.Stop()
	mu.Lock()
	killGroup(pid) // leftovers of the group, before the pid can be reused
	reaped = true
	mu.Unlock()
	waitErr := cmd.Wait()
	close(done)
	var status []byte
	select {
	case status = <-statusCh:
	case <-time.After(time.Second):
		// A leftover process outside the group still holds the pipe.
	}

	var ee *exec.ExitError
	if waitErr != nil && !errors.As(waitErr, &ee) && !errors.Is(waitErr, exec.ErrWaitDelay) {
		return Result{}, wrapperStatus{}, fmt.Errorf("sandbox: wait: %w", waitErr)
	}
	if cancelled.Load() && !timedOut.Load() {
		return Result{}, wrapperStatus{}, ctx.Err()
	}
	out, outputLimit := stdout.text()
	errText, _ := stderr.text()
	ps := cmd.ProcessState
	info := exitInfo{exitCode: ps.ExitCode(), cpu: ps.UserTime() + ps.SystemTime()}
	if ws, ok := ps.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		info.signal = ws.Signal()
	}
	st := parseStatus(status)
	failure, err := classify(runFacts{
		status:      st,
		exit:        info,
		timedOut:    timedOut.Load(),
		outputLimit: outputLimit,
		cpuLimit:    time.Duration(o.cpuSeconds()) * time.Second,
		stderr:      errText,
	})
	res := Result{Stdout: out, Stderr: errText, ExitCode: info.exitCode, Failure: failure}
	return res, st, err
}
