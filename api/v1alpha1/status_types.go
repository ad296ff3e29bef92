package v1alpha1

import metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

// The status lists other than conditions are atomic (+listType=atomic): only
// the operator writes them, always whole, so per-item field ownership would
// buy nothing, and it cost more than the status itself (12 of an
// evaluation's 19 KiB were managedFields, recomputed on every status write).

// RepotEvaluationStatus is what the operator observed. It is recomputed on
// every pass from the ledgers and the child objects, never incremented. It
// holds no floats: counts are integers, rates are strings such as "62.5%" or
// integers in thousandths (per-mille).
type RepotEvaluationStatus struct {
	// observedGeneration is the metadata.generation this status was computed
	// for.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`

	// conditions are ServersReady, Running, Complete and Failed, the
	// kstatus conditions Ready, Reconciling and Stalled, and, with an S3
	// artifact store, ArtifactStoreUnavailable and, while the deletion of
	// its stored traces fails, ArtifactsCleanupFailed.
	// +optional
	// +listType=map
	// +listMapKey=type
	// +patchStrategy=merge
	// +patchMergeKey=type
	// +kubebuilder:validation:MaxItems=16
	Conditions []metav1.Condition `json:"conditions,omitempty" patchStrategy:"merge" patchMergeKey:"type"`

	// startTime is when the evaluation started: when its first child that
	// costs something, a server Deployment or a runner Job, was created. The
	// runner's ServiceAccount, Role, RoleBinding and NetworkPolicies, the
	// ledgers and Kueue Workloads do not start it: a queued evaluation that
	// Kueue has not admitted has not started, and spec.activeDeadlineSeconds
	// does not count its time in the queue. Once set, the spec is immutable
	// except spec.suspend, spec.budget, spec.maxParallelModels and
	// spec.stalledAfterSeconds.
	// +optional
	StartTime *metav1.Time `json:"startTime,omitempty"`

	// deadlineStartTime is when spec.activeDeadlineSeconds last began to
	// count, as a batch/v1 Job's active deadline does: the start, or the
	// last time the evaluation went on after a pause. A pause is time
	// suspended (spec.suspend) or, for a queued evaluation, time in which
	// Kueue admits none of its unfinished models (before the first
	// admission, or after an eviction or preemption). Unset while paused;
	// the deadline is counted afresh from the end of each pause.
	// +optional
	DeadlineStartTime *metav1.Time `json:"deadlineStartTime,omitempty"`

	// completionTime is when the evaluation completed or failed.
	// +optional
	CompletionTime *metav1.Time `json:"completionTime,omitempty"`

	// progress counts finished runs over all models.
	// +optional
	Progress *Progress `json:"progress,omitempty"`

	// summary holds the short strings shown by kubectl get.
	// +optional
	Summary *Summary `json:"summary,omitempty"`

	// models is the status of each model, in the order of spec.models.
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=16
	Models []ModelStatus `json:"models,omitempty"`

	// scaling is the capability-scaling view across (model, environment)
	// cells; set when at least two models have results.
	// +optional
	Scaling *ScalingStatus `json:"scaling,omitempty"`

	// sandboxMode is the confinement the runners' model programs ran under,
	// as the runners report it, for example "none, seccomp, landlock ABI 6"
	// (namespaces, the seccomp filter, Landlock; see docs/sandbox.md).
	// Distinct modes of different runners are joined by "; ". Empty until a
	// runner has started. Set by the operator.
	// +optional
	// +kubebuilder:validation:MaxLength=1024
	SandboxMode string `json:"sandboxMode,omitempty"`

	// problemsHash is "sha256:<hex>" of the problems ConfigMap's key as it
	// was when the evaluation started (spec.problems.configMap only). If the
	// ConfigMap changes afterwards the evaluation fails with reason
	// ProblemsChanged instead of mixing two problem sets.
	// +optional
	// +kubebuilder:validation:MaxLength=80
	ProblemsHash string `json:"problemsHash,omitempty"`

	// budget is what the evaluation spent against spec.budget, and whether
	// the budget stopped it; set while spec.budget is.
	// +optional
	Budget *BudgetStatus `json:"budget,omitempty"`

	// artifacts is the upload of the traces to the S3 store; set while an
	// S3 store is in use.
	// +optional
	Artifacts *ArtifactsStatus `json:"artifacts,omitempty"`
}

