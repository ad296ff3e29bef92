package cluster

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"repot.dev/repot-operator/hack/localcluster/proc"
)

// component is one control-plane process.
type component struct {
	name   string
	cmd    *exec.Cmd
	log    string
	exited chan struct{}
	err    error // set before exited is closed
}

// startComponent starts bin with args, its output appended to logPath.
func startComponent(name, bin string, args []string, logPath string) (*component, error) {
	if _, err := os.Stat(bin); err != nil {
		return nil, fmt.Errorf("%s: %w (build it with: hack/build-cluster-bins.sh control-plane)", name, err)
	}
	if err := os.MkdirAll(filepath.Dir(logPath), 0o755); err != nil {
		return nil, err
	}
	f, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o644)
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(bin, args...)
	cmd.Stdout, cmd.Stderr = f, f
	cmd.Env = os.Environ()
	if err := proc.Start(cmd); err != nil {
		f.Close()
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	c := &component{name: name, cmd: cmd, log: logPath, exited: make(chan struct{})}
	go func() {
		c.err = cmd.Wait()
		f.Close()
		close(c.exited)
	}()
	return c, nil
}

// alive reports whether the process is still running.
func (c *component) alive() bool {
	select {
	case <-c.exited:
		return false
	default:
		return true
	}
}

// failure describes why the component exited, with the end of its log.
func (c *component) failure() error {
	return fmt.Errorf("%s exited (%v); last lines of %s:\n%s", c.name, c.err, c.log, tail(c.log, 15))
}

// stop terminates the component and everything it started.
func (c *component) stop(grace time.Duration) {
	if c == nil || c.cmd.Process == nil {
		return
	}
	proc.Stop(c.cmd.Process.Pid, c.exited, grace)
}

// tail returns the last n lines of a file.
func tail(path string, n int) string {
	data, err := os.ReadFile(path)
	if err != nil {
		return "(" + err.Error() + ")"
	}
	lines := bytes.Split(bytes.TrimRight(data, "\n"), []byte("\n"))
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	var b strings.Builder
	for _, l := range lines {
		b.WriteString("  ")
		b.Write(l)
		b.WriteByte('\n')
	}
	return b.String()
}
