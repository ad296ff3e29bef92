package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// RepotSchedule runs a RepotEvaluation on a cron schedule, keeps a short
// history of the runs, and compares every finished run with the previous
// successful one (paired McNemar test per model and method) to flag
// regressions. It is modelled on the batch/v1 CronJob.
//
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:scope=Namespaced,shortName=rsched,categories=repot
// +kubebuilder:printcolumn:name="Schedule",type=string,JSONPath=`.spec.schedule`,description="Cron schedule"
// +kubebuilder:printcolumn:name="Suspend",type=boolean,JSONPath=`.spec.suspend`,priority=1
// +kubebuilder:printcolumn:name="Active",type=integer,JSONPath=`.status.activeCount`,description="Runs not finished yet"
// +kubebuilder:printcolumn:name="Last Run",type=date,JSONPath=`.status.lastScheduleTime`,description="When the last run was scheduled"
// +kubebuilder:printcolumn:name="Last Result",type=string,JSONPath=`.status.lastResult`,description="Complete or Failed: the state of the last finished run"
// +kubebuilder:printcolumn:name="Regressed",type=string,JSONPath=`.status.conditions[?(@.type=="Regressed")].status`,description="True when the last finished run is significantly worse than the run before it"
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
// +kubebuilder:validation:XValidation:rule="size(self.metadata.name) <= 21",message="metadata.name of a RepotSchedule must be at most 21 characters: each run is a RepotEvaluation named <schedule>-<8-digit minute>, and evaluation names are at most 30 characters"
// +kubebuilder:validation:XValidation:rule="self.metadata.name.matches('^[a-z]([-a-z0-9]*[a-z0-9])?$')",message="metadata.name of a RepotSchedule must start with a lowercase letter and hold only lowercase letters, digits and '-' (no dots), ending with a letter or digit: its runs are RepotEvaluations named <schedule>-<8-digit minute>, whose servers' Service names (DNS-1035 labels) are built from it"
type RepotSchedule struct {
	metav1.TypeMeta `json:",inline"`
	// metadata is the standard object metadata. metadata.name is at most 21
	// characters and a DNS-1035 label (a lowercase letter first; lowercase
	// letters, digits and '-' only).
	// +optional
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// spec is when and what to run. Every field may change at any time; a
	// change applies from the next run on and never alters a run that
	// already started.
	// +required
	Spec RepotScheduleSpec `json:"spec"`

	// status is what the operator observed: the last schedule and success
	// times, the active runs and a short history with the comparisons. It
	// defaults to observedGeneration 0, so that kstatus (Flux) sees a new
	// schedule as in progress until the operator observed it.
	// +optional
	// +kubebuilder:default={observedGeneration: 0}
	Status RepotScheduleStatus `json:"status,omitempty"`
}

// RepotScheduleList is a list of RepotSchedule.
//
// +kubebuilder:object:root=true
type RepotScheduleList struct {
	metav1.TypeMeta `json:",inline"`
	// metadata is the standard list metadata.
	// +optional
	metav1.ListMeta `json:"metadata,omitempty"`
	// items are the schedules.
	// +required
	Items []RepotSchedule `json:"items"`
}

func init() {
	SchemeBuilder.Register(&RepotSchedule{}, &RepotScheduleList{})
}

// ConcurrencyPolicy says what a schedule does when a run is due while an
// earlier run is still active.
//
// +kubebuilder:validation:Enum=Allow;Forbid;Replace
type ConcurrencyPolicy string

// Concurrency policies.
const (
	// ConcurrencyAllow starts the new run beside the active ones.
	ConcurrencyAllow ConcurrencyPolicy = "Allow"
	// ConcurrencyForbid skips the due run while one is active.
	ConcurrencyForbid ConcurrencyPolicy = "Forbid"
	// ConcurrencyReplace deletes the active runs and starts the new one.
	ConcurrencyReplace ConcurrencyPolicy = "Replace"
)

// cronField are the CEL regular expressions of the five cron fields: a list
// of *, ?, a value or a range, each with an optional /step. Names of months
// and days are accepted in any case, as robfig/cron does.
//
// minute 0-59, hour 0-23, day of month 1-31, month 1-12 or JAN-DEC, day of
// week 0-6 or SUN-SAT (7 is Sunday too).

