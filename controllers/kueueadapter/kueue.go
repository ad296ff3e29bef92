package kueueadapter

import (
	"context"
	"time"

	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	kueue "sigs.k8s.io/kueue/apis/kueue/v1beta2"

	repotv1 "repot.dev/repot-operator/api/v1alpha1"
)

// Queue is the controller's view of Kueue: it observes and acts on the
// Workloads that admit an evaluation's models. Kueue (its scheduler)
// reserves quota and evicts; the controller creates the Workloads, hands
// the quota of an evicted Workload back once its children are gone, and
// marks a Workload finished when its model is done.
type Queue interface {
	// Observe returns the evaluation's Workloads by model and the cluster's
	// ResourceFlavors by name.
	Observe(ctx context.Context, e *repotv1.RepotEvaluation) (QueueWorld, error)
	// Submit creates a model's Workload. A Workload of the same name that
	// exists is an AlreadyExists error (apierrors.IsAlreadyExists), which
	// the caller resolves: this evaluation's (the cache was behind) or
	// another owner's (the name is taken).
	Submit(ctx context.Context, wl *kueue.Workload) error
	// Requeue clears the admission of an evicted Workload whose children are
	// gone, so that Kueue queues it again (what a Kueue job integration does
	// for its jobs).
	Requeue(ctx context.Context, wl *kueue.Workload) error
	// Finish marks a Workload finished, releasing its quota.
	Finish(ctx context.Context, wl *kueue.Workload, message string) error
	// Delete deletes a Workload (gone already is no error).
	Delete(ctx context.Context, wl *kueue.Workload) error
	// SetPodsReady writes a Workload's PodsReady condition (PodsReadyOp),
	// failing with a conflict when the Workload changed since it was read.
	SetPodsReady(ctx context.Context, wl *kueue.Workload, c metav1.Condition) error
}

// QueueWorld is what Observe saw.
type QueueWorld struct {
	// Workloads of the evaluation by model name.
	Workloads map[string]*kueue.Workload
	// Flavors by name.
	Flavors map[string]*kueue.ResourceFlavor
	// Priority is what the evaluation's new Workloads carry (read only
	// while some model has no Workload yet).
	Priority WorkloadPriority
}

// Admission is where a model's Workload stands (readAdmission); a model
// with no Workload says why when the priority class holds it back.
func (qw QueueWorld) Admission(model string) admission {
	a := readAdmission(qw.Workloads[model], qw.Flavors)
	if a.State == AdmissionAbsent && qw.Priority.Problem != "" {
		a.Message = qw.Priority.Problem
	}
	return a
}

// PriorityClassLabel on a RepotEvaluation names the Kueue
// WorkloadPriorityClass of its Workloads, as on any job Kueue admits.
// Without it, spec.placement.priorityClassName (a PriorityClass) gives
// their priority, as Kueue's job integrations take it from the pods.
const PriorityClassLabel = "kueue.x-k8s.io/priority-class"

// WorkloadPriority is a Workload's priority: the class it comes from and
// its value (both nil: Kueue's default, 0).
type WorkloadPriority struct {
	Ref   *kueue.PriorityClassRef
	Value *int32
	// Problem, when set, says why the priority cannot be read (a class
	// that does not exist); no Workload is created until it can.
	Problem string
}

// PriorityRecheck is how soon a pass looks again for a priority class that
// did not exist (the operator does not watch them).
const PriorityRecheck = 30 * time.Second

// RequeueStatus is the status change that hands an evicted Workload's quota
// back: no admission, QuotaReserved and Admitted false, and Requeued as
// Kueue's own job integrations set it (jobframework, "handle eviction"):
// true only after a preemption or a node failure, which go straight back to
// the queue; false with the eviction's reason otherwise, so that Kueue itself
// decides when the Workload queues again (on reactivation after
// Deactivated, after the backoff of a PodsReady timeout). The Evicted
// condition stays as Kueue set it; Kueue clears it on the next admission.
func RequeueStatus(wl *kueue.Workload, now metav1.Time) {
	evicted := apimeta.FindStatusCondition(wl.Status.Conditions, kueue.WorkloadEvicted)
	reason, msg := "Evicted", ""
	if evicted != nil && evicted.Reason != "" {
		reason, msg = evicted.Reason, evicted.Message
	}
	requeued := metav1.ConditionFalse
	if reason == kueue.WorkloadEvictedByPreemption || reason == kueue.WorkloadEvictedDueToNodeFailures {
		requeued = metav1.ConditionTrue
	}
	wl.Status.Admission = nil
	for _, c := range []metav1.Condition{
		{Type: kueue.WorkloadQuotaReserved, Status: metav1.ConditionFalse, Reason: "Pending", Message: msg},
		{Type: kueue.WorkloadAdmitted, Status: metav1.ConditionFalse, Reason: "NoReservation", Message: "The workload has no reservation"},
		{Type: kueue.WorkloadRequeued, Status: requeued, Reason: reason, Message: msg},
		// Its pods are gone: the next admission waits for them anew.
		{Type: kueue.WorkloadPodsReady, Status: metav1.ConditionFalse, Reason: kueue.WorkloadWaitForStart, Message: podsNotReadyMessage},
	} {
		c.ObservedGeneration = wl.Generation
		c.LastTransitionTime = now
		apimeta.SetStatusCondition(&wl.Status.Conditions, c)
	}
}

// PodPriorityClass is spec.placement.priorityClassName, or "".
func PodPriorityClass(e *repotv1.RepotEvaluation) string {
	if e.Spec.Placement == nil {
		return ""
	}
	return e.Spec.Placement.PriorityClassName
}
