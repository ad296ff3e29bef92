package planning

import (
	"fmt"
	"sort"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

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
// scheduler's message. A runner Job with no live pod whose pods the API
// server refuses (refused: the Job controller's latest FailedCreate
// message, RunnerCreateFailures) is RunnerPodsRefused at once. It is a pure
// function of its inputs.
func diagnoseRunners(model string, pods []corev1.Pod, mountFailures map[string]string, refused string, now time.Time, grace time.Duration) runnerDiagnosis {
	pods = append([]corev1.Pod(nil), pods...)
	sort.Slice(pods, func(i, j int) bool { return pods[i].Name < pods[j].Name })
	var recheck time.Duration
	live := 0
	for i := range pods {
		p := &pods[i]
		if !livePod(p) {
			continue
		}
		live++
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
	if live == 0 && refused != "" {
		return runnerDiagnosis{Cause: repotv1.ReasonRunnerPodsRefused, Message: Truncate(fmt.Sprintf(
			"the API server refuses the runner pods of model %s (its runner Job's FailedCreate events): %s. Fix what refuses them (a ResourceQuota or LimitRange of the namespace, Pod Security admission, a webhook): the Job controller keeps retrying and the runners start once a pod is created",
			model, refused), 1024)}
	}
	return runnerDiagnosis{RecheckAfter: recheck}
}

// livePod says whether p may still run: neither terminated nor being
// deleted.
func livePod(p *corev1.Pod) bool {
	return p.DeletionTimestamp == nil && p.Status.Phase != corev1.PodSucceeded && p.Status.Phase != corev1.PodFailed
}

// runnerCreateFailuresWindow is how recent the Job controller's latest
// FailedCreate event of a runner Job must be to count: it retries with a
// backoff of at most a minute, but the event recorder's spam filter lets
// one event of a kind through every five minutes once it has sent a burst.
const runnerCreateFailuresWindow = 15 * time.Minute

// RunnerJobsWithoutPods are the runner Jobs of e that should run but have
// no live pod (not finished, not suspended, no runner pod of the model
// that is neither terminated nor being deleted): the only ones whose
// FailedCreate events the snapshot reads (usually none).
func RunnerJobsWithoutPods(e *repotv1.RepotEvaluation, w *World) []*batchv1.Job {
	var out []*batchv1.Job
	for i := range e.Spec.Models {
		m := &e.Spec.Models[i]
		j := w.job(build.RunnerJobName(e.Name, m.Name))
		if j == nil || j.DeletionTimestamp != nil || jobFinished(j) || ptr.Deref(j.Spec.Suspend, false) {
			continue
		}
		live := false
		for _, p := range w.runnerPods(e.Name, m.Name) {
			if livePod(&p) {
				live = true
				break
			}
		}
		if !live {
			out = append(out, j)
		}
	}
	return out
}

// NewestRunnerPod is when the newest pod of runner Job j was created
// (terminated ones included), or the zero time: a FailedCreate event
// older than it was followed by a pod the API server accepted.
func NewestRunnerPod(e *repotv1.RepotEvaluation, w *World, j *batchv1.Job) time.Time {
	var t time.Time
	for _, p := range w.RunnerPods {
		if metav1.IsControlledBy(&p, j) && p.CreationTimestamp.After(t) {
			t = p.CreationTimestamp.Time
		}
	}
	return t
}

// LatestCreateFailure is the message of the latest of a runner Job's
// FailedCreate events (evs) seen within runnerCreateFailuresWindow of now
// and after since (the newest pod created, NewestRunnerPod), or "": the
// API server's own words for why the Job's pods are refused.
func LatestCreateFailure(evs []corev1.Event, now, since time.Time) string {
	var latest time.Time
	msg := ""
	for i := range evs {
		ev := &evs[i]
		t := ev.LastTimestamp.Time
		if ev.Series != nil && ev.Series.LastObservedTime.After(t) {
			t = ev.Series.LastObservedTime.Time
		}
		if ev.EventTime.After(t) {
			t = ev.EventTime.Time
		}
		if t.IsZero() || now.Sub(t) > runnerCreateFailuresWindow || !t.After(since) || !t.After(latest) {
			continue
		}
		latest, msg = t, ev.Message
	}
	return Truncate(msg, 512)
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
			m := e.Spec.Models[i].Name
			out[i] = diagnoseRunners(m, w.runnerPods(e.Name, m), w.MountFailures, w.RunnerCreateFailures[build.RunnerJobName(e.Name, m)], w.Now, grace)
		}
	}
	return out
}