// RepotScheduleSpec is when to run, what to run and how many runs to keep.
//
// +kubebuilder:validation:XValidation:rule="!has(self.evaluationTemplate.spec.ttlSecondsAfterFinished)",message="spec.evaluationTemplate.spec.ttlSecondsAfterFinished must be unset: a schedule deletes its runs itself (spec.successfulHistoryLimit and spec.failedHistoryLimit), and needs the last successful run as the baseline of the next comparison"
type RepotScheduleSpec struct {
	// schedule is a standard five-field cron expression (minute hour
	// day-of-month month day-of-week), e.g. "*/5 * * * *" or "0 3 * * MON",
	// or one of @yearly, @monthly, @weekly, @daily, @hourly. It is read in
	// spec.timeZone. Required; may change at any time (applies from the next
	// run).
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=128
	// +kubebuilder:validation:XValidation:rule="!self.contains('TZ=')",message="spec.schedule must not carry TZ= or CRON_TZ=: set spec.timeZone instead"
	// +kubebuilder:validation:XValidation:rule="self in ['@yearly', '@annually', '@monthly', '@weekly', '@daily', '@midnight', '@hourly'] || self.matches('^ *([*?]|([0-5]?[0-9])(-([0-5]?[0-9]))?)(/[0-9]{1,2})?(,([*?]|([0-5]?[0-9])(-([0-5]?[0-9]))?)(/[0-9]{1,2})?)* +([*?]|([01]?[0-9]|2[0-3])(-([01]?[0-9]|2[0-3]))?)(/[0-9]{1,2})?(,([*?]|([01]?[0-9]|2[0-3])(-([01]?[0-9]|2[0-3]))?)(/[0-9]{1,2})?)* +([*?]|(0?[1-9]|[12][0-9]|3[01])(-(0?[1-9]|[12][0-9]|3[01]))?)(/[0-9]{1,2})?(,([*?]|(0?[1-9]|[12][0-9]|3[01])(-(0?[1-9]|[12][0-9]|3[01]))?)(/[0-9]{1,2})?)* +([*?]|(0?[1-9]|1[0-2]|(?i:jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec))(-(0?[1-9]|1[0-2]|(?i:jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)))?)(/[0-9]{1,2})?(,([*?]|(0?[1-9]|1[0-2]|(?i:jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec))(-(0?[1-9]|1[0-2]|(?i:jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)))?)(/[0-9]{1,2})?)* +([*?]|([0-7]|(?i:sun|mon|tue|wed|thu|fri|sat))(-([0-7]|(?i:sun|mon|tue|wed|thu|fri|sat)))?)(/[0-9]{1,2})?(,([*?]|([0-7]|(?i:sun|mon|tue|wed|thu|fri|sat))(-([0-7]|(?i:sun|mon|tue|wed|thu|fri|sat)))?)(/[0-9]{1,2})?)* *$')",message="spec.schedule must be a five-field cron expression: minute (0-59) hour (0-23) day-of-month (1-31) month (1-12 or JAN-DEC) day-of-week (0-6 or SUN-SAT), each *, a value, a range a-b or a list, with an optional /step, e.g. '*/5 * * * *'; or one of @yearly, @monthly, @weekly, @daily, @hourly"
	Schedule string `json:"schedule"`

	// timeZone is the IANA time zone the schedule is read in, e.g.
	// "Europe/Paris". Default "Etc/UTC". "Local" is not accepted: it would
	// depend on the operator's machine.
	// +optional
	// +kubebuilder:default="Etc/UTC"
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=64
	// +kubebuilder:validation:XValidation:rule="self != 'Local'",message="spec.timeZone must name an IANA time zone such as Etc/UTC or Europe/Paris, not Local (the operator's machine)"
	// +kubebuilder:validation:XValidation:rule="self.matches('^[A-Za-z][A-Za-z0-9_+-]*(/[A-Za-z0-9_+-]+)*$') && timestamp('2000-01-01T00:00:00Z').getHours(self) >= 0",message="spec.timeZone must be a time zone of the IANA database, such as Etc/UTC, America/New_York or Europe/Paris"
	TimeZone *string `json:"timeZone,omitempty"`

	// evaluationTemplate is the RepotEvaluation every run creates: its
	// labels, annotations and spec. Editing it changes the next run only.
	// Its spec.ttlSecondsAfterFinished must be unset (the history limits
	// delete old runs).
	// +required
	EvaluationTemplate EvaluationTemplate `json:"evaluationTemplate"`

	// concurrencyPolicy says what happens when a run is due while an earlier
	// run is still active: Allow starts it beside the others, Forbid (the
	// default, since runs share GPUs) skips it, Replace deletes the active
	// runs and starts it.
	// +optional
	// +kubebuilder:default=Forbid
	ConcurrencyPolicy ConcurrencyPolicy `json:"concurrencyPolicy,omitempty"`

	// startingDeadlineSeconds is how late a run may still start after its
	// scheduled time (for example after the operator was down). A run missed
	// by more is skipped and counted in status.missedRuns. Unset means no
	// deadline: after a restart the most recent missed run starts. 1 to
	// 31536000.
	// +optional
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=31536000
	StartingDeadlineSeconds *int64 `json:"startingDeadlineSeconds,omitempty"`

	// suspend, while true, starts no new run (active runs go on). On resume
	// the most recent time missed while suspended starts, unless it is past
	// startingDeadlineSeconds, as with CronJob. Default false.
	// +optional
	Suspend *bool `json:"suspend,omitempty"`

	// successfulHistoryLimit is how many completed runs are kept; older ones
	// are deleted with everything they own. 1 to 100, default 3: the last
	// completed run is the baseline of the next comparison.
	// +optional
	// +kubebuilder:default=3
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=100
	SuccessfulHistoryLimit *int32 `json:"successfulHistoryLimit,omitempty"`

	// failedHistoryLimit is how many failed runs are kept, and as many runs
	// stopped by their spec.budget. 0 to 100, default 1.
	// +optional
	// +kubebuilder:default=1
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=100
	FailedHistoryLimit *int32 `json:"failedHistoryLimit,omitempty"`

	// regressionPValue is the significance level of the paired McNemar test
	// that compares a finished run with the previous successful run, per
	// model and method: a drop in solved problems with a p-value below it
	// sets condition Regressed. A decimal string from "0.0001" to "0.5",
	// default "0.05".
	// +optional
	// +kubebuilder:default="0.05"
	// +kubebuilder:validation:MaxLength=6
	// +kubebuilder:validation:XValidation:rule="self.matches('^0[.][0-9]{1,4}$') && self != '0.0' && self != '0.00' && self != '0.000' && self != '0.0000' && (self.matches('^0[.][0-4]') || self.matches('^0[.]50*$'))",message="spec.regressionPValue must be a decimal between 0.0001 and 0.5 with at most 4 decimals, e.g. \"0.05\""
	RegressionPValue string `json:"regressionPValue,omitempty"`
}

