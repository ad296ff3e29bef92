package controllers

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	kueue "sigs.k8s.io/kueue/apis/kueue/v1beta2"

	repotv1 "repot.dev/repot-operator/api/v1alpha1"
	"repot.dev/repot-operator/controllers/build"

	"repot.dev/repot-operator/controllers/planning"
)

// CacheOptions restrict the manager's informers to what the controller
// made (label app.kubernetes.io/managed-by=repot-operator) and to the watch
// namespace when one is given, so the operator does not cache every Job,
// ConfigMap and Pod of the cluster. withKueue adds Kueue's Workloads; pass
// KueueServed's answer, since a cache for a kind the API server does not
// serve fails the manager's start.
func CacheOptions(namespace string, withKueue bool) cache.Options {
	managed := labels.SelectorFromSet(labels.Set{build.LabelManagedBy: build.ManagerName})
	opts := cache.Options{
		ByObject: map[client.Object]cache.ByObject{
			&corev1.Pod{}: {Label: managed},
		},
		// Nothing reads managedFields, and every pass copies the cached
		// objects it lists: at sweep scale their managedFields were a
		// third of what the operator allocated. (An update that omits
		// managedFields leaves the stored ones as they are.)
		DefaultTransform: cache.TransformStripManagedFields(),
	}
	for _, k := range planning.ChildObjects() {
		opts.ByObject[k] = cache.ByObject{Label: managed}
	}
	if withKueue {
		opts.ByObject[&kueue.Workload{}] = cache.ByObject{Label: managed}
	}
	if namespace != "" {
		opts.DefaultNamespaces = map[string]cache.Config{namespace: {}}
	}
	return opts
}

// SetupWithManager registers the owner index and the evaluation controller.
// The manager's cache should use CacheOptions.
func SetupWithManager(ctx context.Context, mgr ctrl.Manager, opts build.Options) error {
	opts = opts.WithDefaults()
	for _, k := range planning.ChildObjects() {
		if err := mgr.GetFieldIndexer().IndexField(ctx, k, build.OwnerKey, func(o client.Object) []string {
			if uid := build.ControllerUID(o); uid != "" {
				return []string{uid}
			}
			return nil
		}); err != nil {
			return fmt.Errorf("index %T by owner: %w", k, err)
		}
	}
	r := &EvaluationReconciler{
		client:    mgr.GetClient(),
		apiReader: mgr.GetAPIReader(),
		recorder:  mgr.GetEventRecorder("repot-operator"),
		opts:      opts,
		ledgers:   planning.NewRecordCache(),
		pending:   newPendingWrites(),
		metrics:   newEvaluationMetrics(),
		apiServer: &endpointSliceAddresses{reader: mgr.GetAPIReader(), clock: opts.Clock},
	}
	var rec reconcile.Reconciler = r
	if opts.Wrap != nil {
		rec = opts.Wrap(r)
	}
	b := ctrl.NewControllerManagedBy(mgr).
		Named("repotevaluation").
		// Our own status writes do not need another pass; spec, label and
		// annotation changes do.
		For(&repotv1.RepotEvaluation{}, builder.WithPredicates(predicate.Or(
			predicate.GenerationChangedPredicate{}, predicate.AnnotationChangedPredicate{}, predicate.LabelChangedPredicate{}))).
		Watches(&corev1.Pod{}, handler.EnqueueRequestsFromMapFunc(podToEvaluation)).
		WithOptions(controller.Options{MaxConcurrentReconciles: opts.MaxConcurrentReconciles})
	for _, k := range planning.ChildObjects() {
		b = b.Owns(k)
	}
	b, err := setupKueue(ctx, mgr, r, b)
	if err != nil {
		return err
	}
	if err := setupPodMonitors(mgr); err != nil {
		return err
	}
	return b.Complete(rec)
}

// podToEvaluation maps a server pod (owned by a ReplicaSet) or a runner pod
// (owned by a Job), neither owned by the evaluation, to its evaluation
// through its labels.
func podToEvaluation(_ context.Context, o client.Object) []reconcile.Request {
	l := o.GetLabels()
	if (l[build.LabelComponent] != build.ComponentServer && l[build.LabelComponent] != build.ComponentRunner) || l[build.LabelEvaluation] == "" {
		return nil
	}
	return []reconcile.Request{{NamespacedName: types.NamespacedName{Namespace: o.GetNamespace(), Name: l[build.LabelEvaluation]}}}
}
