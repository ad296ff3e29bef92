package controllers

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
	// CrashLoop, ProbeTimeout), or "" while the server is still
	// starting normally.
	Cause string
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
// and readiness probe budget) before it counts as a probe timeout. It is a
// pure function of its inputs.
func diagnoseServer(model string, pods []corev1.Pod, now time.Time, readyBudget time.Duration) serverDiagnosis {
	pods = append([]corev1.Pod(nil), pods...)
	sort.Slice(pods, func(i, j int) bool { return pods[i].Name < pods[j].Name })
	var recheck time.Duration
	for i := range pods {
		p := &pods[i]
		if p.DeletionTimestamp != nil {
			continue
		}
		if c := podCondition(p, corev1.PodScheduled); c != nil && c.Status == corev1.ConditionFalse && c.Reason == corev1.PodReasonUnschedulable {
			return serverDiagnosis{Cause: repotv1.ReasonUnschedulable, Message: fmt.Sprintf(
				"server of model %s cannot be scheduled: no node has a free GPU of the requested product or matches its node selector and tolerations (pod %s: %s)",
				model, p.Name, c.Message)}
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