// ArtifactsState is Uploading, Complete or Partial.
//
// +kubebuilder:validation:Enum=Uploading;Complete;Partial
type ArtifactsState string

// Artifact upload states.
const (
	// ArtifactsUploading: runners are uploading traces.
	ArtifactsUploading ArtifactsState = "Uploading"
	// ArtifactsComplete: every shard finished and every trace is stored.
	ArtifactsComplete ArtifactsState = "Complete"
	// ArtifactsPartial: a shard ended with traces it could not upload.
	ArtifactsPartial ArtifactsState = "Partial"
)

// ArtifactsStatus is what the runners stored.
type ArtifactsStatus struct {
	// url is where the evaluation's objects are, as
	// s3://BUCKET/PREFIX/NAMESPACE/NAME/UID/.
	// +required
	// +kubebuilder:validation:MaxLength=1024
	URL string `json:"url"`

	// endpoint is the store's host[:port], so that readers such as `repot
	// results export --evaluation` find the store also when it is the
	// operator's default.
	// +required
	// +kubebuilder:validation:MaxLength=253
	Endpoint string `json:"endpoint"`

	// region is the bucket's region ("" when the store is asked).
	// +optional
	// +kubebuilder:validation:MaxLength=64
	Region string `json:"region,omitempty"`

	// insecure is true when the store is reached over plain HTTP.
	// +optional
	Insecure bool `json:"insecure,omitempty"`

	// state is Uploading, Complete or Partial.
	// +required
	State ArtifactsState `json:"state"`

	// objects counts the stored trace segments.
	// +optional
	Objects int32 `json:"objects,omitempty"`

	// bytes is their total size.
	// +optional
	Bytes int64 `json:"bytes,omitempty"`

	// lostBytes counts traces the runners gave up on (the store stayed
	// unreachable until their pod ended).
	// +optional
	LostBytes int64 `json:"lostBytes,omitempty"`

	// pendingBytes are written by the runners and not yet stored (the
	// store is failing, or the next upload is due).
	// +optional
	PendingBytes int64 `json:"pendingBytes,omitempty"`

	// lastError is the latest upload failure a runner reported, while
	// uploads fail.
	// +optional
	// +kubebuilder:validation:MaxLength=1024
	LastError string `json:"lastError,omitempty"`
}

// Progress counts runs; a run is one (model, problem, method).
type Progress struct {
	// runsDone is the number of distinct runs recorded in the ledgers,
	// including runs ended by an infrastructure error.
	// +required
	RunsDone int32 `json:"runsDone"`

	// runsTotal is models x problems x methods.
	// +required
	RunsTotal int32 `json:"runsTotal"`

	// text is "runsDone/runsTotal", e.g. "123/480".
	// +optional
	// +kubebuilder:validation:MaxLength=32
	Text string `json:"text,omitempty"`
}

// EvaluationState is the one-word state shown by kubectl get -o wide.
//
// +kubebuilder:validation:Enum=Pending;Running;Suspended;Complete;Failed;Stalled;BudgetExhausted
type EvaluationState string

// Evaluation states.
const (
	StatePending   EvaluationState = "Pending"
	StateRunning   EvaluationState = "Running"
	StateSuspended EvaluationState = "Suspended"
	StateComplete  EvaluationState = "Complete"
	StateFailed    EvaluationState = "Failed"
	StateStalled   EvaluationState = "Stalled"
)

