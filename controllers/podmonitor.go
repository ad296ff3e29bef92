package controllers

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/tools/events"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/predicate"

	repotv1 "repot.dev/repot-operator/api/v1alpha1"
	"repot.dev/repot-operator/controllers/build"
)

// +kubebuilder:rbac:groups=monitoring.coreos.com,resources=podmonitors,verbs=get;create;patch;delete

// podMonitorGVK is the Prometheus Operator's PodMonitor. The operator
// builds it as unstructured so that it depends neither on the Prometheus
// Operator's Go module nor on its CRD being installed.
var podMonitorGVK = schema.GroupVersionKind{Group: "monitoring.coreos.com", Version: "v1", Kind: "PodMonitor"}

// ReasonPodMonitorUnavailable is the Warning event reason when podMonitor is
// asked for but the PodMonitor CRD is not installed.
const ReasonPodMonitorUnavailable = "PodMonitorUnavailable"

// podMonitorFor is the PodMonitor of a vLLM model's server pod: vLLM's
// /metrics on the http port and the GPU telemetry's /metrics, every 30s.
func podMonitorFor(e *repotv1.RepotEvaluation, m *repotv1.ModelSpec) *unstructured.Unstructured {
	meta := build.ChildMeta(e, build.ServerName(e.Name, m.Name), m.Name, build.ComponentServer)
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(podMonitorGVK)
	u.SetName(meta.Name)
	u.SetNamespace(meta.Namespace)
	u.SetLabels(meta.Labels)
	u.SetOwnerReferences(meta.OwnerReferences)
	sel := map[string]any{}
	for k, v := range build.ServerSelector(e.Name, m.Name) {
		sel[k] = v
	}
	u.Object["spec"] = map[string]any{
		"selector": map[string]any{"matchLabels": sel},
		"podMetricsEndpoints": []any{
			map[string]any{"port": "http", "path": "/metrics", "interval": "30s"},
			map[string]any{"port": "telemetry", "path": "/metrics", "interval": "30s"},
		},
	}
	return u
}

// podMonitorReconciler keeps one PodMonitor per vLLM model that asks for
// one. It is apart from the evaluation controller because the PodMonitor
// kind is optional: without its CRD it reports a Warning event once per
// spec change and leaves everything else alone.
type podMonitorReconciler struct {
	client   client.Client
	recorder events.EventRecorder
}

func setupPodMonitors(mgr ctrl.Manager) error {
	r := &podMonitorReconciler{client: mgr.GetClient(), recorder: mgr.GetEventRecorder("repot-operator")}
	return ctrl.NewControllerManagedBy(mgr).
		Named("podmonitor").
		For(&repotv1.RepotEvaluation{}, builder.WithPredicates(predicate.GenerationChangedPredicate{})).
		Complete(r)
}

func (r *podMonitorReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	e := &repotv1.RepotEvaluation{}
	if err := r.client.Get(ctx, req.NamespacedName, e); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if !e.DeletionTimestamp.IsZero() {
		return ctrl.Result{}, nil
	}
	for i := range e.Spec.Models {
		m := &e.Spec.Models[i]
		want := m.VLLM != nil && m.VLLM.PodMonitor
		pm := podMonitorFor(e, m)
		var err error
		if want {
			err = r.client.Apply(ctx, client.ApplyConfigurationFromUnstructured(pm), client.FieldOwner(build.ManagerName), client.ForceOwnership)
		} else {
			err = client.IgnoreNotFound(r.client.Delete(ctx, pm))
		}
		switch {
		case err == nil:
		case apimeta.IsNoMatchError(err) || apierrors.IsNotFound(err):
			if want {
				r.recorder.Eventf(e, nil, corev1.EventTypeWarning, ReasonPodMonitorUnavailable, "CreatePodMonitor",
					"spec.models[%d].vllm.podMonitor is true, but the PodMonitor kind (monitoring.coreos.com/v1) is not installed: install the Prometheus Operator CRDs or set podMonitor to false", i)
			}
			return ctrl.Result{}, nil // nothing to retry until the spec changes
		default:
			return ctrl.Result{}, fmt.Errorf("PodMonitor %s: %w", pm.GetName(), err)
		}
	}
	return ctrl.Result{}, nil
}
