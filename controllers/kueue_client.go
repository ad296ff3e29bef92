package controllers

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
	"repot.dev/repot-operator/controllers/kueueadapter"
)

// +kubebuilder:rbac:groups=kueue.x-k8s.io,resources=workloads,verbs=get;list;watch;create;delete
// +kubebuilder:rbac:groups=kueue.x-k8s.io,resources=workloads/status,verbs=get;update;patch
// +kubebuilder:rbac:groups=kueue.x-k8s.io,resources=resourceflavors;workloadpriorityclasses,verbs=get;list;watch
// +kubebuilder:rbac:groups=scheduling.k8s.io,resources=priorityclasses,verbs=get;list;watch

// The Kueue client of the shell: whether Kueue is served, and the Queue
// that observes and writes Workloads (kueueadapter.Queue).

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

// kueueQueue is the kueueadapter.Queue of a cluster with Kueue installed.
type kueueQueue struct {
	client client.Client
	now    func() time.Time
}

// NewKueueQueue returns the kueueadapter.Queue that talks to Kueue through c (a client
// whose scheme has Kueue's v1beta2 types).
func NewKueueQueue(c client.Client, now func() time.Time) kueueadapter.Queue {
	return &kueueQueue{client: c, now: now}
}

func (q *kueueQueue) Observe(ctx context.Context, e *repotv1.RepotEvaluation) (kueueadapter.QueueWorld, error) {
	w := kueueadapter.QueueWorld{Workloads: map[string]*kueue.Workload{}, Flavors: map[string]*kueue.ResourceFlavor{}}
	var wls kueue.WorkloadList
	if err := q.client.List(ctx, &wls, client.InNamespace(e.Namespace), client.MatchingFields{build.OwnerKey: string(e.UID)}); err != nil {
		return w, fmt.Errorf("list owned workloads: %w", err)
	}
	for i := range wls.Items {
		wl := &wls.Items[i]
		if m := wl.Labels[build.LabelModel]; m != "" && wl.Labels[build.LabelComponent] == kueueadapter.ComponentWorkload {
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
func (q *kueueQueue) priority(ctx context.Context, e *repotv1.RepotEvaluation) (kueueadapter.WorkloadPriority, error) {
	var (
		obj  client.Object
		what string
		ref  *kueue.PriorityClassRef
	)
	if name := e.Labels[kueueadapter.PriorityClassLabel]; name != "" {
		obj, what, ref = &kueue.WorkloadPriorityClass{}, "WorkloadPriorityClass "+strconv.Quote(name)+" (label "+kueueadapter.PriorityClassLabel+")", kueue.NewWorkloadPriorityClassRef(name)
	} else if name := kueueadapter.PodPriorityClass(e); name != "" {
		obj, what, ref = &schedulingv1.PriorityClass{}, "PriorityClass "+strconv.Quote(name)+" (spec.placement.priorityClassName)", kueue.NewPodPriorityClassRef(name)
	} else {
		return kueueadapter.WorkloadPriority{}, nil
	}
	err := q.client.Get(ctx, client.ObjectKey{Name: ref.Name}, obj)
	switch {
	case apierrors.IsNotFound(err):
		return kueueadapter.WorkloadPriority{Problem: "no Workload is created: " + what + " does not exist; create it or change the evaluation"}, nil
	case err != nil:
		return kueueadapter.WorkloadPriority{}, fmt.Errorf("read %s: %w", what, err)
	}
	var value int32
	switch c := obj.(type) {
	case *kueue.WorkloadPriorityClass:
		value = c.Value
	case *schedulingv1.PriorityClass:
		value = c.Value
	}
	return kueueadapter.WorkloadPriority{Ref: ref, Value: &value}, nil
}

// Submit creates wl. AlreadyExists is returned (wrapped) like any other
// error: a Workload of that name may be this evaluation's, not yet in the
// cache, or another owner's (an earlier evaluation of the same name whose
// Workload the garbage collector has not removed yet), which would leave
// the model waiting on an admission that never concerns it; applyQueue
// tells the two apart.
func (q *kueueQueue) Submit(ctx context.Context, wl *kueue.Workload) error {
	if err := q.client.Create(ctx, wl); err != nil {
		return fmt.Errorf("create workload %s: %w", wl.Name, err)
	}
	return nil
}

func (q *kueueQueue) Requeue(ctx context.Context, wl *kueue.Workload) error {
	u := wl.DeepCopy()
	kueueadapter.RequeueStatus(u, metav1.NewTime(q.now()))
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

// SetPodsReady patches the status with an optimistic lock: Kueue writes
// the same conditions, and a condition list merged blind would drop its
// change (a JSON merge patch replaces the whole list).
func (q *kueueQueue) SetPodsReady(ctx context.Context, wl *kueue.Workload, c metav1.Condition) error {
	u := wl.DeepCopy()
	apimeta.SetStatusCondition(&u.Status.Conditions, c)
	if err := q.client.Status().Patch(ctx, u, client.MergeFromWithOptions(wl, client.MergeFromWithOptimisticLock{})); err != nil {
		return fmt.Errorf("set PodsReady of workload %s: %w", wl.Name, err)
	}
	return nil
}

func (q *kueueQueue) Delete(ctx context.Context, wl *kueue.Workload) error {
	err := q.client.Delete(ctx, wl, client.Preconditions{UID: &wl.UID})
	if err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("delete workload %s: %w", wl.Name, err)
	}
	return nil
}