// Summary holds flat strings for the printer columns.
type Summary struct {
	// state is Pending, Running, Suspended, Complete, Failed, Stalled or
	// BudgetExhausted (spec.budget stopped every model not done).
	// +optional
	State EvaluationState `json:"state,omitempty"`

	// servers is "ready/models", e.g. "2/2"; endpoint models count as ready.
	// +optional
	// +kubebuilder:validation:MaxLength=16
	Servers string `json:"servers,omitempty"`

	// pot is the pot success rate, e.g. "41.7%"; with several models, one
	// rate per model in spec order separated by spaces. Empty when pot is
	// not run or has no results yet.
	// +optional
	// +kubebuilder:validation:MaxLength=256
	PoT string `json:"pot,omitempty"`

	// repot is the repot success rate, formatted like pot.
	// +optional
	// +kubebuilder:validation:MaxLength=256
	RePoT string `json:"repot,omitempty"`

	// adaptive is the repot-adaptive success rate, formatted like pot.
	// +optional
	// +kubebuilder:validation:MaxLength=256
	Adaptive string `json:"adaptive,omitempty"`

	// derail is the Derail-550 recovery rate per condition, abbreviated
	// (nf no_feedback, eo error_only, sf state_feedback, sla
	// state_plus_legal_actions, full repot-full, nopfx repot-no-prefix, rst
	// repot-restart), e.g. "eo 3.1% sla 72.0%"; models in spec order
	// separated by " | ". Empty for other suites.
	// +optional
	// +kubebuilder:validation:MaxLength=1024
	Derail string `json:"derail,omitempty"`
}

// ServerState is the state of a model's server.
//
// +kubebuilder:validation:Enum=Pending;Starting;Ready;Stalled;Stopped;External
type ServerState string

// Server states.
const (
	// ServerPending: the server's objects are not created yet (or suspended
	// before creation).
	ServerPending ServerState = "Pending"
	// ServerStarting: created, no completion answered yet.
	ServerStarting ServerState = "Starting"
	// ServerReady: the model answered a real completion.
	ServerReady ServerState = "Ready"
	// ServerStalled: the server cannot start; the model's reason says why.
	ServerStalled ServerState = "Stalled"
	// ServerStopped: scaled to zero while suspended, or deleted after the
	// evaluation ended.
	ServerStopped ServerState = "Stopped"
	// ServerExternal: an endpoint model; nothing is started.
	ServerExternal ServerState = "External"
)

