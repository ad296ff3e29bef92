package build

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	repotv1 "repot.dev/repot-operator/api/v1alpha1"
)

// OwnerKey is the field index on every child kind that maps a child to the
// UID of the RepotEvaluation that controls it (Kubebuilder's CronJob
// pattern, keyed by UID rather than name): children are listed through it,
// never by name or label, so that the children of an earlier evaluation of
// the same name (deleted, its children not yet collected) are never read,
// adopted or counted.
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

// EvaluationController returns the controller owner reference of obj when a
// RepotEvaluation controls it, else nil.
func EvaluationController(obj metav1.Object) *metav1.OwnerReference {
	ref := metav1.GetControllerOf(obj)
	if ref == nil || ref.APIVersion != repotv1.GroupVersion.String() || ref.Kind != evaluationGVK.Kind {
		return nil
	}
	return ref
}

// ControllerUID returns the UID of the RepotEvaluation that controls obj,
// or "" when none does. It is the indexer function of OwnerKey.
func ControllerUID(obj metav1.Object) string {
	if ref := EvaluationController(obj); ref != nil {
		return string(ref.UID)
	}
	return ""
}

// LabelEvaluationUID is the label on the pods of an evaluation's servers
// and runners that names the UID of the evaluation: pods are owned by
// ReplicaSets and Jobs, not by the evaluation, and are selected by it.
const LabelEvaluationUID = "repot.dev/evaluation-uid"

// PodLabels are the labels of the pod template of a per-model child: the
// child's labels and the evaluation's UID.
func PodLabels(e *repotv1.RepotEvaluation, model, component string) map[string]string {
	l := ChildLabels(e.Name, model, component)
	if e.UID != "" {
		l[LabelEvaluationUID] = string(e.UID)
	}
	return l
}
