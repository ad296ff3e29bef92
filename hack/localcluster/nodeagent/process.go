package nodeagent

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"time"

	corev1 "k8s.io/api/core/v1"

	"repot.dev/repot-operator/hack/localcluster/proc"
)

// process is one running container.
type process struct {
	cmd     *exec.Cmd
	pid     int
	started time.Time
	exited  chan struct{}
	// code and signal are set before exited is closed.
	code   int
	signal string
}

// argvError is a container whose command cannot run on this node.
type argvError struct{ msg string }

func (e *argvError) Error() string { return e.msg }

// buildArgv turns a container's command and args into the argv of a local
// process: $(VAR) references are expanded, mount paths and pod-local
// addresses rewritten. The image's entrypoint is the repot binary, so an
// empty command or a command named "repot" runs repotBin; any other command
// must exist on this machine.
func buildArgv(c *corev1.Container, repotBin string, lookup func(string) (string, bool), pm pathMap, podIP string) ([]string, error) {
	fix := func(s string) string { return rewriteAddresses(pm.rewrite(expand(s, lookup)), podIP) }
	var cmd, args []string
	for _, s := range c.Command {
		cmd = append(cmd, fix(s))
	}
	for _, s := range c.Args {
		args = append(args, fix(s))
	}
	if len(cmd) == 0 {
		return append([]string{repotBin}, args...), nil
	}
	if filepath.Base(cmd[0]) == "repot" {
		return append(append([]string{repotBin}, cmd[1:]...), args...), nil
	}
	exe := cmd[0]
	if filepath.IsAbs(exe) {
		if _, err := os.Stat(exe); err != nil {
			if p, lerr := exec.LookPath(filepath.Base(exe)); lerr == nil {
				exe = p
			} else {
				return nil, &argvError{fmt.Sprintf("executable %q not found on the process node", cmd[0])}
			}
		}
	} else if p, err := exec.LookPath(exe); err == nil {
		exe = p
	} else {
		return nil, &argvError{fmt.Sprintf("executable %q not found on the process node", cmd[0])}
	}
	return append(append([]string{exe}, cmd[1:]...), args...), nil
}

// startProcess starts argv with env in dir, its output appended to logPath.
func startProcess(argv, env []string, dir, logPath string, now time.Time) (*process, error) {
	if err := os.MkdirAll(filepath.Dir(logPath), 0o755); err != nil {
		return nil, err
	}
	logf, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env = env
	cmd.Dir = dir
	cmd.Stdout, cmd.Stderr = logf, logf
	if err := proc.Start(cmd); err != nil {
		logf.Close()
		return nil, err
	}
	p := &process{cmd: cmd, pid: cmd.Process.Pid, started: now, exited: make(chan struct{})}
	go func() {
		err := cmd.Wait()
		logf.Close()
		p.code, p.signal = exitStatus(err)
		close(p.exited)
	}()
	return p, nil
}

// exitStatus maps a Wait error to an exit code as a container runtime
// reports it (128+signal for a killed process).
func exitStatus(err error) (int, string) {
	if err == nil {
		return 0, ""
	}
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			return 128 + int(ws.Signal()), ws.Signal().String()
		}
		return ee.ExitCode(), ""
	}
	return 128, err.Error()
}
