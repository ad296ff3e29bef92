package nodeagent

import (
	"context"
	"strconv"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

type ctrKind int

const (
	kindInit    ctrKind = iota // regular init container
	kindSidecar                // init container with restartPolicy Always
	kindMain
)

// ctrState is what the worker knows about one container.
type ctrState struct {
	name string
	kind ctrKind
	spec *corev1.Container

	proc    *process
	gen     int // incremented on every start; tags probe and exit events
	starts  int
	stopped bool // a stop signal was sent to the current process

	// term is the last termination; prev the one before the current run.
	term, prev *corev1.ContainerStateTerminated

	backoff      time.Duration
	backoffUntil time.Time

	// waiting reason and message while not running.
	waitReason, waitMessage string

	succeeded bool // init container finished with 0
	ready     bool // the readiness probe's last verdict
	started   bool // startup probe passed (or none)

	cancelProbes context.CancelFunc
}

func (c *ctrState) running() bool { return c.proc != nil }

// isReady is the container's readiness as the kubelet reports it: running,
// started, and its readiness probe passing (or it has none).
func (c *ctrState) isReady() bool {
	return c.running() && c.started && (c.spec.ReadinessProbe == nil || c.ready)
}

// exitedCode is the exit code of the last termination (-1 if none).
func (c *ctrState) exitedCode() int {
	if c.term == nil {
		return -1
	}
	return int(c.term.ExitCode)
}

// onExit records the termination of the current process.
func (c *ctrState) onExit(p *process, now time.Time, base, max time.Duration) {
	reason := "Completed"
	if p.code != 0 {
		reason = "Error"
	}
	if p.signal != "" && c.stopped {
		reason = "Error"
	}
	c.term = &corev1.ContainerStateTerminated{
		ExitCode:    int32(p.code),
		Signal:      0,
		Reason:      reason,
		StartedAt:   metav1.NewTime(p.started),
		FinishedAt:  metav1.NewTime(now),
		ContainerID: containerID(p.pid),
	}
	if p.signal != "" {
		c.term.Message = "killed by " + p.signal
	}
	c.proc = nil
	c.ready = false
	c.stopped = false
	if c.cancelProbes != nil {
		c.cancelProbes()
		c.cancelProbes = nil
	}
	// Exponential back-off, reset after a long healthy run (as the kubelet).
	if now.Sub(p.started) > 10*time.Minute || c.backoff == 0 {
		c.backoff = base
	} else {
		c.backoff *= 2
		if c.backoff > max {
			c.backoff = max
		}
	}
	c.backoffUntil = now.Add(c.backoff)
}

func containerID(pid int) string { return "process://" + strconv.Itoa(pid) }