// EvaluationTemplate is the RepotEvaluation a schedule creates for each run.
type EvaluationTemplate struct {
	// labels are added to each run's metadata (besides
	// repot.dev/schedule=<schedule>). At most 32.
	// +optional
	// +listType=map
	// +listMapKey=key
	// +kubebuilder:validation:MaxItems=32
	Labels []MetadataEntry `json:"labels,omitempty"`

	// annotations are added to each run's metadata. At most 32.
	// +optional
	// +listType=map
	// +listMapKey=key
	// +kubebuilder:validation:MaxItems=32
	Annotations []MetadataEntry `json:"annotations,omitempty"`

	// spec is the spec of each run, validated as a RepotEvaluation's.
	// +required
	Spec RepotEvaluationSpec `json:"spec"`
}

// MetadataEntry is one label or annotation.
type MetadataEntry struct {
	// key is the label or annotation key, e.g. "team" or
	// "example.com/owner".
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:Pattern=`^([a-z0-9]([-a-z0-9.]*[a-z0-9])?/)?[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?$`
	Key string `json:"key"`

	// value is the value. For a label at most 63 characters.
	// +optional
	// +kubebuilder:validation:MaxLength=4096
	Value string `json:"value,omitempty"`
}

// Condition types of a RepotSchedule.
const (
	// ConditionRegressed is True when the last finished run solved
	// significantly fewer problems than the previous successful run for
	// some model and method.
	ConditionRegressed = "Regressed"
)

// Reasons of a RepotSchedule's conditions.
const (
	// ReasonScheduled: the schedule is valid and runs are created on time
	// (Ready).
	ReasonScheduled = "Scheduled"
	// ReasonInvalidSchedule: spec.schedule or spec.timeZone cannot be parsed
	// (Ready false, Stalled).
	ReasonInvalidSchedule = "InvalidSchedule"
	// ReasonRunRejected: the API server rejected the run built from the
	// template (Stalled).
	ReasonRunRejected = "RunRejected"
	// ReasonSignificantDrop: some model and method solved significantly
	// fewer problems than in the previous successful run (Regressed).
	ReasonSignificantDrop = "SignificantDrop"
	// ReasonNoSignificantDrop: the last comparison found no significant
	// drop (Regressed false).
	ReasonNoSignificantDrop = "NoSignificantDrop"
	// ReasonNoBaseline: no finished run could be compared yet (Regressed
	// false).
	ReasonNoBaseline = "NoBaseline"
)

