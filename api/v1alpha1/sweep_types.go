package v1alpha1

import (
	corev1 "k8s.io/api/core/v1"
)

// Defaults of the sweep fields.
const (
	// DefaultStalledAfterSeconds is how long a server may wait for capacity
	// before the evaluation reads Stalled.
	DefaultStalledAfterSeconds = 600
)

// ModelPhase is where one model is in its life: Queued (nothing of it
// exists), Starting (its server is starting), Running (its runners run),
// Done (its runs are recorded and its server is deleted).
type ModelPhase string

// Model phases.
const (
	ModelQueued   ModelPhase = "Queued"
	ModelStarting ModelPhase = "Starting"
	ModelRunning  ModelPhase = "Running"
	ModelDone     ModelPhase = "Done"
)

// PlacementSpec says where the children of an evaluation run and how the
// cluster attributes their cost. Every field is passed to every child that
// it applies to. Immutable once started.
type PlacementSpec struct {
	// priorityClassName is the PriorityClass of every server and runner pod.
	// The PriorityClass must exist. Unset means the cluster's default. With
	// Kueue (label kueue.x-k8s.io/queue-name), its value is also the
	// priority of the models' Workloads, unless the label
	// kueue.x-k8s.io/priority-class names a WorkloadPriorityClass.
	// +optional
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:XValidation:rule="self.matches('^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$')",message="spec.placement.priorityClassName must be a DNS subdomain name such as \"batch-low\": lowercase letters, digits, '-' and '.'"
	// +kubebuilder:validation:XValidation:rule="!self.startsWith('system-')",message="spec.placement.priorityClassName must not name a system- PriorityClass: those are reserved for cluster components"
	PriorityClassName string `json:"priorityClassName,omitempty"`

	// imagePullSecrets name Secrets of the evaluation's namespace that every
	// server and runner pod pulls its images with, at most 8.
	// +optional
	// +listType=map
	// +listMapKey=name
	// +kubebuilder:validation:MaxItems=8
	ImagePullSecrets []SecretName `json:"imagePullSecrets,omitempty"`

	// labels are added to every child object and pod, e.g. a team or cost
	// center for cost attribution, at most 16. Keys of the operator's own
	// (repot.dev/ and app.kubernetes.io/managed-by) are refused.
	// +optional
	// +listType=map
	// +listMapKey=key
	// +kubebuilder:validation:MaxItems=16
	// +kubebuilder:validation:XValidation:rule="self.all(l, !l.key.startsWith('repot.dev/') && l.key != 'app.kubernetes.io/managed-by')",message="spec.placement.labels must not set repot.dev/ keys or app.kubernetes.io/managed-by: the operator finds its children by them"
	// +kubebuilder:validation:XValidation:rule="self.all(l, l.value.matches('^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$'))",message="spec.placement.labels values must be at most 63 characters of letters, digits, '-', '_' and '.', starting and ending with a letter or digit"
	Labels []MetadataPair `json:"labels,omitempty"`

	// annotations are added to every child object and pod, at most 16.
	// Keys of the operator's own (repot.dev/) are refused.
	// +optional
	// +listType=map
	// +listMapKey=key
	// +kubebuilder:validation:MaxItems=16
	// +kubebuilder:validation:XValidation:rule="self.all(a, !a.key.startsWith('repot.dev/'))",message="spec.placement.annotations must not set repot.dev/ keys: they are the operator's"
	Annotations []MetadataPair `json:"annotations,omitempty"`

	// runner places the runner pods (which need no GPU).
	// +optional
	Runner *RunnerPlacement `json:"runner,omitempty"`

	// server places the model servers.
	// +optional
	Server *ServerPlacement `json:"server,omitempty"`
}

// SecretName names a Secret in the evaluation's namespace.
type SecretName struct {
	// name is the Secret's name.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:XValidation:rule="self.matches('^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$')",message="spec.placement.imagePullSecrets[].name must be a Secret name: lowercase letters, digits, '-' and '.'"
	Name string `json:"name"`
}

// MetadataPair is a label or annotation as a key/value pair.
type MetadataPair struct {
	// key is a qualified name such as "example.com/team" or "team": an
	// optional DNS subdomain prefix and '/', then at most 63 letters,
	// digits, '-', '_' and '.', starting and ending with a letter or digit.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=317
	// +kubebuilder:validation:XValidation:rule="self.matches('^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\\\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*/)?[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?$')",message="key must be a qualified name such as \"example.com/team\" or \"team\": an optional lowercase DNS prefix and '/', then at most 63 letters, digits, '-', '_' and '.', starting and ending with a letter or digit"
	Key string `json:"key"`

	// value is the value; for a label at most 63 characters (checked on the
	// list), for an annotation at most 4096.
	// +required
	// +kubebuilder:validation:MaxLength=4096
	Value string `json:"value"`
}

