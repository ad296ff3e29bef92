package v1alpha1

import "k8s.io/apimachinery/pkg/api/resource"

// BudgetLimits are the limits of a budget. Every limit is optional; an unset
// limit does not cap anything. A limit is reached when what was spent is at
// least the limit.
type BudgetLimits struct {
	// maxGPUHours caps the GPU-hours the model servers hold (the sum of
	// status.models[].gpuSecondsHeld over 3600), as a decimal string with
	// at most 3 decimals, e.g. "12", "0.5" or "0.025" (90 GPU-seconds): the
	// API holds no floats, and a decimal string states fractions of an hour
	// exactly (the smallest step, a milli-GPU-hour, is 3.6 GPU-seconds).
	// Above 0. Endpoint models and simulated models without gpus hold no
	// GPU. Unset: no cap. May change at any time.
	// +optional
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=16
	// +kubebuilder:validation:Pattern=`^[0-9]{1,12}(\.[0-9]{1,3})?$`
	// +kubebuilder:validation:XValidation:rule="self.matches('[1-9]')",message="maxGPUHours must be above 0: remove it to set no cap, or suspend the evaluation to stop it"
	MaxGPUHours string `json:"maxGPUHours,omitempty"`

	// maxCompletionTokens caps the completion tokens of the recorded runs
	// (the sum of status.models[].methods[].completionTokens) and of the
	// calls that returned of runs stopped before they finished, 1 to 10^15.
	// While it is set each running runner shard starts a model call only
	// while its share of what is left covers the calls in flight and the
	// new one at sampling.maxTokens each. Unset: no cap. May change at any
	// time.
	// +optional
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=1000000000000000
	MaxCompletionTokens *int64 `json:"maxCompletionTokens,omitempty"`

	// maxModelCalls caps the model calls of the recorded runs (the sum of
	// status.models[].methods[].calls) and the calls that returned of runs
	// stopped before they finished, 1 to 10^12. While it is set each
	// running runner shard starts a model call only while its share of what
	// is left covers the calls in flight and the new one. Unset: no cap. May
	// change at any time.
	// +optional
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=1000000000000
	MaxModelCalls *int64 `json:"maxModelCalls,omitempty"`
}

// BudgetSpec caps what an evaluation spends. The limits of the budget
// itself apply to all models together; perModel adds limits of single
// models. When a model reaches its own limit or the evaluation reaches its
// limit, the operator starts no new runs of it: it deletes the model's
// runner Job (each runner stores what it recorded before it exits) and
// server, and finishes its Kueue Workload; the ledgers keep every recorded
// run. Once every model is done or stopped by the budget the evaluation
// reads BudgetExhausted. Raising or removing the limit resumes it from the
// ledgers. Budgets count recorded runs and the returned calls of runs
// stopped mid-way; the runners start no call their share of the tokens and
// calls left cannot cover, so a limit is passed by little more than one
// call per running shard (docs/operations.md).
type BudgetSpec struct {
	BudgetLimits `json:",inline"`

	// perModel are limits of single models, at most one entry per model of
	// spec.models. They live here, not in spec.models, because spec.models
	// is immutable once started and a budget may change at any time.
	// +optional
	// +listType=map
	// +listMapKey=model
	// +kubebuilder:validation:MaxItems=16
	PerModel []ModelBudget `json:"perModel,omitempty"`
}

// ModelBudget are the limits of one model.
type ModelBudget struct {
	BudgetLimits `json:",inline"`

	// model is the name of a model of spec.models.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=20
	Model string `json:"model"`
}

// MilliGPUHours is maxGPUHours in thousandths of a GPU-hour, and whether it
// is set. The API server's pattern admits only decimals that parse.
func (l *BudgetLimits) MilliGPUHours() (int64, bool) {
	if l == nil || l.MaxGPUHours == "" {
		return 0, false
	}
	q, err := resource.ParseQuantity(l.MaxGPUHours)
	if err != nil {
		return 0, false
	}
	return q.MilliValue(), true
}

// Reasons of a budget.
const (
	// ReasonBudgetExhausted: every model is either done or stopped because
	// it reached a limit of spec.budget; the results recorded so far stay
	// in the status, marked partial (Running false, Complete false, Stalled
	// true: raising the budget resumes the evaluation).
	ReasonBudgetExhausted = "BudgetExhausted"
)

// StateBudgetExhausted is status.summary.state of an evaluation stopped by
// its budget.
const StateBudgetExhausted EvaluationState = "BudgetExhausted"

// BudgetStatus is what the evaluation spent against spec.budget.
type BudgetStatus struct {
	// exhausted is true when every model is done or stopped by the budget
	// and at least one is stopped: the evaluation reads BudgetExhausted.
	// +optional
	Exhausted bool `json:"exhausted,omitempty"`

	// partial is true while a model is stopped by the budget with runs not
	// recorded: the results in the status cover only the recorded runs.
	// +optional
	Partial bool `json:"partial,omitempty"`

	// runsNotStarted is the number of runs of the stopped models that are
	// not recorded (0 when the number of problems is unknown).
	// +optional
	RunsNotStarted int32 `json:"runsNotStarted,omitempty"`

	// used is what all models spent.
	// +optional
	Used BudgetUsage `json:"used,omitempty"`

	// models are the models, in the order of spec.models, with what each
	// spent and whether the budget stopped it.
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=16
	Models []ModelBudgetStatus `json:"models,omitempty"`

	// message names the limits reached, e.g.
	// "spec.budget.perModel[m1].maxCompletionTokens 5000 reached (5120
	// used)".
	// +optional
	// +kubebuilder:validation:MaxLength=2048
	Message string `json:"message,omitempty"`
}

// BudgetUsage is what was spent.
type BudgetUsage struct {
	// gpuSeconds is the GPU-seconds the model servers held
	// (status.models[].gpuSecondsHeld, counted to now while a server runs).
	// +optional
	GPUSeconds int64 `json:"gpuSeconds,omitempty"`

	// completionTokens is the completion tokens of the recorded runs and
	// of the returned calls of runs stopped before they finished.
	// +optional
	CompletionTokens int64 `json:"completionTokens,omitempty"`

	// modelCalls is the model calls of the recorded runs and the returned
	// calls of runs stopped before they finished.
	// +optional
	ModelCalls int64 `json:"modelCalls,omitempty"`
}

// ModelBudgetStatus is one model's spending.
type ModelBudgetStatus struct {
	// name is the model's name.
	// +required
	// +kubebuilder:validation:MaxLength=20
	Name string `json:"name"`

	// used is what the model spent.
	// +optional
	Used BudgetUsage `json:"used,omitempty"`

	// stopped is true when a limit stopped the model (its own, or the
	// evaluation's) before its runs were all recorded.
	// +optional
	Stopped bool `json:"stopped,omitempty"`
}
