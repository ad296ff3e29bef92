package planning

import (
	"fmt"
	"maps"
	"slices"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	kueue "sigs.k8s.io/kueue/apis/kueue/v1beta2"

	repotv1 "repot.dev/repot-operator/api/v1alpha1"
	"repot.dev/repot-operator/controllers/build"
	"repot.dev/repot-operator/controllers/kueueadapter"
)

// cleanupRetry is how long the first failed removal of the stored traces
// stands before the next one runs; each later wait is as long as the
// failures have lasted (so it doubles), up to cleanupRetryMax.
const (
	cleanupRetry    = time.Minute
	cleanupRetryMax = 30 * time.Minute
)

// WantsArtifactsFinalizer says whether the evaluation must hold
// build.FinalizerArtifactsCleanup: its traces go to spec.artifacts.s3 and
// must not outlive it (retainAfterDeletion false).
func WantsArtifactsFinalizer(e *repotv1.RepotEvaluation) bool {
	return e.Spec.Artifacts != nil && e.Spec.Artifacts.S3 != nil && !e.Spec.Artifacts.RetainTraces()
}

// DeletionWorld is what the deletion of an evaluation that holds
// build.FinalizerArtifactsCleanup depends on.
type DeletionWorld struct {
	Now time.Time
	// Jobs and Deployments are the evaluation's own, except the cleanup
	// Job; RunnerPods the pods of its runner Jobs (the probe's and the
	// cleanup's are not runners).
	Jobs        []batchv1.Job
	Deployments []appsv1.Deployment
	RunnerPods  []corev1.Pod
	// Cleanup is the Job that deletes the stored traces
	// (build.ArtifactsCleanupJob), CleanupPods its pods.
	Cleanup     *batchv1.Job
	CleanupPods []corev1.Pod
	// ServerPods are the pods of its server Deployments.
	ServerPods []corev1.Pod
	// Workloads are its models' Kueue Workloads, by model (nil without
	// Kueue).
	Workloads map[string]*kueue.Workload
	// NamespaceTerminating is true when the API server refused the
	// cleanup Job because the namespace is being deleted.
	NamespaceTerminating bool
}

// DeletionPlan is what one pass over a deleted evaluation does, in this
// order: delete, create, then let the evaluation go.
type DeletionPlan struct {
	// Delete are the runner Jobs and server Deployments still running
	// (their runners would upload traces after the removal), and a failed
	// cleanup Job whose retry is due.
	Delete []Object
	// Create is the cleanup Job, once no runner pod is left.
	Create Object
	// Queue deletes the Kueue Workloads of the models whose pods are gone,
	// so that their quota goes back at once, whatever the cleanup does.
	Queue []kueueadapter.QueueOp
	// RemoveFinalizer lets the evaluation go.
	RemoveFinalizer bool
	// Condition, when set, is written into the evaluation's status
	// (ArtifactsCleanupFailed).
	Condition    *metav1.Condition
	Events       []Event
	RequeueAfter time.Duration
}

