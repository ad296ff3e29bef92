package repot

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"syscall"
)

// ExitError asks main to exit with Code without printing anything: the
// process it wrapped already said why it stopped.
type ExitError struct{ Code int }

func (e ExitError) Error() string { return fmt.Sprintf("exit status %d", e.Code) }

// forwardedSignals are passed on to the wrapped process. SIGINT and SIGTERM
// are how the kubelet and a terminal stop it; the others are for the
// process's own use (vLLM ignores them, others reload or dump on them).
var forwardedSignals = []os.Signal{syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP, syscall.SIGQUIT, syscall.SIGUSR1, syscall.SIGUSR2}

// runChild runs argv as a child with this process's standard streams and
// environment, forwards every signal in forwardedSignals to it, and returns
// its exit code once it has exited: its own code, or 128+N when signal N
// killed it (the shell's convention, which the kubelet reports). started,
// when set, is called once the child runs. An error means it could not be
// started at all. As PID 1 (or a subreaper) it also reaps the orphans it
// adopts while the child runs (reapUntilExit).
func runChild(ctx context.Context, argv []string, started func(pid int)) (int, error) {
	if len(argv) == 0 {
		return 0, errors.New("--exec needs a command after --, e.g. gpu-telemetry --exec -- vllm serve MODEL")
	}
	path, err := exec.LookPath(argv[0])
	if err != nil {
		return 127, fmt.Errorf("cannot run %q: %w", argv[0], err)
	}
	// Catch the signals before the child starts, so none is lost between.
	sigs := make(chan os.Signal, 8)
	signal.Notify(sigs, forwardedSignals...)
	defer signal.Stop(sigs)

	cmd := exec.Command(path, argv[1:]...)
	cmd.Args = argv
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	if err := cmd.Start(); err != nil {
		return 127, fmt.Errorf("cannot run %q: %w", argv[0], err)
	}
	if started != nil {
		started(cmd.Process.Pid)
	}
	var exited <-chan int
	if adoptsOrphans() {
		exited = reapUntilExit(cmd)
	} else {
		exited = waitExit(cmd)
	}
	ctxDone := ctx.Done()
	for {
		select {
		case s := <-sigs:
			_ = cmd.Process.Signal(s)
		case <-ctxDone:
			// The caller is stopping (tests): stop the child as the kubelet would.
			_ = cmd.Process.Signal(syscall.SIGTERM)
			ctxDone = nil
		case code := <-exited:
			return code, nil
		}
	}
}

// waitExit sends the child's exit code once cmd.Wait returns.
func waitExit(cmd *exec.Cmd) <-chan int {
	ch := make(chan int, 1)
	go func() {
		err := cmd.Wait()
		ch <- exitCode(cmd.ProcessState, err)
	}()
	return ch
}

func exitCode(ps *os.ProcessState, waitErr error) int {
	if ps == nil {
		return 1
	}
	if ws, ok := ps.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return 128 + int(ws.Signal())
	}
	if c := ps.ExitCode(); c >= 0 {
		return c
	}
	if waitErr != nil {
		return 1
	}
	return 0
}