// RunnerPlacement places the runner pods.
type RunnerPlacement struct {
	// nodeSelector are node labels a runner pod's node must carry, as
	// key/value pairs (unique keys), at most 16.
	// +optional
	// +listType=map
	// +listMapKey=key
	// +kubebuilder:validation:MaxItems=16
	// +kubebuilder:validation:XValidation:rule="self.all(l, l.key.matches('^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\\\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*/)?[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?$'))",message="spec.placement.runner.nodeSelector keys must be label keys such as \"node-pool\" or \"example.com/pool\""
	// +kubebuilder:validation:XValidation:rule="self.all(l, l.value.matches('^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$'))",message="spec.placement.runner.nodeSelector values must be label values: at most 63 letters, digits, '-', '_' and '.', starting and ending with a letter or digit"
	NodeSelector []NodeLabel `json:"nodeSelector,omitempty"`

	// tolerations let runner pods schedule on tainted nodes, at most 16.
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=16
	// +kubebuilder:validation:XValidation:rule="self.all(t, !has(t.operator) || t.operator in ['Exists', 'Equal'])",message="spec.placement.runner.tolerations[].operator must be Exists or Equal"
	// +kubebuilder:validation:XValidation:rule="self.all(t, !has(t.effect) || t.effect in ['', 'NoSchedule', 'PreferNoSchedule', 'NoExecute'])",message="spec.placement.runner.tolerations[].effect must be NoSchedule, PreferNoSchedule or NoExecute (or empty for all)"
	// +kubebuilder:validation:XValidation:rule="self.all(t, !has(t.operator) || t.operator != 'Exists' || !has(t.value) || t.value == '')",message="spec.placement.runner.tolerations[]: a toleration with operator Exists must not have a value"
	// +kubebuilder:validation:XValidation:rule="self.all(t, has(t.key) && t.key != '' || has(t.operator) && t.operator == 'Exists')",message="spec.placement.runner.tolerations[]: a toleration without a key must use operator Exists"
	// +kubebuilder:validation:XValidation:rule="self.all(t, !has(t.tolerationSeconds) || has(t.effect) && t.effect == 'NoExecute')",message="spec.placement.runner.tolerations[].tolerationSeconds is only allowed with effect NoExecute"
	Tolerations []corev1.Toleration `json:"tolerations,omitempty"`
}

// ServerPlacement places the model servers.
type ServerPlacement struct {
	// schedulerName is the scheduler of the server pods, e.g. a GPU-aware or
	// gang scheduler. Unset means the default scheduler.
	// +optional
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:XValidation:rule="self.matches('^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$')",message="spec.placement.server.schedulerName must be a scheduler name such as \"default-scheduler\": lowercase letters, digits, '-' and '.'"
	SchedulerName string `json:"schedulerName,omitempty"`
}

// MaxParallelModelsOrAll is spec.maxParallelModels, or the number of
// models when unset.
func (s *RepotEvaluationSpec) MaxParallelModelsOrAll() int {
	if s.MaxParallelModels == nil || int(*s.MaxParallelModels) > len(s.Models) {
		return len(s.Models)
	}
	return int(*s.MaxParallelModels)
}

// StalledAfterSecondsOrDefault is spec.stalledAfterSeconds or 600.
func (s *RepotEvaluationSpec) StalledAfterSecondsOrDefault() int32 {
	if s.StalledAfterSeconds == nil {
		return DefaultStalledAfterSeconds
	}
	return *s.StalledAfterSeconds
}

// ServerGPUs is the number of GPUs a model's server holds: vllm.gpus, a
// simulated server's gpus, 0 for an endpoint.
func (m *ModelSpec) ServerGPUs() int32 {
	switch {
	case m.VLLM != nil:
		return m.VLLM.GPUsOrDefault()
	case m.Simulated != nil:
		return deref(m.Simulated.GPUs, 0)
	}
	return 0
}

// Condition reasons of the per-model lifecycle, capacity and runner
// diagnosis (docs/operations.md, "Condition reasons").
const (
	// ReasonModelsQueued: no model runs now; the others wait for a slot of
	// spec.maxParallelModels or for admission.
	ReasonModelsQueued = "ModelsQueued"
	// ReasonWaitingForCapacity: a server waits for a node with room (the
	// scheduler said Unschedulable) for less than spec.stalledAfterSeconds.
	ReasonWaitingForCapacity = "WaitingForCapacity"
	// ReasonRunnerImagePullFailed: a runner pod cannot pull its image.
	ReasonRunnerImagePullFailed = "RunnerImagePullFailed"
	// ReasonRunnerPending: a runner pod stayed Pending past
	// spec.stalledAfterSeconds.
	ReasonRunnerPending = "RunnerPending"
	// ReasonRunnerMountFailed: a runner pod's volume cannot be mounted.
	ReasonRunnerMountFailed = "RunnerMountFailed"
	// ReasonRunnerPodsRefused: the API server refuses to create a runner
	// Job's pods (a ResourceQuota, Pod Security admission, a LimitRange or
	// a webhook): the Job controller reports FailedCreate events.
	ReasonRunnerPodsRefused = "RunnerPodsRefused"
)