// PlanDeletion plans the deletion of an evaluation that holds
// build.FinalizerArtifactsCleanup: stop the runners and servers, wait for
// the runner pods to end (their ledger sidecars upload the last traces on
// SIGTERM), delete the stored traces with a Job that has the runners'
// identity and credentials, retry a failed one with a backoff
// (cleanupRetry doubling up to cleanupRetryMax) while the status says what
// fails and how to let the deletion finish (ArtifactsCleanupFailed), and
// remove the finalizer once the traces are gone, once they need not be
// (retainAfterDeletion became true), or once the namespace is being
// deleted and no Job can run in it any more. A model's Kueue Workload is
// deleted as soon as its pods are gone, before the cleanup: the deletion
// holds no quota while it waits for the store.
func PlanDeletion(e *repotv1.RepotEvaluation, w DeletionWorld, o build.Options) DeletionPlan {
	var p DeletionPlan
	p.Queue = releaseWorkloads(w)
	if !WantsArtifactsFinalizer(e) {
		p.RemoveFinalizer = true
		return p
	}
	s := e.Spec.Artifacts.S3
	url := fmt.Sprintf("s3://%s/%s at %s", s.Bucket, build.ArtifactsLayout(e, s).EvaluationPrefix(), s.Endpoint)
	if w.NamespaceTerminating {
		p.RemoveFinalizer = true
		p.Events = append(p.Events, Event{Warning: true, Reason: repotv1.ReasonArtifactsRetained,
			Message: fmt.Sprintf("the namespace is being deleted, so no Job can delete the stored traces: %s stays; delete it with the bucket's tools", url)})
		return p
	}
	// 1. Stop what still runs.
	for i := range w.Jobs {
		if w.Jobs[i].DeletionTimestamp == nil {
			p.Delete = append(p.Delete, &w.Jobs[i])
		}
	}
	for i := range w.Deployments {
		if w.Deployments[i].DeletionTimestamp == nil {
			p.Delete = append(p.Delete, &w.Deployments[i])
		}
	}
	// 2. Wait for the runner pods to end: the pods' deletion brings no
	//    event of the evaluation, so look again shortly. A pod still
	//    Terminating well past its grace period is on a node that does not
	//    answer: say so, and how to let the deletion go on.
	if len(p.Delete) > 0 || len(w.RunnerPods) > 0 {
		p.RequeueAfter = 5 * time.Second
		if stuck := stuckTerminating(w.RunnerPods, w.Now); len(stuck) > 0 {
			p.RequeueAfter = stuckTerminatingRecheck
			for _, pod := range stuck {
				p.Events = append(p.Events, Event{Warning: true, Reason: repotv1.ReasonPodStuckTerminating, Message: fmt.Sprintf(
					"pod %s on node %s is still Terminating %s after its grace period ended (the node is likely lost or its kubelet down); the deletion waits for it, since its ledger sidecar may still upload traces: once the node is known to be gone, delete the Node object or force-delete the pod (kubectl delete pod %s -n %s --grace-period=0 --force)",
					pod.Name, pod.Spec.NodeName, w.Now.Sub(pod.DeletionTimestamp.Time).Round(time.Second), pod.Name, e.Namespace)})
			}
		}
		return p
	}
	// 3. Remove the stored traces.
	j := w.Cleanup
	switch {
	case j == nil:
		p.Create = build.ArtifactsCleanupJob(e, s, o)
	case jobCondition(j, batchv1.JobComplete) != nil:
		p.RemoveFinalizer = true
		msg := terminationVerdict(w.CleanupPods)
		if msg == "" {
			msg = "deleted " + url
		}
		p.Events = append(p.Events, Event{Reason: repotv1.ReasonArtifactsDeleted, Message: msg})
	case jobCondition(j, batchv1.JobFailed) != nil:
		c := jobCondition(j, batchv1.JobFailed)
		if j.DeletionTimestamp != nil {
			break // the retry's Job follows once this one is gone
		}
		// The failures began at the condition's transition (or with this
		// Job); the next try waits as long as they have lasted.
		failed := c.LastTransitionTime.Time
		since := failed
		if fc := findCondition(e.Status.Conditions, repotv1.ConditionArtifactsCleanupFailed); fc != nil && fc.Status == metav1.ConditionTrue && fc.LastTransitionTime.Before(&c.LastTransitionTime) {
			since = fc.LastTransitionTime.Time
		}
		backoff := min(max(failed.Sub(since), cleanupRetry), cleanupRetryMax)
		msg := terminationVerdict(w.CleanupPods)
		if msg == "" {
			msg = c.Reason + ": " + c.Message
		}
		text := fmt.Sprintf("deleting the stored traces (%s) failed: %s; the next try runs %s after the failure (the wait doubles, up to %s). Fix the store or the credentials of spec.artifacts.s3, or let the deletion finish without removing them: set spec.artifacts.retainAfterDeletion to true (kubectl patch repotevaluation %s -n %s --type=merge -p '{\"spec\":{\"artifacts\":{\"retainAfterDeletion\":true}}}') and delete %s with the bucket's tools",
			url, msg, backoff, cleanupRetryMax, e.Name, e.Namespace, url)
		cond := metav1.Condition{Type: repotv1.ConditionArtifactsCleanupFailed, Status: metav1.ConditionTrue, Reason: repotv1.ReasonArtifactsCleanupFailed,
			Message: Truncate(text, 1024), ObservedGeneration: e.Generation, LastTransitionTime: metav1.NewTime(since)}
		p.Condition = &cond
		if wait := failed.Add(backoff).Sub(w.Now); wait > time.Second {
			p.RequeueAfter = wait
			break
		}
		p.Delete = append(p.Delete, j)
		p.Events = append(p.Events, Event{Warning: true, Reason: repotv1.ReasonArtifactsCleanupFailed, Message: text})
	}
	return p
}

// releaseWorkloads deletes the Workload of each model of a deleted
// evaluation whose pods are gone and whose server and runner Job are gone
// or going: Kueue then hands its quota back, while the deletion may still
// wait for other models' pods or for the store.
func releaseWorkloads(w DeletionWorld) []kueueadapter.QueueOp {
	var ops []kueueadapter.QueueOp
	for _, model := range slices.Sorted(maps.Keys(w.Workloads)) {
		wl := w.Workloads[model]
		if wl == nil || wl.DeletionTimestamp != nil || podsLeft(w.ServerPods, model) || podsLeft(w.RunnerPods, model) {
			continue
		}
		live := false
		for i := range w.Jobs {
			live = live || (w.Jobs[i].Labels[build.LabelModel] == model && w.Jobs[i].DeletionTimestamp == nil)
		}
		for i := range w.Deployments {
			live = live || (w.Deployments[i].Labels[build.LabelModel] == model && w.Deployments[i].DeletionTimestamp == nil)
		}
		if !live {
			ops = append(ops, kueueadapter.QueueOp{Kind: kueueadapter.QueueDelete, Workload: wl,
				Message: "the evaluation is being deleted and model " + model + " has no pod left"})
		}
	}
	return ops
}

// stuckTerminatingMargin is how long past its grace period (its
// deletionTimestamp) a pod may stay before the deletion calls it stuck;
// stuckTerminatingRecheck how often the deletion then looks again (and
// repeats its Warning).
const (
	stuckTerminatingMargin  = 2 * time.Minute
	stuckTerminatingRecheck = 30 * time.Second
)

// stuckTerminating are the pods still there stuckTerminatingMargin after
// their deletion's grace period ended.
func stuckTerminating(pods []corev1.Pod, now time.Time) []*corev1.Pod {
	var out []*corev1.Pod
	for i := range pods {
		if d := pods[i].DeletionTimestamp; d != nil && now.Sub(d.Time) > stuckTerminatingMargin {
			out = append(out, &pods[i])
		}
	}
	return out
}

// SplitArtifactsCleanup separates the cleanup Job
// (build.LabelArtifactsCleanup) from the evaluation's other Jobs.
func SplitArtifactsCleanup(jobs []batchv1.Job) ([]batchv1.Job, *batchv1.Job) {
	i := slices.IndexFunc(jobs, func(j batchv1.Job) bool { return j.Labels[build.LabelArtifactsCleanup] == "true" })
	if i < 0 {
		return jobs, nil
	}
	j := jobs[i]
	return slices.Delete(slices.Clone(jobs), i, i+1), &j
}