// RunResult is how a scheduled run ended. BudgetExhausted: spec.budget
// stopped it with partial results (it is not compared; raising its budget
// resumes it, but the schedule has recorded it as ended).
//
// +kubebuilder:validation:Enum=Active;Complete;Failed;BudgetExhausted
type RunResult string

// Run results.
const (
	RunActive          RunResult = "Active"
	RunComplete        RunResult = "Complete"
	RunFailed          RunResult = "Failed"
	RunBudgetExhausted RunResult = "BudgetExhausted"
)

// RepotScheduleStatus is what the operator observed about a schedule. It
// holds no floats: rates are strings and per-mille integers.
type RepotScheduleStatus struct {
	// observedGeneration is the metadata.generation this status was computed
	// for.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`

	// conditions are Ready, Regressed and the kstatus conditions Reconciling
	// and Stalled.
	// +optional
	// +listType=map
	// +listMapKey=type
	// +patchStrategy=merge
	// +patchMergeKey=type
	// +kubebuilder:validation:MaxItems=8
	Conditions []metav1.Condition `json:"conditions,omitempty" patchStrategy:"merge" patchMergeKey:"type"`

	// lastScheduleTime is the scheduled time of the last run created (or
	// skipped under concurrencyPolicy Forbid).
	// +optional
	LastScheduleTime *metav1.Time `json:"lastScheduleTime,omitempty"`

	// lastSuccessfulTime is when the last successful run completed.
	// +optional
	LastSuccessfulTime *metav1.Time `json:"lastSuccessfulTime,omitempty"`

	// nextScheduleTime is when the next run is due (unset while suspended or
	// when the schedule is invalid).
	// +optional
	NextScheduleTime *metav1.Time `json:"nextScheduleTime,omitempty"`

	// lastResult is Complete or Failed: how the most recent finished run
	// ended.
	// +optional
	LastResult RunResult `json:"lastResult,omitempty"`

	// activeCount is the number of active runs.
	// +optional
	ActiveCount int32 `json:"activeCount,omitempty"`

	// active are the runs that have not finished, oldest first.
	// +optional
	// +listType=map
	// +listMapKey=name
	// +kubebuilder:validation:MaxItems=64
	Active []ScheduledRunRef `json:"active,omitempty"`

	// missedRuns counts due runs that were not started: past
	// startingDeadlineSeconds, or skipped under concurrencyPolicy Forbid.
	// +optional
	MissedRuns int32 `json:"missedRuns,omitempty"`

	// history holds the last finished runs, newest first, at most 10: per
	// run its time, result, the figures per model and method, and the
	// comparison with the previous successful run.
	// +optional
	// +listType=map
	// +listMapKey=name
	// +kubebuilder:validation:MaxItems=10
	History []ScheduledRun `json:"history,omitempty"`
}

// ScheduledRunRef names one run.
type ScheduledRunRef struct {
	// name is the RepotEvaluation's name.
	// +required
	// +kubebuilder:validation:MaxLength=63
	Name string `json:"name"`

	// scheduledTime is the time the run was scheduled for.
	// +required
	ScheduledTime metav1.Time `json:"scheduledTime"`
}

// ScheduledRun is one finished run in the history.
type ScheduledRun struct {
	// name is the RepotEvaluation's name (it may have been deleted since).
	// +required
	// +kubebuilder:validation:MaxLength=63
	Name string `json:"name"`

	// scheduledTime is the time the run was scheduled for.
	// +required
	ScheduledTime metav1.Time `json:"scheduledTime"`

	// completionTime is when the run ended.
	// +optional
	CompletionTime *metav1.Time `json:"completionTime,omitempty"`

	// result is Complete or Failed.
	// +required
	Result RunResult `json:"result"`

	// models are the run's figures per model and method.
	// +optional
	// +listType=map
	// +listMapKey=name
	// +kubebuilder:validation:MaxItems=16
	Models []ScheduledModelResult `json:"models,omitempty"`

	// comparedWith names the previous successful run this one was compared
	// with; empty when there was none (or this run failed).
	// +optional
	// +kubebuilder:validation:MaxLength=63
	ComparedWith string `json:"comparedWith,omitempty"`

	// comparisons are the paired comparisons with comparedWith, per model
	// and method run by both.
	// +optional
	// +kubebuilder:validation:MaxItems=96
	Comparisons []RunComparison `json:"comparisons,omitempty"`

	// regressed is true when some comparison is a significant drop.
	// +optional
	Regressed bool `json:"regressed,omitempty"`

	// differences says in what, other than time, this run differed from
	// comparedWith: images, server arguments, revision, what the servers
	// reported, sampling, the runner's repot build, the problem set or the
	// sandbox mode ("model m: sampling temperature: 0 -> 0.7"). Empty when
	// the runs differ in nothing recorded but time.
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=32
	// +kubebuilder:validation:items:MaxLength=512
	Differences []string `json:"differences,omitempty"`
}

