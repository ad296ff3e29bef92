package nodeagent

import (
	"context"
	"os"
	"path/filepath"
	"sync"
	"syscall"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"repot.dev/repot-operator/hack/localcluster/proc"
)

// stopRunning stops every running container (main containers first, then
// sidecars and init containers in reverse order), escalating to SIGKILL after
// the pod's grace period. It returns true while something still runs.
func (w *worker) stopRunning(now time.Time) bool {
	any := false
	for _, c := range w.ctrs {
		if c.running() {
			any = true
		}
	}
	if !any {
		return false
	}
	if !w.stopSidecars {
		w.stopSidecars = true
		w.sidecarKillAt = now.Add(w.grace())
		if w.terminating && w.termDeadline.Before(w.sidecarKillAt) {
			w.sidecarKillAt = w.termDeadline
		}
	}
	mainsRunning := false
	for _, c := range w.ctrs {
		if c.kind == kindMain && c.running() {
			mainsRunning = true
			if !c.stopped {
				w.stopCtr(c, syscall.SIGTERM)
			}
		}
	}
	if !mainsRunning {
		for i := len(w.ctrs) - 1; i >= 0; i-- {
			if c := w.ctrs[i]; c.kind != kindMain && c.running() && !c.stopped {
				w.stopCtr(c, syscall.SIGTERM)
			}
		}
	}
	if !now.Before(w.sidecarKillAt) {
		for _, c := range w.ctrs {
			if c.running() {
				_ = proc.SignalGroup(c.proc.pid, syscall.SIGKILL)
			}
		}
	}
	return true
}

func (w *worker) grace() time.Duration {
	if g := w.pod.Spec.TerminationGracePeriodSeconds; g != nil {
		return time.Duration(*g) * time.Second
	}
	return 30 * time.Second
}

func (w *worker) stopCtr(c *ctrState, sig syscall.Signal) {
	c.stopped = true
	_ = proc.SignalGroup(c.proc.pid, sig)
}

// stepTerminating stops everything once the pod is being deleted, then
// removes the object (as the kubelet does with grace period 0).
func (w *worker) stepTerminating(ctx context.Context, gone bool, now time.Time) bool {
	if !w.terminating {
		w.terminating = true
		grace := w.grace()
		if g := w.pod.DeletionGracePeriodSeconds; g != nil {
			grace = time.Duration(*g) * time.Second
		}
		if gone {
			grace = 2 * time.Second
		}
		w.termDeadline = now.Add(grace)
		w.stopSidecars = false
		w.logf("deleting (grace %v)", grace)
	}
	if w.stopRunning(now) {
		return false
	}
	if !w.terminal {
		phase := corev1.PodFailed
		if w.pod.Spec.RestartPolicy != corev1.RestartPolicyAlways && w.initialized {
			phase = corev1.PodSucceeded
			for _, c := range w.ctrs {
				if c.kind == kindMain && c.exitedCode() != 0 {
					phase = corev1.PodFailed
				}
			}
		}
		w.phase, w.terminal = phase, true
		w.a.hosts.unregister(w.uid)
	}
	if gone {
		return true
	}
	w.flush(ctx, false)
	err := w.a.o.Client.CoreV1().Pods(w.ns).Delete(ctx, w.name, metav1.DeleteOptions{
		GracePeriodSeconds: ptr.To[int64](0),
		Preconditions:      &metav1.Preconditions{UID: &w.uid},
	})
	if err == nil || apierrors.IsNotFound(err) || apierrors.IsConflict(err) {
		return true
	}
	w.logf("deleting pod object: %v", err)
	return false
}

// shutdown stops every process when the agent exits.
func (w *worker) shutdown() {
	var wg sync.WaitGroup
	for _, c := range w.ctrs {
		if p := c.proc; p != nil {
			wg.Add(1)
			go func() {
				defer wg.Done()
				proc.Stop(p.pid, p.exited, w.a.o.ShutdownGrace)
			}()
		}
	}
	wg.Wait()
	w.cleanup()
}

// cleanup releases the IP and removes volumes (logs stay).
func (w *worker) cleanup() {
	for _, c := range w.ctrs {
		if c.cancelProbes != nil {
			c.cancelProbes()
		}
	}
	w.a.hosts.unregister(w.uid)
	if w.ip != "" {
		w.a.ips.Release(w.ip)
	}
	_ = os.RemoveAll(filepath.Join(w.dir, "volumes"))
	_ = os.RemoveAll(filepath.Join(w.dir, "tmp"))
}
