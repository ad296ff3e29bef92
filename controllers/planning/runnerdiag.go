package planning

import (
	"fmt"
	"sort"
	"time"

	corev1 "k8s.io/api/core/v1"

	repotv1 "repot.dev/repot-operator/api/v1alpha1"
	"repot.dev/repot-operator/controllers/build"
)

// runnerDiagnosis is why a model's runner pods make no progress.
type runnerDiagnosis struct {
	// Cause is RunnerImagePullFailed, RunnerPending or RunnerMountFailed,
	// or "" when nothing is wrong (yet).
	Cause string
	// Message says what is wrong and what to fix.
	Message string
	// RecheckAfter asks for another look when a Pending pod's grace period
	// will run out.
	RecheckAfter time.Duration
}

// diagnoseRunners reads a model's runner pods as the scheduler and the
// kubelet leave them. An image that cannot be pulled is a cause at once; a
// pod still Pending after grace (spec.stalledAfterSeconds) is one: when the
// kubelet reported a failed mount (mountFailures, by pod name, from its
// FailedMount events) RunnerMountFailed, else RunnerPending with the
// scheduler's message. It is a pure function of its inputs.
func diagnoseRunners(model string, pods []corev1.Pod, mountFailures map[string]string, now time.Time, grace time.Duration) runnerDiagnosis {
	pods = append([]corev1.Pod(nil), pods...)
	sort.Slice(pods, func(i, j int) bool { return pods[i].Name < pods[j].Name })
	var recheck time.Duration
	for i := range pods {
		p := &pods[i]
		if p.DeletionTimestamp != nil || p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed {
			continue
		}
		for _, cs := range allContainerStatuses(p) {
			if w := cs.State.Waiting; w != nil && imagePullReason(w.Reason) {
				return runnerDiagnosis{Cause: repotv1.ReasonRunnerImagePullFailed, Message: fmt.Sprintf(
					"runner pod %s of model %s cannot pull image %s (container %s, %s: %s): make that image pullable (push it, or put the registry's credentials in the Secret spec.placement.imagePullSecrets names) and set spec.suspend to true then false, or create a new evaluation with another spec.runner.image (the spec cannot change once the evaluation has started)",
					p.Name, model, cs.Image, cs.Name, w.Reason, w.Message)}
			}
		}
		if p.Status.Phase != corev1.PodPending {
			continue
		}
		since := p.CreationTimestamp.Time
		if since.IsZero() {
			continue
		}
		waited := now.Sub(since)
		if waited < grace {
			if left := grace - waited; recheck == 0 || left < recheck {
				recheck = left
			}
			continue
		}
		if msg, ok := mountFailures[p.Name]; ok {
			return runnerDiagnosis{Cause: repotv1.ReasonRunnerMountFailed, Message: fmt.Sprintf(
				"runner pod %s of model %s has been Pending for %s because a volume does not mount (%s): check that spec.problems.configMap and spec.artifacts.pvcName name objects that exist in the namespace and that the PVC is bound",
				p.Name, model, waited.Round(time.Second), msg)}
		}
		why := "its containers have not started"
		if c := podCondition(p, corev1.PodScheduled); c != nil && c.Status == corev1.ConditionFalse {
			why = "no node takes it (" + c.Message + "); fix spec.placement.runner.nodeSelector and tolerations, or add capacity"
		}
		return runnerDiagnosis{Cause: repotv1.ReasonRunnerPending, Message: fmt.Sprintf(
			"runner pod %s of model %s has been Pending for %s, past spec.stalledAfterSeconds: %s",
			p.Name, model, waited.Round(time.Second), why)}
	}
	return runnerDiagnosis{RecheckAfter: recheck}
}

func imagePullReason(r string) bool {
	switch r {
	case "ImagePullBackOff", "ErrImagePull", "InvalidImageName", "ErrImageNeverPull":
		return true
	}
	return false
}

// runnerPods returns the pods of one model's runner Job.
func (w *World) runnerPods(eval, model string) []corev1.Pod {
	var out []corev1.Pod
	for _, p := range w.RunnerPods {
		if p.Labels[build.LabelEvaluation] == eval && p.Labels[build.LabelModel] == model {
			out = append(out, p)
		}
	}
	return out
}

// PendingPastGrace lists the Pending, scheduled runner pods older than
// grace: the only ones whose FailedMount events the snapshot reads.
func PendingPastGrace(pods []corev1.Pod, now time.Time, grace time.Duration) []string {
	var out []string
	for i := range pods {
		p := &pods[i]
		if p.Status.Phase != corev1.PodPending || p.DeletionTimestamp != nil || p.CreationTimestamp.IsZero() || now.Sub(p.CreationTimestamp.Time) < grace {
			continue
		}
		if c := podCondition(p, corev1.PodScheduled); c != nil && c.Status == corev1.ConditionTrue {
			out = append(out, p.Name)
		}
	}
	return out
}

// diagnoseModelsRunners diagnoses the runner pods of every active model.
func diagnoseModelsRunners(e *repotv1.RepotEvaluation, w *World, models []modelState) []runnerDiagnosis {
	grace := time.Duration(e.Spec.StalledAfterSecondsOrDefault()) * time.Second
	out := make([]runnerDiagnosis, len(models))
	for i := range models {
		if models[i].Active {
			out[i] = diagnoseRunners(e.Spec.Models[i].Name, w.runnerPods(e.Name, e.Spec.Models[i].Name), w.MountFailures, w.Now, grace)
		}
	}
	return out
}
