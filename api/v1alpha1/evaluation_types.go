package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// RepotEvaluation runs the RePoT methods (pot, pot-retry, repot,
// repot-adaptive and the ablations) on a problem suite against one or more
// models, and reports success rates, routes and token costs in its status.
//
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:scope=Namespaced,shortName=reval,categories=repot
// +kubebuilder:printcolumn:name="Servers",type=string,JSONPath=`.status.summary.servers`,description="Model servers ready / models"
// +kubebuilder:printcolumn:name="Progress",type=string,JSONPath=`.status.progress.text`,description="Runs done / runs total"
// +kubebuilder:printcolumn:name="PoT",type=string,JSONPath=`.status.summary.pot`,description="pot success rate"
// +kubebuilder:printcolumn:name="RePoT",type=string,JSONPath=`.status.summary.repot`,description="repot success rate"
// +kubebuilder:printcolumn:name="Adaptive",type=string,JSONPath=`.status.summary.adaptive`,description="repot-adaptive success rate"
// +kubebuilder:printcolumn:name="Recovery",type=string,JSONPath=`.status.summary.derail`,description="derail-550: recovery rate per condition (nf, eo, sf, sla, full, nopfx, rst)"
// +kubebuilder:printcolumn:name="State",type=string,JSONPath=`.status.summary.state`,priority=1,description="Pending, Running, Suspended, Complete, Failed, Stalled or BudgetExhausted"
// +kubebuilder:printcolumn:name="Traces",type=string,JSONPath=`.status.artifacts.state`,priority=1,description="S3 artifact store: Uploading, Complete or Partial (empty without a store)"
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
// +kubebuilder:validation:XValidation:rule="size(self.metadata.name) <= 30",message="metadata.name must be at most 30 characters: the names of servers, Jobs and ledgers are built from it"
// +kubebuilder:validation:XValidation:rule="self.metadata.name.matches('^[a-z]([-a-z0-9]*[a-z0-9])?$')",message="metadata.name must start with a lowercase letter and hold only lowercase letters, digits and '-' (no dots), ending with a letter or digit, e.g. run-2026-12-03: the servers' Service names (DNS-1035 labels) are built from it"
// +kubebuilder:validation:XValidation:rule="!has(oldSelf.status) || !has(oldSelf.status.startTime) || ((has(self.spec.suite) ? has(oldSelf.spec.suite) && self.spec.suite == oldSelf.spec.suite : !has(oldSelf.spec.suite)) && (has(self.spec.problems) ? has(oldSelf.spec.problems) && self.spec.problems == oldSelf.spec.problems : !has(oldSelf.spec.problems)) && (has(self.spec.methods) ? has(oldSelf.spec.methods) && self.spec.methods == oldSelf.spec.methods : !has(oldSelf.spec.methods)))",message="spec.suite, spec.problems and spec.methods cannot change once the evaluation has started (status.startTime is set); only spec.suspend, spec.budget, spec.maxParallelModels and spec.stalledAfterSeconds may change. Create a new RepotEvaluation instead (a RepotSchedule creates one per run from a template you may edit)"
// +kubebuilder:validation:XValidation:rule="!has(oldSelf.status) || !has(oldSelf.status.startTime) || ((has(self.spec.repairBudget) ? has(oldSelf.spec.repairBudget) && self.spec.repairBudget == oldSelf.spec.repairBudget : !has(oldSelf.spec.repairBudget)) && (has(self.spec.adaptive) ? has(oldSelf.spec.adaptive) && self.spec.adaptive == oldSelf.spec.adaptive : !has(oldSelf.spec.adaptive)) && (has(self.spec.sampling) ? has(oldSelf.spec.sampling) && self.spec.sampling == oldSelf.spec.sampling : !has(oldSelf.spec.sampling)) && (has(self.spec.vrr) ? has(oldSelf.spec.vrr) && self.spec.vrr == oldSelf.spec.vrr : !has(oldSelf.spec.vrr)))",message="spec.repairBudget, spec.adaptive, spec.sampling and spec.vrr cannot change once the evaluation has started (status.startTime is set); only spec.suspend, spec.budget, spec.maxParallelModels and spec.stalledAfterSeconds may change. Create a new RepotEvaluation instead (a RepotSchedule creates one per run from a template you may edit)"
// +kubebuilder:validation:XValidation:rule="!has(oldSelf.status) || !has(oldSelf.status.startTime) || (has(self.spec.placement) ? has(oldSelf.spec.placement) && self.spec.placement == oldSelf.spec.placement : !has(oldSelf.spec.placement))",message="spec.placement cannot change once the evaluation has started (status.startTime is set): its children already carry it. Create a new RepotEvaluation instead (a RepotSchedule creates one per run from a template you may edit)"
// +kubebuilder:validation:XValidation:rule="!has(oldSelf.status) || !has(oldSelf.status.startTime) || ((has(self.spec.models) ? has(oldSelf.spec.models) && self.spec.models == oldSelf.spec.models : !has(oldSelf.spec.models)))",message="spec.models cannot change once the evaluation has started (status.startTime is set); only spec.suspend, spec.budget, spec.maxParallelModels and spec.stalledAfterSeconds may change. Create a new RepotEvaluation instead (a RepotSchedule creates one per run from a template you may edit)"
// +kubebuilder:validation:XValidation:rule="!has(oldSelf.status) || !has(oldSelf.status.startTime) || ((has(self.spec.runner) ? has(oldSelf.spec.runner) && self.spec.runner == oldSelf.spec.runner : !has(oldSelf.spec.runner)) && (has(self.spec.artifacts) ? has(oldSelf.spec.artifacts) && (has(self.spec.artifacts.pvcName) ? has(oldSelf.spec.artifacts.pvcName) && self.spec.artifacts.pvcName == oldSelf.spec.artifacts.pvcName : !has(oldSelf.spec.artifacts.pvcName)) && (has(self.spec.artifacts.s3) ? has(oldSelf.spec.artifacts.s3) && self.spec.artifacts.s3 == oldSelf.spec.artifacts.s3 : !has(oldSelf.spec.artifacts.s3)) : !has(oldSelf.spec.artifacts)) && (has(self.spec.activeDeadlineSeconds) ? has(oldSelf.spec.activeDeadlineSeconds) && self.spec.activeDeadlineSeconds == oldSelf.spec.activeDeadlineSeconds : !has(oldSelf.spec.activeDeadlineSeconds)) && (has(self.spec.ttlSecondsAfterFinished) ? has(oldSelf.spec.ttlSecondsAfterFinished) && self.spec.ttlSecondsAfterFinished == oldSelf.spec.ttlSecondsAfterFinished : !has(oldSelf.spec.ttlSecondsAfterFinished)))",message="spec.runner, spec.artifacts, spec.activeDeadlineSeconds and spec.ttlSecondsAfterFinished cannot change once the evaluation has started (status.startTime is set); only spec.suspend, spec.budget, spec.maxParallelModels, spec.stalledAfterSeconds and spec.artifacts.retainAfterDeletion may change. Create a new RepotEvaluation instead (a RepotSchedule creates one per run from a template you may edit)"
// +kubebuilder:validation:XValidation:rule="!has(oldSelf.status) || !has(oldSelf.status.startTime) || ((has(self.spec.selfConsistency) ? has(oldSelf.spec.selfConsistency) && self.spec.selfConsistency == oldSelf.spec.selfConsistency : !has(oldSelf.spec.selfConsistency)) && (has(self.spec.vex) ? has(oldSelf.spec.vex) && self.spec.vex == oldSelf.spec.vex : !has(oldSelf.spec.vex)))",message="spec.selfConsistency and spec.vex cannot change once the evaluation has started (status.startTime is set); create a new RepotEvaluation instead"
// +kubebuilder:validation:XValidation:rule="!has(oldSelf.status) || !has(oldSelf.status.startTime) || (has(self.spec.derail) ? has(oldSelf.spec.derail) && self.spec.derail == oldSelf.spec.derail : !has(oldSelf.spec.derail))",message="spec.derail cannot change once the evaluation has started (status.startTime is set); create a new RepotEvaluation instead"
type RepotEvaluation struct {
	metav1.TypeMeta `json:",inline"`
	// metadata is the standard object metadata. metadata.name is at most 30
	// characters and a DNS-1035 label: it starts with a lowercase letter
	// and holds only lowercase letters, digits and '-' (no dots), because
	// the servers' Service names are built from it.
	// +optional
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// spec is what to evaluate. It is immutable once the evaluation has
	// started (status.startTime is set), except spec.suspend, spec.budget,
	// spec.maxParallelModels, spec.stalledAfterSeconds and
	// spec.artifacts.retainAfterDeletion: the API server
	// rejects any other edit with a message, never ignores it. To change what
	// is evaluated, create a new RepotEvaluation, or manage the evaluation
	// with a RepotSchedule, whose template may change at any time and applies
	// to the next run.
	// +required
	Spec RepotEvaluationSpec `json:"spec"`

	// status is what the operator observed, recomputed on every pass from the
	// ledgers and the child objects.
	// +optional
	Status RepotEvaluationStatus `json:"status,omitempty"`
}

// RepotEvaluationList is a list of RepotEvaluation.
//
// +kubebuilder:object:root=true
type RepotEvaluationList struct {
	metav1.TypeMeta `json:",inline"`
	// metadata is the standard list metadata.
	// +optional
	metav1.ListMeta `json:"metadata,omitempty"`
	// items are the evaluations.
	// +required
	Items []RepotEvaluation `json:"items"`
}

func init() {
	SchemeBuilder.Register(&RepotEvaluation{}, &RepotEvaluationList{})
}
