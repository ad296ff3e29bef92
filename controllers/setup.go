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
		by := cache.ByObject{Label: managed}
		if _, ok := k.(*corev1.ConfigMap); ok {
			// It replaces the default transform, and strips the
			// managedFields too.
			by.Transform = DropConfigMapData
		}
		opts.ByObject[k] = by
	}
	if withKueue {
		opts.ByObject[&kueue.Workload{}] = cache.ByObject{Label: managed}
	}
	if namespace != "" {
		opts.DefaultNamespaces = map[string]cache.Config{namespace: {}}
	}
	return opts
}

// DropConfigMapData is the cache's transform of ConfigMaps: it strips the
// managedFields (as the default transform does) and keeps the data only of
// the ConfigMaps the operator reads from the cache, the ledgers of running
// evaluations: a ConfigMap that a RepotEvaluation controls (owner
// reference), labelled a ledger, and not sealed (planning.IsSealed).
//
// The cache selects ConfigMaps by the managed-by label, which anyone who
// may create a ConfigMap can set: without this, every tenant could make the
// operator hold up to 1 MB per ConfigMap it labels, in every namespace it
// watches. Nothing reads another ConfigMap's data from the cache (a problem
// set is read from the API server, snapshot), so that costs nothing.
//
// A sealed ledger's data goes too: its evaluation ended and its stored
// status counts the records. A ledger holds up to 1 MB of records, and the
// informer would otherwise keep every ledger of every evaluation not yet
// deleted; the passes of a sealed evaluation read its ledgers from the API
// server (snapshot). Other objects pass unchanged.
func DropConfigMapData(obj any) (any, error) {
	obj, err := cache.TransformStripManagedFields()(obj)
	if err != nil {
		return obj, err
	}
	if cm, ok := obj.(*corev1.ConfigMap); ok && !cachesData(cm) {
		cm.Data, cm.BinaryData = nil, nil
	}
	return obj, nil
}

// cachesData says whether the cache keeps cm's data (DropConfigMapData).
func cachesData(cm *corev1.ConfigMap) bool {
	return build.EvaluationController(cm) != nil && cm.Labels[build.LabelComponent] == build.ComponentLedger && !planning.IsSealed(cm)
}

// ReconcilerWrapper wraps the evaluation reconciler (instrumentation, the
// integration benchmark's timing).
type ReconcilerWrapper func(reconcile.Reconciler) reconcile.Reconciler

// SetupWithManager registers the owner index and the evaluation controller,
// its reconciler wrapped by each of wrap in turn. The manager's cache
// should use CacheOptions.
func SetupWithManager(ctx context.Context, mgr ctrl.Manager, opts build.Options, wrap ...ReconcilerWrapper) error {
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
	for _, w := range wrap {
		rec = w(rec)
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