// ModelStatus is the status of one model.
type ModelStatus struct {
	// name is the model's name from spec.models.
	// +required
	// +kubebuilder:validation:MaxLength=20
	Name string `json:"name"`

	// server is the state of the model's server.
	// +optional
	Server ServerStatus `json:"server,omitempty"`

	// runsDone is the number of this model's distinct runs in its ledgers
	// that finished (a run that ended in an infrastructure error is not
	// finished: it runs again, see infraRetries).
	// +optional
	RunsDone int32 `json:"runsDone,omitempty"`

	// infraErrorRuns is the number of this model's distinct runs whose last
	// record is an infrastructure error (the server did not answer).
	// +optional
	InfraErrorRuns int32 `json:"infraErrorRuns,omitempty"`

	// infraRetries is how many times the model's runner Job was run again
	// for its runs that ended in an infrastructure error, at most 2; the
	// model is Done when none is left or the retries are spent. The
	// operator counts them here, in the status, which the runner cannot
	// write, and carries the count from one status to the next.
	// +optional
	InfraRetries int32 `json:"infraRetries,omitempty"`

	// infraRetryJobUID is the UID of the completed runner Job the last of
	// infraRetries was counted for: the operator deletes that Job (for a
	// new one to run the retry) once this status records it, so that each
	// retry is counted once.
	// +optional
	// +kubebuilder:validation:MaxLength=64
	InfraRetryJobUID string `json:"infraRetryJobUID,omitempty"`

	// runsTotal is problems x methods for this model.
	// +optional
	RunsTotal int32 `json:"runsTotal,omitempty"`

	// methods are the results per method, in the order of spec.methods.
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=11
	Methods []MethodResult `json:"methods,omitempty"`

	// failedPrefixPermille is the mean verified prefix fraction of failed
	// first plans, in thousandths.
	// +optional
	FailedPrefixPermille *int32 `json:"failedPrefixPermille,omitempty"`

	// repotMinusPotRetryPoints is repot's success rate minus pot-retry's, in
	// percentage points, e.g. "+3.3" or "-0.8"; empty unless both ran.
	// +optional
	// +kubebuilder:validation:MaxLength=16
	RepotMinusPotRetryPoints string `json:"repotMinusPotRetryPoints,omitempty"`

	// phase is Queued (waiting for a slot of spec.maxParallelModels),
	// Starting (its server is starting), Running (its runners run) or Done
	// (its runs are recorded and its server deleted; the results stay).
	// +optional
	// +kubebuilder:validation:Enum=Queued;Starting;Running;Done
	Phase ModelPhase `json:"phase,omitempty"`

	// startTime is when the model left Queued (its children were created).
	// +optional
	StartTime *metav1.Time `json:"startTime,omitempty"`

	// runningTime is when its runner Job first ran.
	// +optional
	RunningTime *metav1.Time `json:"runningTime,omitempty"`

	// completionTime is when its runs were all recorded and its server was
	// deleted.
	// +optional
	CompletionTime *metav1.Time `json:"completionTime,omitempty"`

	// serverCreatedTime is when the pod of the model's current (or last)
	// server was bound to a node: from then on the server holds its GPUs.
	// +optional
	ServerCreatedTime *metav1.Time `json:"serverCreatedTime,omitempty"`

	// serverReadyTime is when the current (or last) server first answered
	// a completion.
	// +optional
	ServerReadyTime *metav1.Time `json:"serverReadyTime,omitempty"`

	// serverDeletedTime is when the last server was deleted, or scaled to
	// zero by spec.suspend. Empty while a server runs.
	// +optional
	ServerDeletedTime *metav1.Time `json:"serverDeletedTime,omitempty"`

	// earlierServers sums up the servers the model had before the current
	// (or last) one. A server removed before the model's runs were all
	// recorded (its Kueue Workload was evicted, or spec.suspend scaled it to
	// zero) is replaced by a new one when the model runs again; the three
	// times above are then the new server's. Empty when the model had one
	// server.
	// +optional
	EarlierServers *EarlierServers `json:"earlierServers,omitempty"`

	// gpuSecondsHeld is GPU-seconds the model's servers held: GPUs times
	// the seconds from serverCreatedTime to serverDeletedTime (or now),
	// plus earlierServers.gpuSecondsHeld. The time between two servers (a
	// model waiting for re-admission, a suspended evaluation) holds no GPU.
	// +optional
	GPUSecondsHeld int64 `json:"gpuSecondsHeld,omitempty"`

	// gpuSecondsIdle is the part of gpuSecondsHeld during which a server
	// was ready with no request in flight: GPUs times the ready seconds not
	// covered by any run of the model's ledgers (a run is in flight from its
	// start to its end), plus earlierServers.gpuSecondsIdle.
	// +optional
	GPUSecondsIdle int64 `json:"gpuSecondsIdle,omitempty"`

	// shardsInFlight is the calls in flight each of the model's shards
	// settled at under adaptive concurrency: the median of the limits its
	// recorded runs finished under (at most spec.runner.inFlightPerShard;
	// docs/concurrency.md). A shard is listed once it has recorded a run,
	// in shard order.
	// +optional
	// +listType=map
	// +listMapKey=shard
	// +kubebuilder:validation:MaxItems=64
	ShardsInFlight []ShardInFlight `json:"shardsInFlight,omitempty"`

	// derail is the Derail-550 recovery per condition, in the order of
	// spec.derail.conditions; set for suite derail-550 only.
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=11
	Derail []DerailConditionResult `json:"derail,omitempty"`

	// admission is where the model's Kueue Workload stands, for an
	// evaluation with the label kueue.x-k8s.io/queue-name: Absent, Pending,
	// Admitted, Evicted or Finished, with Kueue's message (why it waits,
	// which ClusterQueue admitted it, why it was evicted). Empty without the
	// label. Written by the operator.
	// +optional
	// +kubebuilder:validation:MaxLength=1024
	Admission string `json:"admission,omitempty"`

	// comparisons are the paired comparisons of the model's methods, each
	// later method (in the order pot, pot-retry, repot, repot-adaptive, ...)
	// against each earlier one, on the problems both finished, with McNemar's
	// test. At most 21 (every pair of seven methods); with more methods,
	// every method's comparison against pot is kept first.
	// +optional
	// +kubebuilder:validation:MaxItems=21
	Comparisons []MethodComparison `json:"comparisons,omitempty"`

	// gpu is the model's measured GPU cost; unset when its server has no
	// GPU telemetry (endpoint models, simulated models without fakeGPU).
	// +optional
	GPU *ModelGPUStatus `json:"gpu,omitempty"`

	// provenance records what produced the model's figures: images,
	// server arguments, revision, what the server reported of itself, the
	// sampling in force and the runner's repot build.
	// +optional
	Provenance *ModelProvenance `json:"provenance,omitempty"`
}

