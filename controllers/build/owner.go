package build

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	repotv1 "repot.dev/repot-operator/api/v1alpha1"
)

// OwnerKey is the field index on every child kind that maps a child to the
// name of the RepotEvaluation that controls it (Kubebuilder's CronJob
// pattern): children are listed through it, never by label guessing.
const OwnerKey = ".metadata.controller"

// evaluationGVK is the kind of the owner references the controller writes.
var evaluationGVK = repotv1.GroupVersion.WithKind("RepotEvaluation")

// ChildMeta is the metadata of a child object: deterministic name, the
// evaluation's namespace, labels, and a controller owner reference that
// blocks the owner's foreground deletion until the child is gone.
func ChildMeta(e *repotv1.RepotEvaluation, name, model, component string) metav1.ObjectMeta {
	meta := metav1.ObjectMeta{
		Name:            name,
		Namespace:       e.Namespace,
		Labels:          ChildLabels(e.Name, model, component),
		OwnerReferences: []metav1.OwnerReference{*metav1.NewControllerRef(e, evaluationGVK)},
	}
	placeMeta(e, &meta)
	return meta
}

// ControllerName returns the name of the RepotEvaluation that controls obj,
// or "" when none does. It is the indexer function of ownerKey.
func ControllerName(obj metav1.Object) string {
	ref := metav1.GetControllerOf(obj)
	if ref == nil || ref.APIVersion != repotv1.GroupVersion.String() || ref.Kind != evaluationGVK.Kind {
		return ""
	}
	return ref.Name
}
