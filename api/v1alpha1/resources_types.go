package v1alpha1

import corev1 "k8s.io/api/core/v1"

// ResourceRequirements are the compute resources of a container, as in
// core/v1 (requests and limits by resource name) but without dynamic
// resource claims and with a bounded number of entries.
type ResourceRequirements struct {
	// requests are the minimum resources, e.g. {cpu: "2", memory: 4Gi}.
	// +optional
	// +kubebuilder:validation:MaxProperties=16
	Requests corev1.ResourceList `json:"requests,omitempty"`

	// limits are the maximum resources, e.g. {memory: 8Gi}.
	// +optional
	// +kubebuilder:validation:MaxProperties=16
	Limits corev1.ResourceList `json:"limits,omitempty"`
}

// Core returns the requirements as a core/v1 value (nil-safe).
func (r *ResourceRequirements) Core() corev1.ResourceRequirements {
	if r == nil {
		return corev1.ResourceRequirements{}
	}
	out := corev1.ResourceRequirements{}
	if r.Requests != nil {
		out.Requests = r.Requests.DeepCopy()
	}
	if r.Limits != nil {
		out.Limits = r.Limits.DeepCopy()
	}
	return out
}
