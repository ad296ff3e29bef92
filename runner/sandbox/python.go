package sandbox

import (
	"context"
	_ "embed"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

//go:embed zygote.py
var zygoteSource string

// probeTimeout bounds each start-up probe, generous because the machine may
// be busy.
const probeTimeout = 60 * time.Second

// Python is the real Sandbox: warm zygote processes that fork one fresh,
// confined child per program.
type Python struct {
	opts   Options
	python string
	iso    isolation
	sem    chan struct{}
	pool   *pool
	dirs   *runDirs
	// confinement is what the probe child reported: "seccomp" (or why not)
	// and the Landlock state.
	confinement string

	// policy is the static and runtime policy: "full" (static check and
	// restricted execution); tests use "runtime" and "off" to exercise the
	// inner layers alone.
	policy string
	// onStart, when set, is called with the pid of each started program.
	onStart func(pid int)
	// childCPU sums the CPU time of the programs' processes (nanoseconds),
	// for benchmarks: the zygote, not this process, reaps them.
	childCPU *atomic.Int64
}

var _ Sandbox = (*Python)(nil)

// NewPython finds a working interpreter and the strongest isolation the
// kernel allows (see Options.Isolation and Options.Landlock) by running a
// probe program, and returns the sandbox. It fails when no python3 can run
// at all, and when the confinement is below Options.Min; the error then
// says what to change in the pod. Close stops its processes.
func NewPython(opts Options) (*Python, error) {
	opts = opts.withDefaults()
	if _, err := ParseMinimum(string(opts.Min)); err != nil {
		return nil, err
	}
	filter, err := FilterProgram()
	if err != nil && opts.Min != MinNone {
		return nil, err
	}
	pythons := interpreters(opts.Python)
	if len(pythons) == 0 {
		return nil, errors.New("sandbox: no python3 found on PATH, in /usr/bin or in /usr/local/bin")
	}
	var errs []error
	isos := isolations(opts.Isolation)
	if opts.Min == MinSeccompNamespaces && opts.Isolation == IsolationAuto {
		isos = isolations(IsolationNamespaces)
	}
	for _, iso := range isos {
		for _, py := range pythons {
			p := &Python{opts: opts, python: py, iso: iso, sem: make(chan struct{}, opts.Concurrency), policy: "full",
				childCPU: new(atomic.Int64)}
			p.pool = &pool{start: func() (*zygote, error) { return startZygote(py, iso, opts, filter) }}
			p.dirs = newRunDirs(opts.TempDir, iso.owner, opts.Concurrency)
			res, st, err := p.runOnce(context.Background(), "print('probe ok')", probeTimeout)
			if err == nil && res.Failure == "" && res.Stdout == "probe ok\n" {
				p.confinement = st.readyInfo
				if err := p.meetsMinimum(); err != nil {
					p.Close()
					return nil, err
				}
				return p, nil
			}
			p.Close()
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
	if opts.Min == MinSeccompNamespaces {
		hint += " (--sandbox-min seccomp+namespaces needs user and network namespaces, which this system refuses: allow them, or lower the minimum to seccomp)"
	}
	return nil, fmt.Errorf("sandbox: no usable python3%s: %w", hint, errors.Join(errs...))
}

// meetsMinimum checks the probe's confinement against Options.Min.
func (p *Python) meetsMinimum() error {
	if p.opts.Min == MinNone {
		return nil
	}
	if !hasSeccomp(p.confinement) {
		return fmt.Errorf("sandbox: the seccomp filter is required (--sandbox-min %s) but could not be installed (%s). "+
			"The runner pod must allow a process to add a seccomp filter with no_new_privs: keep seccompProfile "+
			"RuntimeDefault (it allows this) or use a Localhost profile that permits prctl(PR_SET_SECCOMP) and seccomp(2), "+
			"on a kernel with CONFIG_SECCOMP_FILTER; --sandbox-min none runs programs unfiltered (never for untrusted code)",
			p.opts.Min, p.confinement)
	}
	if p.opts.Min == MinSeccompLandlock && !strings.Contains(p.confinement, "landlock ABI") {
		return fmt.Errorf("sandbox: Landlock is required (--sandbox-min %s) but not in force (%s): run on a kernel with "+
			"Landlock enabled (Linux >= 5.13, landlock in lsm=) and do not pass --landlock off, or lower the minimum to seccomp",
			p.opts.Min, p.confinement)
	}
	return nil
}

// hasSeccomp reports whether a child's confinement report says the filter is
// in force.
func hasSeccomp(confinement string) bool {
	return confinement == "seccomp" || strings.HasPrefix(confinement, "seccomp, ")
}

// Close stops the zygote processes.
func (p *Python) Close() {
	p.pool.close()
	p.dirs.close()
}

// Mode names the confinement in use: the namespaces ("user+net+ipc+uts
// namespaces", "user+net namespaces" or "none"), then the seccomp filter
// and Landlock, for example "none, seccomp, landlock ABI 6". It goes into
// every trace and into the evaluation's status.
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
	dir, err := p.dirs.get()
	if err != nil {
		return Result{}, wrapperStatus{}, err
	}
	defer p.dirs.release(dir)
	z, err := p.pool.get()
	if err != nil {
		return Result{}, wrapperStatus{}, err
	}
	res, st, err := p.exec(ctx, z, dir, code, timeout)
	if err != nil && errors.Is(err, errZygote) {
		z.stop()
	} else {
		p.pool.put(z)
	}
	res.Duration = p.opts.Now().Sub(start)
	return res, st, err
}

// makeDir creates the run's private working directory.
// pipes makes n pipes; the caller closes them all.
func pipes(n int) ([][2]*os.File, error) {
	out := make([][2]*os.File, 0, n)
	for i := 0; i < n; i++ {
		r, w, err := os.Pipe()
		if err != nil {
			for _, pr := range out {
				pr[0].Close()
				pr[1].Close()
			}
			return nil, fmt.Errorf("sandbox: pipe: %w", err)
		}
		out = append(out, [2]*os.File{r, w})
	}
	return out, nil
}

// exec hands code to the zygote z, which forks the child that runs it in
// dir, and supervises the child: the wall clock and ctx kill it by pid and
// by process group.
func (p *Python) exec(ctx context.Context, z *zygote, dir, code string, timeout time.Duration) (Result, wrapperStatus, error) {
	o := p.opts
	ps, err := pipes(4) // program, stdout, stderr, status
	if err != nil {
		return Result{}, wrapperStatus{}, err
	}
	progR, progW := ps[0][0], ps[0][1]
	outR, outW := ps[1][0], ps[1][1]
	errR, errW := ps[2][0], ps[2][1]
	stR, stW := ps[3][0], ps[3][1]
	defer outR.Close()
	defer errR.Close()
	defer stR.Close()
	// The child enters dir through this descriptor, so the path to it need
	// not be searchable by the program's uid.
	dirFile, err := os.Open(dir)
	if err != nil {
		for _, f := range []*os.File{progR, progW, outW, errW, stW} {
			f.Close()
		}
		return Result{}, wrapperStatus{}, fmt.Errorf("sandbox: open temp dir: %w", err)
	}
	theirs := []*os.File{progR, outW, errW, stW, dirFile}
	// The zygote answers within moments; the child's own time is bounded by
	// timeout, after which it is killed.
	grace := timeout + 30*time.Second
	pid, err := z.start(request{policy: p.policy, files: theirs}, time.Now().Add(30*time.Second))
	for _, f := range theirs {
		f.Close()
	}
	if err != nil {
		progW.Close()
		return Result{}, wrapperStatus{}, err
	}

	var (
		mu       sync.Mutex
		reaped   bool
		timedOut atomic.Bool
	)
	kill := func() {
		mu.Lock()
		defer mu.Unlock()
		if !reaped {
			killProcess(pid)
		}
	}
	if p.onStart != nil {
		p.onStart(pid)
	}
	go func() {
		_, _ = io.WriteString(progW, code)
		progW.Close()
	}()
	stdout := &capWriter{limit: o.MaxOutputBytes, onExceed: kill}
	stderr := &capWriter{limit: o.MaxStderrBytes}
	var copies sync.WaitGroup
	copies.Add(2)
	go func() { defer copies.Done(); _, _ = io.Copy(stdout, outR) }()
	go func() { defer copies.Done(); _, _ = io.Copy(stderr, errR) }()
	statusCh := make(chan []byte, 1)
	go func() {
		b, _ := io.ReadAll(io.LimitReader(stR, 64<<10))
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

	werr := z.waitExited(time.Now().Add(grace))
	timer.Stop()
	mu.Lock()
	killProcess(pid) // leftovers of the group, before the pid can be reused
	var (
		ws  syscall.WaitStatus
		cpu time.Duration
	)
	if werr == nil {
		ws, cpu, werr = z.reap(time.Now().Add(30 * time.Second))
	}
	reaped = true
	mu.Unlock()
	p.childCPU.Add(int64(cpu))
	close(done)
	if werr != nil {
		return Result{}, wrapperStatus{}, werr
	}
	// The child was the only holder of the pipes' write ends.
	copied := make(chan struct{})
	go func() { copies.Wait(); close(copied) }()
	select {
	case <-copied:
	case <-time.After(time.Second):
	}
	var status []byte
	select {
	case status = <-statusCh:
	case <-time.After(time.Second):
	}

	if cancelled.Load() && !timedOut.Load() {
		return Result{}, wrapperStatus{}, ctx.Err()
	}
	out, outputLimit := stdout.text()
	errText, _ := stderr.text()
	info := exitInfo{exitCode: ws.ExitStatus(), cpu: cpu}
	if ws.Signaled() {
		info.exitCode, info.signal = -1, ws.Signal()
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
	if err == nil && p.opts.Min != MinNone && !hasSeccomp(st.readyInfo) {
		// Fail closed: never accept a result from an unfiltered child.
		err = fmt.Errorf("%w: the seccomp filter was not in force for this program (%s)", errZygote, st.readyInfo)
	}
	res := Result{Stdout: out, Stderr: errText, ExitCode: info.exitCode, Failure: failure}
	return res, st, err
}