// ServerStatus is the state of one model's server.
type ServerStatus struct {
	// state is Pending, Starting, Ready, Stalled, Stopped or External.
	// +optional
	State ServerState `json:"state,omitempty"`

	// endpoint is the base URL runners use, e.g.
	// "http://demo-m1-88cbde4f-server.ns.svc:8000/v1".
	// +optional
	// +kubebuilder:validation:MaxLength=2048
	Endpoint string `json:"endpoint,omitempty"`

	// reason is a CamelCase reason for a Stalled or Starting server, e.g.
	// Unschedulable, ImagePullFailed, CrashLoop, ProbeTimeout.
	// +optional
	// +kubebuilder:validation:MaxLength=64
	Reason string `json:"reason,omitempty"`

	// message explains the reason for people.
	// +optional
	// +kubebuilder:validation:MaxLength=1024
	Message string `json:"message,omitempty"`
}

// EarlierServers is what a model's servers before its current one held.
type EarlierServers struct {
	// count is the number of earlier servers.
	// +required
	// +kubebuilder:validation:Minimum=1
	Count int32 `json:"count"`

	// gpuSecondsHeld is GPU-seconds the earlier servers held, each from its
	// pod's binding to its deletion.
	// +optional
	GPUSecondsHeld int64 `json:"gpuSecondsHeld,omitempty"`

	// gpuSecondsIdle is the part of gpuSecondsHeld during which an earlier
	// server was ready with no run of the model in flight.
	// +optional
	GPUSecondsIdle int64 `json:"gpuSecondsIdle,omitempty"`
}

