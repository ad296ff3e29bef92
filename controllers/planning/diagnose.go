package planning

import (
	"fmt"
	"sort"
	"time"

	corev1 "k8s.io/api/core/v1"

	repotv1 "repot.dev/repot-operator/api/v1alpha1"
)

// serverDiagnosis is why a model's server is not ready yet.
type serverDiagnosis struct {
	// Cause is a ServersReady reason (Unschedulable, ImagePullFailed,
	// CrashLoop, ProbeTimeout, WaitingForCapacity), or "" while the server
	// is still starting normally.
	Cause string
	// Waiting is set with cause WaitingForCapacity: no node has room yet,
	// which is not a failure until stalledAfter passed (an autoscaler may
	// add one).
	Waiting bool
	// Message says what is wrong in words a user can act on.
	Message string
	// RecheckAfter is set when nothing is wrong yet but the probe budget will
	// run out: the controller must look again after this long even if no
	// object changes.
	RecheckAfter time.Duration
}

// diagnoseServer reads the pods of one model's server as a kubelet and a
// scheduler leave them and names the first cause that keeps it from becoming
// ready. readyBudget is how long a running pod may stay unready (its startup
// and readiness probe budget) before it counts as a probe timeout;
// stalledAfter is how long a pod may wait for a node with room
// (spec.stalledAfterSeconds) before that counts as Unschedulable. It is a
// pure function of its inputs.
func diagnoseServer(model string, pods []corev1.Pod, now time.Time, readyBudget, stalledAfter time.Duration) serverDiagnosis {
	pods = append([]corev1.Pod(nil), pods...)
	sort.Slice(pods, func(i, j int) bool { return pods[i].Name < pods[j].Name })
	var recheck time.Duration
	for i := range pods {
		p := &pods[i]
		if p.DeletionTimestamp != nil {
			continue
		}
		if c := podCondition(p, corev1.PodScheduled); c != nil && c.Status == corev1.ConditionFalse && c.Reason == corev1.PodReasonUnschedulable {
			waited := now.Sub(unschedulableSince(p, c, now))
			if waited < stalledAfter {
				return serverDiagnosis{Cause: repotv1.ReasonWaitingForCapacity, Waiting: true, RecheckAfter: stalledAfter - waited, Message: fmt.Sprintf(
					"server of model %s waits for a node with room (%s of spec.stalledAfterSeconds %s); the scheduler says (pod %s): %s",
					model, waited.Round(time.Second), stalledAfter, p.Name, c.Message)}
			}
			return serverDiagnosis{Cause: repotv1.ReasonUnschedulable, Message: fmt.Sprintf(
				"server of model %s could not be scheduled for %s (past spec.stalledAfterSeconds): no node has a free GPU of the requested product or matches its node selector and tolerations; add capacity or fix the placement (pod %s: %s)",
				model, waited.Round(time.Second), p.Name, c.Message)}
		}
		for _, cs := range allContainerStatuses(p) {
			w := cs.State.Waiting
			if w == nil {
				continue
			}
			switch w.Reason {
			case "ImagePullBackOff", "ErrImagePull", "InvalidImageName", "ErrImageNeverPull":
				return serverDiagnosis{Cause: repotv1.ReasonImagePullFailed, Message: fmt.Sprintf(
					"server of model %s cannot pull the image of container %s (pod %s, %s): %s",
					model, cs.Name, p.Name, w.Reason, w.Message)}
			case "CrashLoopBackOff", "CreateContainerConfigError", "CreateContainerError", "RunContainerError":
				last := ""
				if t := cs.LastTerminationState.Terminated; t != nil {
					last = fmt.Sprintf("; last exit code %d (%s)", t.ExitCode, t.Reason)
				}
				return serverDiagnosis{Cause: repotv1.ReasonCrashLoop, Message: fmt.Sprintf(
					"server of model %s: container %s of pod %s is %s%s: %s",
					model, cs.Name, p.Name, w.Reason, last, w.Message)}
			}
		}
		if p.Status.Phase == corev1.PodRunning && !podReady(p) {
			since := runningSince(p)
			if since.IsZero() {
				continue
			}
			waited := now.Sub(since)
			if waited >= readyBudget {
				return serverDiagnosis{Cause: repotv1.ReasonProbeTimeout, Message: fmt.Sprintf(
					"server of model %s (pod %s) is running but has not answered a completion within its probe budget of %s: the model may be too large for the GPU, or the server arguments are wrong",
					model, p.Name, readyBudget)}
			}
			if left := readyBudget - waited; recheck == 0 || left < recheck {
				recheck = left
			}
		}
	}
	return serverDiagnosis{RecheckAfter: recheck}
}

// unschedulableSince is when the scheduler first found no node for the pod:
// the condition's transition, else the pod's creation, else now.
func unschedulableSince(p *corev1.Pod, c *corev1.PodCondition, now time.Time) time.Time {
	switch {
	case !c.LastTransitionTime.IsZero():
		return c.LastTransitionTime.Time
	case !p.CreationTimestamp.IsZero():
		return p.CreationTimestamp.Time
	}
	return now
}

func podCondition(p *corev1.Pod, t corev1.PodConditionType) *corev1.PodCondition {
	for i := range p.Status.Conditions {
		if p.Status.Conditions[i].Type == t {
			return &p.Status.Conditions[i]
		}
	}
	return nil
}

func podReady(p *corev1.Pod) bool {
	c := podCondition(p, corev1.PodReady)
	return c != nil && c.Status == corev1.ConditionTrue
}

func allContainerStatuses(p *corev1.Pod) []corev1.ContainerStatus {
	out := append([]corev1.ContainerStatus(nil), p.Status.InitContainerStatuses...)
	return append(out, p.Status.ContainerStatuses...)
}

// runningSince is when the pod's containers started, falling back to the
// pod's start time.
func runningSince(p *corev1.Pod) time.Time {
	var t time.Time
	for _, cs := range p.Status.ContainerStatuses {
		if r := cs.State.Running; r != nil && r.StartedAt.After(t) {
			t = r.StartedAt.Time
		}
	}
	if t.IsZero() && p.Status.StartTime != nil {
		t = p.Status.StartTime.Time
	}
	return t
}
