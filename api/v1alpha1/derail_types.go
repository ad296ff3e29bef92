package v1alpha1

// DerailCondition names one condition of the Derail-550 recovery
// experiment.
//
// +kubebuilder:validation:Enum=no_feedback;error_only;state_feedback;state_plus_legal_actions;stateguard-rollback;repot-full;repot-no-prefix;repot-restart;vex-full;vex-no-prefix;vex-restart-from-initial
type DerailCondition string

// Derail-550 conditions: four prompted ones (one call answered with a JSON
// move list), the step-by-step agent, three RePoT ones (a whole RePoT run)
// and three VEX ones (a whole VEX run).
const (
	DerailNoFeedback    DerailCondition = "no_feedback"
	DerailErrorOnly     DerailCondition = "error_only"
	DerailStateFeedback DerailCondition = "state_feedback"
	DerailStateLegal    DerailCondition = "state_plus_legal_actions"
	DerailRePoTFull     DerailCondition = "repot-full"
	DerailRePoTNoPrefix DerailCondition = "repot-no-prefix"
	DerailRePoTRestart  DerailCondition = "repot-restart"
	// DerailStateGuard is the step-by-step agent: one action per call from
	// the legal moves, with per-state tabu and loop recovery.
	DerailStateGuard DerailCondition = "stateguard-rollback"
	// DerailVEXFull, DerailVEXNoPrefix and DerailVEXRestart run VEX from
	// the checkpoint with the verified prefix shown, from the checkpoint
	// with it hidden, and from the source problem's initial state.
	DerailVEXFull     DerailCondition = "vex-full"
	DerailVEXNoPrefix DerailCondition = "vex-no-prefix"
	DerailVEXRestart  DerailCondition = "vex-restart-from-initial"
)

// AllDerailConditions are the eleven conditions, in report order.
func AllDerailConditions() []DerailCondition {
	return []DerailCondition{DerailNoFeedback, DerailErrorOnly, DerailStateFeedback, DerailStateLegal, DerailStateGuard,
		DerailRePoTFull, DerailRePoTNoPrefix, DerailRePoTRestart, DerailVEXFull, DerailVEXNoPrefix, DerailVEXRestart}
}

// DefaultDerailConditions are the conditions run when spec.derail.conditions
// is unset: the paper's main-text seven, in report order. The step-by-step
// agent and the VEX conditions are named to be run.
func DefaultDerailConditions() []DerailCondition {
	return []DerailCondition{DerailNoFeedback, DerailErrorOnly, DerailStateFeedback, DerailStateLegal, DerailRePoTFull, DerailRePoTNoPrefix, DerailRePoTRestart}
}

// CheckpointStatement is how the checkpoint problem of repot-full and
// repot-no-prefix is stated.
//
// +kubebuilder:validation:Enum=paper;full
type CheckpointStatement string

// Checkpoint statements.
const (
	// StatementPaper is the paper's one sentence: continue this puzzle from
	// the checkpoint state, plus the goal; no state, rules or move format.
	StatementPaper CheckpointStatement = "paper"
	// StatementFull is the documented correction: the source statement's
	// rules and move format with the checkpoint state as the start.
	StatementFull CheckpointStatement = "full"
)

// DerailSpec configures a derail-550 evaluation.
type DerailSpec struct {
	// conditions are the Derail-550 conditions to run on every case; each
	// (model, case, condition) is one run. Default: the paper's main-text
	// seven (no_feedback, error_only, state_feedback,
	// state_plus_legal_actions, repot-full, repot-no-prefix,
	// repot-restart). Its appendix adds stateguard-rollback (a step-by-step
	// agent, up to 2 x max_steps calls per case) and vex-full,
	// vex-no-prefix, vex-restart-from-initial (VEX, up to spec.vex's call
	// budget per case). Immutable once started.
	// +optional
	// +listType=set
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=11
	Conditions []DerailCondition `json:"conditions,omitempty"`

	// checkpointStatement is how repot-full and repot-no-prefix state the
	// checkpoint problem: paper (the default, the paper's one sentence, which
	// shows the first call no state) or full (the source statement's rules
	// and move format with the checkpoint state as the start). Immutable
	// once started.
	// +optional
	// +kubebuilder:default=paper
	CheckpointStatement CheckpointStatement `json:"checkpointStatement,omitempty"`
}

// DerailConditionsOrDefault returns spec.derail.conditions or the default
// seven.
func (s *RepotEvaluationSpec) DerailConditionsOrDefault() []DerailCondition {
	if s.Derail == nil || len(s.Derail.Conditions) == 0 {
		return DefaultDerailConditions()
	}
	return s.Derail.Conditions
}