// ScheduledModelResult is one model's figures in one run.
type ScheduledModelResult struct {
	// name is the model's name.
	// +required
	// +kubebuilder:validation:MaxLength=20
	Name string `json:"name"`

	// methods are the figures per method.
	// +optional
	// +listType=map
	// +listMapKey=method
	// +kubebuilder:validation:MaxItems=11
	Methods []ScheduledMethodResult `json:"methods,omitempty"`
}

// ScheduledMethodResult is one method's figures in one run.
type ScheduledMethodResult struct {
	// method is the method.
	// +required
	Method Method `json:"method"`

	// rate is the solve rate, e.g. "62.5%".
	// +optional
	// +kubebuilder:validation:MaxLength=16
	Rate string `json:"rate,omitempty"`

	// ratePermille is the solve rate in thousandths.
	// +optional
	RatePermille int32 `json:"ratePermille,omitempty"`

	// interval is the 95% Wilson interval, e.g. "[53.6%, 70.6%]".
	// +optional
	// +kubebuilder:validation:MaxLength=32
	Interval string `json:"interval,omitempty"`

	// costVsPot is the token cost relative to pot, e.g. "1.52x".
	// +optional
	// +kubebuilder:validation:MaxLength=16
	CostVsPot string `json:"costVsPot,omitempty"`
}

// RunComparison is the paired comparison of one model and method between a
// run and the previous successful run, on the problems both finished.
type RunComparison struct {
	// model is the model's name.
	// +required
	// +kubebuilder:validation:MaxLength=20
	Model string `json:"model"`

	// method is the method.
	// +required
	Method Method `json:"method"`

	// McNemarComparison holds the counts, the change and the p-value; its
	// baseline is the previous run.
	McNemarComparison `json:",inline"`

	// significantDrop is true when the run solved fewer problems and the
	// p-value is below spec.regressionPValue.
	// +optional
	SignificantDrop bool `json:"significantDrop,omitempty"`
}

// McNemarComparison compares two sets of outcomes on the same problems with
// McNemar's test.
type McNemarComparison struct {
	// problems is the number of problems both sides finished.
	// +required
	Problems int32 `json:"problems"`

	// solved is how many of them this side solved.
	// +required
	Solved int32 `json:"solved"`

	// baselineSolved is how many of them the baseline solved.
	// +required
	BaselineSolved int32 `json:"baselineSolved"`

	// onlySolved counts problems only this side solved, baselineOnlySolved
	// those only the baseline solved (McNemar's discordant pairs).
	// +required
	OnlySolved int32 `json:"onlySolved"`

	// baselineOnlySolved counts problems only the baseline solved.
	// +required
	BaselineOnlySolved int32 `json:"baselineOnlySolved"`

	// diffPermille is (solved - baselineSolved) / problems in thousandths
	// (tenths of a point).
	// +required
	DiffPermille int32 `json:"diffPermille"`

	// diffPoints is diffPermille as signed points, e.g. "+5.8" or "-12.5".
	// +required
	// +kubebuilder:validation:MaxLength=16
	DiffPoints string `json:"diffPoints"`

	// test is mcnemar-exact or mcnemar-chi2.
	// +required
	// +kubebuilder:validation:MaxLength=16
	Test string `json:"test"`

	// pValue is the two-sided p-value with four decimals, e.g. "0.0313" or
	// "<0.0001".
	// +required
	// +kubebuilder:validation:MaxLength=16
	PValue string `json:"pValue"`
}

// MethodComparison is the paired comparison of two methods of one
// evaluation's model.
type MethodComparison struct {
	// method is the compared method.
	// +required
	Method Method `json:"method"`

	// baseline is the method it is compared with.
	// +required
	Baseline Method `json:"baseline"`

	// McNemarComparison holds the counts, the difference and the p-value.
	McNemarComparison `json:",inline"`
}
