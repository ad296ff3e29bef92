package nodeagent

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"
	"k8s.io/utils/ptr"
)

// ownedConditions are the pod conditions the node reports.
var ownedConditions = []corev1.PodConditionType{
	corev1.PodReadyToStartContainers, corev1.PodInitialized, corev1.ContainersReady, corev1.PodReady,
}

// status computes the pod status from the worker's state.
func (w *worker) status() corev1.PodStatus {
	now := metav1.NewTime(w.now())
	st := corev1.PodStatus{
		Phase:     w.currentPhase(),
		HostIP:    "127.0.0.1",
		HostIPs:   []corev1.HostIP{{IP: "127.0.0.1"}},
		StartTime: ptr.To(metav1.NewTime(w.startTime)),
	}
	if w.ip != "" {
		st.PodIP = w.ip
		st.PodIPs = []corev1.PodIP{{IP: w.ip}}
	}
	ready := w.prepared && !w.terminal && !w.terminating
	for _, c := range w.ctrs {
		cs := w.containerStatus(c)
		if c.kind == kindMain {
			st.ContainerStatuses = append(st.ContainerStatuses, cs)
		} else {
			st.InitContainerStatuses = append(st.InitContainerStatuses, cs)
		}
		if (c.kind == kindMain || c.kind == kindSidecar) && !cs.Ready {
			ready = false
		}
	}
	initialized := w.initialized
	set := func(t corev1.PodConditionType, ok bool, reason string) {
		s := corev1.ConditionFalse
		if ok {
			s = corev1.ConditionTrue
			reason = ""
		}
		old, seen := w.conds[t]
		if !seen || old.status != s || old.reason != reason {
			w.conds[t] = condState{status: s, since: now, reason: reason}
		}
		c := w.conds[t]
		st.Conditions = append(st.Conditions, corev1.PodCondition{Type: t, Status: c.status, LastTransitionTime: c.since, Reason: c.reason})
	}
	set(corev1.PodReadyToStartContainers, w.prepared && !w.terminal, "")
	set(corev1.PodInitialized, initialized, "ContainersNotInitialized")
	set(corev1.ContainersReady, ready, "ContainersNotReady")
	set(corev1.PodReady, ready, "ContainersNotReady")
	return st
}

func (w *worker) currentPhase() corev1.PodPhase {
	if w.terminal {
		return w.phase
	}
	if !w.initialized {
		return corev1.PodPending
	}
	for _, c := range w.ctrs {
		if c.kind == kindMain && (c.running() || c.term != nil) {
			return corev1.PodRunning
		}
	}
	return corev1.PodPending
}

func (w *worker) containerStatus(c *ctrState) corev1.ContainerStatus {
	cs := corev1.ContainerStatus{
		Name:         c.name,
		Image:        c.spec.Image,
		ImageID:      w.a.imageID(),
		RestartCount: int32(max(c.starts-1, 0)),
		Ready:        c.isReady(),
		Started:      ptr.To(c.running() && c.started),
	}
	if c.prev != nil {
		cs.LastTerminationState.Terminated = c.prev
	}
	switch {
	case c.running():
		cs.ContainerID = containerID(c.proc.pid)
		cs.State.Running = &corev1.ContainerStateRunning{StartedAt: metav1.NewTime(c.proc.started)}
	case c.term != nil && w.willRestart(c):
		cs.ContainerID = c.term.ContainerID
		cs.LastTerminationState.Terminated = c.term
		reason := "CrashLoopBackOff"
		if c.term.Reason == "StartError" {
			reason = "RunContainerError"
		}
		cs.State.Waiting = &corev1.ContainerStateWaiting{Reason: reason,
			Message: fmt.Sprintf("back-off %v restarting failed container=%s pod=%s_%s(%s)", c.backoff, c.name, w.name, w.ns, w.uid)}
		if c.term.Reason == "StartError" {
			cs.State.Waiting.Message = c.term.Message
		}
	case c.term != nil:
		cs.ContainerID = c.term.ContainerID
		cs.State.Terminated = c.term
	default:
		reason := c.waitReason
		if reason == "" {
			reason = "PodInitializing"
			if !w.prepared {
				reason = "ContainerCreating"
			}
		}
		cs.State.Waiting = &corev1.ContainerStateWaiting{Reason: reason, Message: c.waitMessage}
	}
	return cs
}

// willRestart reports whether an exited container will be started again.
func (w *worker) willRestart(c *ctrState) bool {
	if w.terminal || w.terminating {
		return false
	}
	switch c.kind {
	case kindSidecar:
		return true
	case kindInit:
		return !c.succeeded && w.pod.Spec.RestartPolicy != corev1.RestartPolicyNever
	}
	return w.shouldRestart(c)
}

// flush writes the status when it changed since the last write.
func (w *worker) flush(ctx context.Context, gone bool) {
	if gone {
		return
	}
	st := w.status()
	if w.written != nil && equality.Semantic.DeepEqual(*w.written, st) {
		return
	}
	pods := w.a.o.Client.CoreV1().Pods(w.ns)
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		p, err := pods.Get(ctx, w.name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		if p.UID != w.uid {
			return apierrors.NewNotFound(corev1.Resource("pods"), w.name)
		}
		merged := st.DeepCopy()
		merged.QOSClass = p.Status.QOSClass
		merged.NominatedNodeName = p.Status.NominatedNodeName
		for _, c := range p.Status.Conditions {
			if !owned(c.Type) {
				merged.Conditions = append(merged.Conditions, c)
			}
		}
		p.Status = *merged
		_, err = pods.UpdateStatus(ctx, p, metav1.UpdateOptions{})
		return err
	})
	if err != nil {
		if !apierrors.IsNotFound(err) && ctx.Err() == nil {
			w.logf("status update: %v", err)
		}
		return
	}
	w.written = &st
}

func owned(t corev1.PodConditionType) bool {
	for _, o := range ownedConditions {
		if o == t {
			return true
		}
	}
	return false
}