// CheckpointStatementOrDefault returns spec.derail.checkpointStatement or
// paper.
func (s *RepotEvaluationSpec) CheckpointStatementOrDefault() CheckpointStatement {
	if s.Derail == nil || s.Derail.CheckpointStatement == "" {
		return StatementPaper
	}
	return s.Derail.CheckpointStatement
}

// IsDerail reports whether the evaluation runs the Derail-550 experiment.
func (s *RepotEvaluationSpec) IsDerail() bool { return s.SuiteOrDefault() == SuiteDerail550 }

// DerailConditionResult is one Derail-550 condition's recovery figures for
// one model. Runs ended by an infrastructure error count in infraErrors
// only.
type DerailConditionResult struct {
	// condition is the condition's name.
	// +required
	Condition DerailCondition `json:"condition"`

	// recovered is the number of cases recovered.
	// +required
	Recovered int32 `json:"recovered"`

	// total is the number of cases with a result (infra errors excluded).
	// +required
	Total int32 `json:"total"`

	// rate is recovered/total with one decimal, e.g. "62.5%".
	// +optional
	// +kubebuilder:validation:MaxLength=16
	Rate string `json:"rate,omitempty"`

	// ratePermille is recovered/total in thousandths.
	// +optional
	RatePermille int32 `json:"ratePermille,omitempty"`

	// interval is the 95% Wilson interval, e.g. "[53.6%, 70.6%]".
	// +optional
	// +kubebuilder:validation:MaxLength=32
	Interval string `json:"interval,omitempty"`

	// promptTokensPerRun and completionTokensPerRun are mean tokens per run.
	// +optional
	PromptTokensPerRun int64 `json:"promptTokensPerRun,omitempty"`
	// +optional
	CompletionTokensPerRun int64 `json:"completionTokensPerRun,omitempty"`

	// stopReasons counts the runs by stop reason.
	// +optional
	// +listType=map
	// +listMapKey=reason
	// +kubebuilder:validation:MaxItems=16
	StopReasons []StopReasonCount `json:"stopReasons,omitempty"`

	// byEnvironment and byInjectionType split the rate.
	// +optional
	// +listType=map
	// +listMapKey=name
	// +kubebuilder:validation:MaxItems=8
	ByEnvironment []RateSplit `json:"byEnvironment,omitempty"`
	// +optional
	// +listType=map
	// +listMapKey=name
	// +kubebuilder:validation:MaxItems=4
	ByInjectionType []RateSplit `json:"byInjectionType,omitempty"`

	// vsErrorOnly is the paired McNemar comparison with error_only on the
	// cases both finished; absent for error_only itself or when it was not
	// run.
	// +optional
	VsErrorOnly *PairedComparison `json:"vsErrorOnly,omitempty"`

	// infraErrors is the number of runs ended by an infrastructure error.
	// +optional
	InfraErrors int32 `json:"infraErrors,omitempty"`
}

// StopReasonCount is how many runs stopped for one reason.
type StopReasonCount struct {
	// reason is the stop reason, e.g. goal, invalid_move, no_plan.
	// +required
	// +kubebuilder:validation:MaxLength=64
	Reason string `json:"reason"`

	// count is the number of runs.
	// +required
	Count int32 `json:"count"`
}

// RateSplit is the recovery rate of one environment or injection type.
type RateSplit struct {
	// name is the environment or injection type.
	// +required
	// +kubebuilder:validation:MaxLength=64
	Name string `json:"name"`

	// recovered and total count the cases.
	// +required
	Recovered int32 `json:"recovered"`
	// +required
	Total int32 `json:"total"`

	// rate is recovered/total, e.g. "40.0%".
	// +optional
	// +kubebuilder:validation:MaxLength=16
	Rate string `json:"rate,omitempty"`
}

// PairedComparison compares a condition with error_only case by case.
type PairedComparison struct {
	// cases is the number of cases both finished.
	// +required
	Cases int32 `json:"cases"`

	// diffPoints is the condition's rate minus error_only's, in points,
	// e.g. "+37.1".
	// +optional
	// +kubebuilder:validation:MaxLength=16
	DiffPoints string `json:"diffPoints,omitempty"`

	// conditionOnly and errorOnlyOnly are the discordant pairs: cases only
	// the condition recovered, and only error_only did.
	// +optional
	ConditionOnly int32 `json:"conditionOnly,omitempty"`
	// +optional
	ErrorOnlyOnly int32 `json:"errorOnlyOnly,omitempty"`

	// pValue is McNemar's two-sided p-value, e.g. "0.0313" or "<0.0001".
	// +optional
	// +kubebuilder:validation:MaxLength=16
	PValue string `json:"pValue,omitempty"`
}
