package sandbox

import (
	"bytes"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// zygote is one warm python3 process (zygote.py) that forks a fresh child
// per program. It serves one program at a time; Python keeps a pool of them,
// one per concurrency slot.
type zygote struct {
	cmd    *exec.Cmd
	conn   *net.UnixConn
	stderr *capWriter
	exited chan struct{}
}

// startZygote starts zygote.py under iso with the limits of o and the
// seccomp filter program.
func startZygote(python string, iso isolation, o Options, filter []byte) (*zygote, error) {
	syscall.ForkLock.RLock()
	fds, err := syscall.Socketpair(syscall.AF_UNIX, syscall.SOCK_SEQPACKET, 0)
	if err == nil {
		syscall.CloseOnExec(fds[0])
		syscall.CloseOnExec(fds[1])
	}
	syscall.ForkLock.RUnlock()
	if err != nil {
		return nil, fmt.Errorf("sandbox: socketpair: %w", err)
	}
	ours := os.NewFile(uintptr(fds[0]), "zygote-control")
	theirs := os.NewFile(uintptr(fds[1]), "zygote-control")
	defer theirs.Close()
	c, err := net.FileConn(ours)
	ours.Close()
	if err != nil {
		return nil, fmt.Errorf("sandbox: control socket: %w", err)
	}
	conn := c.(*net.UnixConn)

	landlock := "auto"
	if o.Landlock == LandlockOff {
		landlock = "off"
	}
	cmd := exec.Command(python, "-I", "-S", "-B", "-c", zygoteSource,
		strconv.FormatInt(o.cpuSeconds(), 10), strconv.FormatInt(o.MemoryBytes, 10),
		strconv.FormatInt(o.MaxFileBytes, 10), strconv.Itoa(o.MaxOpenFiles),
		strconv.Itoa(o.MaxProcesses), strconv.Itoa(o.MaxCodeBytes), landlock,
		fmt.Sprintf("%x", filter))
	cmd.Env = []string{} // empty, not inherited: nothing secret in the zygote
	cmd.SysProcAttr = iso.attr()
	z := &zygote{cmd: cmd, conn: conn, stderr: &capWriter{limit: 16 << 10}, exited: make(chan struct{})}
	cmd.Stdout, cmd.Stderr = z.stderr, z.stderr
	cmd.ExtraFiles = []*os.File{theirs} // fd 3
	cmd.Dir = "/"                       // the runner's directory may not be searchable by the zygote's uid
	if err := cmd.Start(); err != nil {
		conn.Close()
		return nil, fmt.Errorf("sandbox: start %s: %w", python, err)
	}
	go func() { _ = cmd.Wait(); close(z.exited) }()
	return z, nil
}

// stop ends the zygote (its children die with it, PR_SET_PDEATHSIG).
func (z *zygote) stop() {
	z.conn.Close()
	if z.cmd.Process != nil {
		_ = z.cmd.Process.Kill()
	}
	<-z.exited
}

// alive reports whether the zygote process is still running.
func (z *zygote) alive() bool {
	select {
	case <-z.exited:
		return false
	default:
		return true
	}
}

// describe says why a zygote failed, with its last words.
func (z *zygote) describe(err error) error {
	out, _ := z.stderr.text()
	if out = strings.TrimSpace(out); out != "" {
		return fmt.Errorf("%w: %s", err, lastLine(out))
	}
	return err
}

// request is one program handed to the zygote: the descriptors the child
// gets (the program pipe, stdout, stderr, the status pipe, the run's
// directory).
type request struct {
	policy string
	files  []*os.File
}

// errZygote marks a failure of the zygote itself (not of the program); the
// zygote is then replaced.
var errZygote = errors.New("sandbox: zygote failed")

// start sends req and returns the child's pid.
func (z *zygote) start(req request, deadline time.Time) (int, error) {
	fds := make([]int, len(req.files))
	for i, f := range req.files {
		fds[i] = int(f.Fd())
	}
	_ = z.conn.SetDeadline(deadline)
	if _, _, err := z.conn.WriteMsgUnix([]byte("run "+req.policy), syscall.UnixRights(fds...), nil); err != nil {
		return 0, fmt.Errorf("%w: send: %v", errZygote, err)
	}
	msg, err := z.read()
	if err != nil {
		return 0, err
	}
	n, ok := strings.CutPrefix(msg, "pid ")
	pid, err := strconv.Atoi(n)
	if !ok || err != nil || pid <= 1 {
		return 0, fmt.Errorf("%w: answered %q", errZygote, msg)
	}
	return pid, nil
}

// waitExited blocks until the zygote says the child exited (not yet reaped).
func (z *zygote) waitExited(deadline time.Time) error {
	_ = z.conn.SetDeadline(deadline)
	msg, err := z.read()
	if err != nil {
		return err
	}
	if msg != "exited" {
		return fmt.Errorf("%w: answered %q", errZygote, msg)
	}
	return nil
}

// reap lets the zygote reap the child and returns how it ended.
func (z *zygote) reap(deadline time.Time) (syscall.WaitStatus, time.Duration, error) {
	_ = z.conn.SetDeadline(deadline)
	if _, err := z.conn.Write([]byte("reap")); err != nil {
		return 0, 0, fmt.Errorf("%w: send: %v", errZygote, err)
	}
	msg, err := z.read()
	if err != nil {
		return 0, 0, err
	}
	f := strings.Fields(msg)
	if len(f) != 3 || f[0] != "status" {
		return 0, 0, fmt.Errorf("%w: answered %q", errZygote, msg)
	}
	st, err1 := strconv.ParseUint(f[1], 10, 32)
	cpu, err2 := strconv.ParseInt(f[2], 10, 64)
	if err1 != nil || err2 != nil {
		return 0, 0, fmt.Errorf("%w: answered %q", errZygote, msg)
	}
	return syscall.WaitStatus(st), time.Duration(cpu), nil
}

func (z *zygote) read() (string, error) {
	buf := make([]byte, 256)
	n, err := z.conn.Read(buf)
	if err != nil || n == 0 {
		if err == nil {
			err = errors.New("closed")
		}
		return "", z.describe(fmt.Errorf("%w: %v", errZygote, err))
	}
	return string(bytes.TrimSpace(buf[:n])), nil
}

// pool hands out zygotes, one per concurrency slot, starting replacements
// for ones that failed.
type pool struct {
	mu    sync.Mutex
	idle  []*zygote
	start func() (*zygote, error)
}

func (p *pool) get() (*zygote, error) {
	p.mu.Lock()
	for len(p.idle) > 0 {
		z := p.idle[len(p.idle)-1]
		p.idle = p.idle[:len(p.idle)-1]
		if z.alive() {
			p.mu.Unlock()
			return z, nil
		}
		z.stop()
	}
	p.mu.Unlock()
	return p.start()
}

func (p *pool) put(z *zygote) {
	p.mu.Lock()
	p.idle = append(p.idle, z)
	p.mu.Unlock()
}

// close stops every idle zygote.
func (p *pool) close() {
	p.mu.Lock()
	idle := p.idle
	p.idle = nil
	p.mu.Unlock()
	for _, z := range idle {
		z.stop()
	}
}
