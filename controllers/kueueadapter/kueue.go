package kueueadapter

import (
	"context"
	"fmt"
	"strconv"
	"time"

	schedulingv1 "k8s.io/api/scheduling/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	kueue "sigs.k8s.io/kueue/apis/kueue/v1beta2"

	repotv1 "repot.dev/repot-operator/api/v1alpha1"

	"repot.dev/repot-operator/controllers/build"
)

// +kubebuilder:rbac:groups=kueue.x-k8s.io,resources=workloads,verbs=get;list;watch;create;delete
// +kubebuilder:rbac:groups=kueue.x-k8s.io,resources=workloads/status,verbs=get;update;patch
// +kubebuilder:rbac:groups=kueue.x-k8s.io,resources=resourceflavors;workloadpriorityclasses,verbs=get;list;watch
// +kubebuilder:rbac:groups=scheduling.k8s.io,resources=priorityclasses,verbs=get;list;watch

// Queue is the controller's view of Kueue: it observes and acts on the
// Workloads that admit an evaluation's models. Kueue (its scheduler)
// reserves quota and evicts; the controller creates the Workloads, hands
// the quota of an evicted Workload back once its children are gone, and
// marks a Workload finished when its model is done.
type Queue interface {
	// Observe returns the evaluation's Workloads by model and the cluster's
	// ResourceFlavors by name.
	Observe(ctx context.Context, e *repotv1.RepotEvaluation) (QueueWorld, error)
	// Submit creates a model's Workload.
	Submit(ctx context.Context, wl *kueue.Workload) error
	// Requeue clears the admission of an evicted Workload whose children are
	// gone, so that Kueue queues it again (what a Kueue job integration does
	// for its jobs).
	Requeue(ctx context.Context, wl *kueue.Workload) error
	// Finish marks a Workload finished, releasing its quota.
	Finish(ctx context.Context, wl *kueue.Workload, message string) error
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

// WorkloadGVK is the Kueue API the controller uses.
var WorkloadGVK = kueue.GroupVersion.WithKind("Workload")

// KueueInstalled reports whether the API server serves Kueue's Workload
// API (the controller only watches Workloads when it does).
func KueueInstalled(m apimeta.RESTMapper) (bool, error) {
	_, err := m.RESTMapping(schema.GroupKind{Group: WorkloadGVK.Group, Kind: WorkloadGVK.Kind}, WorkloadGVK.Version)
	switch {
	case err == nil:
		return true, nil
	case apimeta.IsNoMatchError(err):
		return false, nil
	default:
		return false, err
	}
}

// KueueServed asks the API server's discovery whether it serves Kueue's
// Workload API, before a manager (and its RESTMapper) exists.
func KueueServed(cfg *rest.Config) (bool, error) {
	dc, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		return false, fmt.Errorf("discovery client: %w", err)
	}
	list, err := dc.ServerResourcesForGroupVersion(WorkloadGVK.GroupVersion().String())
	switch {
	case apierrors.IsNotFound(err):
		return false, nil
	case err != nil:
		return false, fmt.Errorf("looking for Kueue's %s: %w", WorkloadGVK.GroupVersion(), err)
	}
	for _, r := range list.APIResources {
		if r.Kind == WorkloadGVK.Kind {
			return true, nil
		}
	}
	return false, nil
}

// kueueQueue is the Queue of a cluster with Kueue installed.
type kueueQueue struct {
	client client.Client
	now    func() time.Time
}

// NewKueueQueue returns the Queue that talks to Kueue through c (a client
// whose scheme has Kueue's v1beta2 types).
func NewKueueQueue(c client.Client, now func() time.Time) Queue {
	return &kueueQueue{client: c, now: now}
}

func (q *kueueQueue) Observe(ctx context.Context, e *repotv1.RepotEvaluation) (QueueWorld, error) {
	w := QueueWorld{Workloads: map[string]*kueue.Workload{}, Flavors: map[string]*kueue.ResourceFlavor{}}
	var wls kueue.WorkloadList
	if err := q.client.List(ctx, &wls, client.InNamespace(e.Namespace), client.MatchingFields{build.OwnerKey: e.Name}); err != nil {
		return w, fmt.Errorf("list owned workloads: %w", err)
	}
	for i := range wls.Items {
		wl := &wls.Items[i]
		if m := wl.Labels[build.LabelModel]; m != "" && wl.Labels[build.LabelComponent] == ComponentWorkload {
			w.Workloads[m] = wl
		}
	}
	var rfs kueue.ResourceFlavorList
	if err := q.client.List(ctx, &rfs); err != nil {
		return w, fmt.Errorf("list resource flavors: %w", err)
	}
	for i := range rfs.Items {
		w.Flavors[rfs.Items[i].Name] = &rfs.Items[i]
	}
	for i := range e.Spec.Models {
		if w.Workloads[e.Spec.Models[i].Name] == nil {
			p, err := q.priority(ctx, e)
			w.Priority = p
			return w, err
		}
	}
	return w, nil
}