// MethodResult is one method's aggregate over one model's problems. Runs
// ended by an infrastructure error are counted in infraErrors only.
type MethodResult struct {
	// method is the method's name.
	// +required
	Method Method `json:"method"`

	// solved is the number of problems solved.
	// +required
	Solved int32 `json:"solved"`

	// total is the number of problems with a result (infra errors excluded).
	// +required
	Total int32 `json:"total"`

	// rate is solved/total as a percentage with one decimal, e.g. "62.5%".
	// +optional
	// +kubebuilder:validation:MaxLength=16
	Rate string `json:"rate,omitempty"`

	// ratePermille is solved/total in thousandths.
	// +optional
	RatePermille int32 `json:"ratePermille,omitempty"`

	// interval is the 95% Wilson interval, e.g. "[53.6%, 70.6%]".
	// +optional
	// +kubebuilder:validation:MaxLength=32
	Interval string `json:"interval,omitempty"`

	// calls is the number of model calls.
	// +optional
	Calls int64 `json:"calls,omitempty"`

	// callsPerProblem is calls / total with two decimals, e.g. "1.25".
	// +optional
	// +kubebuilder:validation:MaxLength=16
	CallsPerProblem string `json:"callsPerProblem,omitempty"`

	// promptTokens is the sum of prompt tokens.
	// +optional
	PromptTokens int64 `json:"promptTokens,omitempty"`

	// completionTokens is the sum of completion tokens.
	// +optional
	CompletionTokens int64 `json:"completionTokens,omitempty"`

	// cachedTokens is the sum of cached prompt tokens.
	// +optional
	CachedTokens int64 `json:"cachedTokens,omitempty"`

	// reasoningTokens is the sum of reasoning tokens.
	// +optional
	ReasoningTokens int64 `json:"reasoningTokens,omitempty"`

	// costVsPotPermille is this method's tokens relative to pot's on the
	// same problems, in thousandths (1000 = as much as pot).
	// +optional
	CostVsPotPermille *int32 `json:"costVsPotPermille,omitempty"`

	// costVsPot is costVsPotPermille as a ratio, e.g. "1.52x".
	// +optional
	// +kubebuilder:validation:MaxLength=16
	CostVsPot string `json:"costVsPot,omitempty"`

	// routes is the routing distribution: how many problems took each route
	// and how many of those were solved.
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=16
	Routes []RouteCount `json:"routes,omitempty"`

	// infraErrors is the number of runs ended by an infrastructure error.
	// +optional
	InfraErrors int32 `json:"infraErrors,omitempty"`

	// infraRetries is the number of model-call retries infrastructure faults
	// caused.
	// +optional
	InfraRetries int64 `json:"infraRetries,omitempty"`

	// estimatedEnergyJoules is an ESTIMATE of this method's share of the
	// model's measured GPU energy (status.models[].gpu.energyJoules): the
	// energy split over the methods in proportion to their completion
	// tokens. The methods share the GPU at the same time, so no reading
	// separates them; the split assumes every completion token costs the
	// same.
	// +optional
	EstimatedEnergyJoules *int64 `json:"estimatedEnergyJoules,omitempty"`

	// estimatedJoulesPerSolvedProblem is estimatedEnergyJoules over solved
	// (an ESTIMATE, as above); unset while nothing is solved.
	// +optional
	EstimatedJoulesPerSolvedProblem *int64 `json:"estimatedJoulesPerSolvedProblem,omitempty"`

	// repairDynamics is the method's repair loop round by round (the runs
	// that recorded rounds: repot-vrr, and repot, repot-no-prefix and
	// repot-restart with repairBudget above 1 or spec.vrr's verifier
	// settings); present only when a run made more than one round.
	// docs/vrr.md defines the figures.
	// +optional
	RepairDynamics *RepairDynamics `json:"repairDynamics,omitempty"`
}

// RepairDynamics is one method's repair loop, round by round, over one
// model's runs that recorded rounds (infrastructure errors left out).
type RepairDynamics struct {
	// runs is the number of runs that recorded rounds.
	// +required
	Runs int32 `json:"runs"`

	// rounds are the rounds in order: round 0 is the first plan, round k
	// the k-th repair; at most 9 (repairBudget is at most 8).
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=9
	Rounds []RepairRound `json:"rounds,omitempty"`

	// loopStops counts the runs by why their loop stopped (accepted,
	// budget, gain_below_tau, guard, error), sorted by reason.
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=8
	LoopStops []LoopStopCount `json:"loopStops,omitempty"`
}

