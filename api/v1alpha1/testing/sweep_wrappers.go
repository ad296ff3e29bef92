package testing

import (
	"k8s.io/utils/ptr"

	"repot.dev/repot-operator/api/v1alpha1"
)

// MaxParallelModels sets spec.maxParallelModels.
func (w *EvaluationWrapper) MaxParallelModels(n int32) *EvaluationWrapper {
	w.Spec.MaxParallelModels = ptr.To(n)
	return w
}

// StalledAfter sets spec.stalledAfterSeconds.
func (w *EvaluationWrapper) StalledAfter(s int32) *EvaluationWrapper {
	w.Spec.StalledAfterSeconds = ptr.To(s)
	return w
}

// SimulatedGPUs sets gpus of the last simulated model.
func (w *EvaluationWrapper) SimulatedGPUs(n int32) *EvaluationWrapper {
	if m := w.last(); m != nil && m.Simulated != nil {
		m.Simulated.GPUs = ptr.To(n)
	}
	return w
}

// Placement sets spec.placement.
func (w *EvaluationWrapper) Placement(p v1alpha1.PlacementSpec) *EvaluationWrapper {
	w.Spec.Placement = p.DeepCopy()
	return w
}