// priority reads the class that gives the evaluation's Workloads their
// priority: the WorkloadPriorityClass of the label
// kueue.x-k8s.io/priority-class, else the PriorityClass of
// spec.placement.priorityClassName, else none.
func (q *kueueQueue) priority(ctx context.Context, e *repotv1.RepotEvaluation) (WorkloadPriority, error) {
	var (
		obj  client.Object
		what string
		ref  *kueue.PriorityClassRef
	)
	if name := e.Labels[PriorityClassLabel]; name != "" {
		obj, what, ref = &kueue.WorkloadPriorityClass{}, "WorkloadPriorityClass "+strconv.Quote(name)+" (label "+PriorityClassLabel+")", kueue.NewWorkloadPriorityClassRef(name)
	} else if name := podPriorityClass(e); name != "" {
		obj, what, ref = &schedulingv1.PriorityClass{}, "PriorityClass "+strconv.Quote(name)+" (spec.placement.priorityClassName)", kueue.NewPodPriorityClassRef(name)
	} else {
		return WorkloadPriority{}, nil
	}
	err := q.client.Get(ctx, client.ObjectKey{Name: ref.Name}, obj)
	switch {
	case apierrors.IsNotFound(err):
		return WorkloadPriority{Problem: "no Workload is created: " + what + " does not exist; create it or change the evaluation"}, nil
	case err != nil:
		return WorkloadPriority{}, fmt.Errorf("read %s: %w", what, err)
	}
	var value int32
	switch c := obj.(type) {
	case *kueue.WorkloadPriorityClass:
		value = c.Value
	case *schedulingv1.PriorityClass:
		value = c.Value
	}
	return WorkloadPriority{Ref: ref, Value: &value}, nil
}

func (q *kueueQueue) Submit(ctx context.Context, wl *kueue.Workload) error {
	if err := q.client.Create(ctx, wl); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("create workload %s: %w", wl.Name, err)
	}
	return nil
}

func (q *kueueQueue) Requeue(ctx context.Context, wl *kueue.Workload) error {
	u := wl.DeepCopy()
	requeueStatus(u, metav1.NewTime(q.now()))
	if err := q.client.Status().Update(ctx, u); err != nil {
		return fmt.Errorf("requeue workload %s: %w", wl.Name, err)
	}
	return nil
}

func (q *kueueQueue) Finish(ctx context.Context, wl *kueue.Workload, message string) error {
	u := wl.DeepCopy()
	apimeta.SetStatusCondition(&u.Status.Conditions, metav1.Condition{
		Type: kueue.WorkloadFinished, Status: metav1.ConditionTrue, Reason: kueue.WorkloadFinishedReasonSucceeded,
		Message: message, ObservedGeneration: u.Generation, LastTransitionTime: metav1.NewTime(q.now()),
	})
	if err := q.client.Status().Update(ctx, u); err != nil {
		return fmt.Errorf("finish workload %s: %w", wl.Name, err)
	}
	return nil
}

// requeueStatus is the status change that hands an evicted Workload's quota
// back: no admission, QuotaReserved and Admitted false, and Requeued as
// Kueue's own job integrations set it (jobframework, "handle eviction"):
// true only after a preemption or a node failure, which go straight back to
// the queue; false with the eviction's reason otherwise, so that Kueue itself
// decides when the Workload queues again (on reactivation after
// Deactivated, after the backoff of a PodsReady timeout). The Evicted
// condition stays as Kueue set it; Kueue clears it on the next admission.
func requeueStatus(wl *kueue.Workload, now metav1.Time) {
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
	} {
		c.ObservedGeneration = wl.Generation
		c.LastTransitionTime = now
		apimeta.SetStatusCondition(&wl.Status.Conditions, c)
	}
}

// podPriorityClass is spec.placement.priorityClassName, or "".
func podPriorityClass(e *repotv1.RepotEvaluation) string {
	if e.Spec.Placement == nil {
		return ""
	}
	return e.Spec.Placement.PriorityClassName
}