// RepairRound is one round of a repair loop over a method's runs.
type RepairRound struct {
	// round is k: 0 for the first plan, k for the k-th repair.
	// +required
	Round int32 `json:"round"`

	// entered is the number of runs that made the round's call.
	// +required
	Entered int32 `json:"entered"`

	// leftSolved is how many of those left the round with a valid plan.
	// +optional
	LeftSolved int32 `json:"leftSolved,omitempty"`

	// alphaPermille is the empirical alpha_k in thousandths: of the runs
	// that entered round k with an invalid plan (alphaTrials), those that
	// left it valid. Unset for round 0 and when alphaTrials is 0.
	// +optional
	AlphaPermille *int32 `json:"alphaPermille,omitempty"`

	// alphaTrials is the denominator of alphaPermille.
	// +optional
	AlphaTrials int32 `json:"alphaTrials,omitempty"`

	// betaPermille is the empirical beta_k in thousandths: of the runs that
	// entered round k with a valid plan (betaTrials; only a noisy verdict
	// repairs one), those that left it invalid. Unset when betaTrials is 0.
	// +optional
	BetaPermille *int32 `json:"betaPermille,omitempty"`

	// betaTrials is the denominator of betaPermille.
	// +optional
	BetaTrials int32 `json:"betaTrials,omitempty"`

	// shortened is the number of runs whose verified prefix was shorter
	// after the round than before it.
	// +optional
	Shortened int32 `json:"shortened,omitempty"`

	// tokens is the prompt and completion tokens of the round's calls.
	// +optional
	Tokens int64 `json:"tokens,omitempty"`

	// validAfterPermille is, in thousandths of runs, those whose committed
	// plan was valid after the round (a run that stopped earlier counts
	// with the plan it stopped on).
	// +optional
	ValidAfterPermille int32 `json:"validAfterPermille,omitempty"`

	// acceptedAfterPermille is, likewise, those whose committed plan the
	// verifier accepted after the round.
	// +optional
	AcceptedAfterPermille int32 `json:"acceptedAfterPermille,omitempty"`
}

// LoopStopCount is how many runs' repair loops stopped for one reason.
type LoopStopCount struct {
	// reason is why the loop stopped: accepted, budget, gain_below_tau,
	// guard or error.
	// +required
	// +kubebuilder:validation:MaxLength=32
	Reason string `json:"reason"`

	// count is the number of runs.
	// +required
	Count int32 `json:"count"`
}

// RouteCount is one route of the routing distribution.
type RouteCount struct {
	// name is the route, e.g. initial_pot_success, fresh_retry_empty_plan,
	// fresh_retry_short_prefix, suffix_repair, fresh_retry, no_extra_call.
	// +required
	// +kubebuilder:validation:MaxLength=64
	Name string `json:"name"`

	// count is the number of problems that took the route.
	// +required
	Count int32 `json:"count"`

	// solved is how many of them were solved.
	// +required
	Solved int32 `json:"solved"`
}

// ScalingStatus relates, across (model, environment) cells, the mean prefix
// fraction of failed first plans to repot's gain over pot-retry.
type ScalingStatus struct {
	// cells are the (model, environment) cells.
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=128
	Cells []ScalingCell `json:"cells,omitempty"`

	// slope is the least-squares slope of repotMinusPotRetryPoints over the
	// failed prefix fraction (0 to 1), e.g. "+35.2"; empty with fewer than
	// two distinct x values.
	// +optional
	// +kubebuilder:validation:MaxLength=16
	Slope string `json:"slope,omitempty"`
}

// ScalingCell is one (model, environment) cell.
type ScalingCell struct {
	// model is the model's name.
	// +required
	// +kubebuilder:validation:MaxLength=20
	Model string `json:"model"`

	// environment is the environment, e.g. tower_of_hanoi.
	// +required
	// +kubebuilder:validation:MaxLength=64
	Environment string `json:"environment"`

	// failedPrefixPermille is the mean prefix fraction of failed first plans
	// in the cell, in thousandths.
	// +required
	FailedPrefixPermille int32 `json:"failedPrefixPermille"`

	// repotMinusPotRetryPoints is repot's success rate minus pot-retry's in
	// the cell, in points, e.g. "+6.0".
	// +required
	// +kubebuilder:validation:MaxLength=16
	RepotMinusPotRetryPoints string `json:"repotMinusPotRetryPoints"`
}

// ShardInFlight is the concurrency one runner shard settled at.
type ShardInFlight struct {
	// shard is the shard's index (its Job completion index).
	// +required
	// +kubebuilder:validation:Minimum=0
	Shard int32 `json:"shard"`

	// settled is the median calls-in-flight limit of the shard's recorded
	// runs.
	// +required
	// +kubebuilder:validation:Minimum=0
	Settled int32 `json:"settled"`
}
