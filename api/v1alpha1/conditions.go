package v1alpha1

// Condition types of a RepotEvaluation. ServersReady, Running, Complete and
// Failed describe the evaluation; Ready, Reconciling and Stalled follow
// kstatus (https://github.com/kubernetes-sigs/cli-utils/tree/master/pkg/kstatus)
// so that generic tools can wait on the object.
const (
	// ConditionServersReady is True when every model's server answered a
	// real completion (endpoint models count as ready).
	ConditionServersReady = "ServersReady"
	// ConditionRunning is True while runner Jobs are active.
	ConditionRunning = "Running"
	// ConditionComplete is True when every run is recorded in the ledgers.
	ConditionComplete = "Complete"
	// ConditionFailed is True when the evaluation ended without completing.
	ConditionFailed = "Failed"

	// ConditionReady (kstatus) is True when the evaluation completed.
	ConditionReady = "Ready"
	// ConditionReconciling (kstatus) is True while the operator is still
	// working towards the spec (starting servers, running shards).
	ConditionReconciling = "Reconciling"
	// ConditionStalled (kstatus) is True when progress needs a person: a
	// server cannot start, or the evaluation failed.
	ConditionStalled = "Stalled"

	// ConditionArtifactStoreUnavailable is set while the evaluation has an
	// S3 artifact store: True when the operator's probe of the store, run
	// with the runners' identity and credentials before anything starts,
	// failed (its message says what failed: the endpoint, the bucket or the
	// credentials); False once it passed or while it runs.
	ConditionArtifactStoreUnavailable = "ArtifactStoreUnavailable"

	// ConditionArtifactsCleanupFailed is set on a deleted evaluation whose
	// stored traces must go with it while the Job that deletes them fails:
	// True, reason ArtifactsCleanupFailed, with what failed, when the next
	// try runs (the wait doubles, up to 30 minutes) and how to let the
	// deletion finish. Its lastTransitionTime is when the failures began.
	ConditionArtifactsCleanupFailed = "ArtifactsCleanupFailed"
)

// Reasons of ArtifactStoreUnavailable.
const (
	// ReasonArtifactStoreUnavailable: the probe failed; nothing starts.
	ReasonArtifactStoreUnavailable = "ArtifactStoreUnavailable"
	// ReasonStoreWritable: the probe passed.
	ReasonStoreWritable = "StoreWritable"
	// ReasonProbingStore: the probe has not finished.
	ReasonProbingStore = "ProbingStore"
)

// Reasons of the events of an evaluation deleted with
// spec.artifacts.retainAfterDeletion false.
const (
	// ReasonArtifactsDeleted: its stored traces were deleted.
	ReasonArtifactsDeleted = "ArtifactsDeleted"
	// ReasonArtifactsCleanupFailed: deleting them failed; it is retried.
	ReasonArtifactsCleanupFailed = "ArtifactsCleanupFailed"
	// ReasonArtifactsRetained: they stay (the namespace is being deleted).
	ReasonArtifactsRetained = "ArtifactsRetained"
)

// Reasons of ServersReady.
const (
	// ReasonServersStarting: at least one server has not answered yet.
	ReasonServersStarting = "ServersStarting"
	// ReasonServersAnswered: every server answered a completion.
	ReasonServersAnswered = "ServersAnswered"
	// ReasonServersStopped: the servers were deleted (completion, failure or
	// suspend).
	ReasonServersStopped = "ServersStopped"
	// ReasonUnschedulable: no node can run a server (no GPU, or no node
	// matches the product label, node selector or tolerations).
	ReasonUnschedulable = "Unschedulable"
	// ReasonImagePullFailed: a server's image cannot be pulled.
	ReasonImagePullFailed = "ImagePullFailed"
	// ReasonCrashLoop: a server container keeps crashing.
	ReasonCrashLoop = "CrashLoop"
	// ReasonProbeTimeout: a server did not answer a completion within its
	// startup probe's time.
	ReasonProbeTimeout = "ProbeTimeout"
	// ReasonServerPodsRefused: the API server refuses to create a server's
	// pods (a ResourceQuota, Pod Security admission, a LimitRange or a
	// webhook): its ReplicaSet reports ReplicaFailure FailedCreate.
	ReasonServerPodsRefused = "ServerPodsRefused"
)

// Reasons of Running.
const (
	// ReasonWaitingForServers: runners start once their server is ready.
	ReasonWaitingForServers = "WaitingForServers"
	// ReasonRunnersActive: runner Jobs are running.
	ReasonRunnersActive = "RunnersActive"
	// ReasonSuspended: spec.suspend is true.
	ReasonSuspended = "Suspended"
	// ReasonRunnersFinished: every runner Job has finished.
	ReasonRunnersFinished = "RunnersFinished"
)

// Reasons of Complete, Failed, Ready, Reconciling and Stalled.
const (
	// ReasonAllRunsRecorded: every run is in the ledgers (Complete, Ready).
	ReasonAllRunsRecorded = "AllRunsRecorded"
	// ReasonInProgress: runs are still missing (Complete false, Ready false,
	// Reconciling true).
	ReasonInProgress = "InProgress"
	// ReasonDeadlineExceeded: spec.activeDeadlineSeconds passed (Failed).
	ReasonDeadlineExceeded = "DeadlineExceeded"
	// ReasonBackoffLimitExceeded: a runner Job failed too often (Failed).
	ReasonBackoffLimitExceeded = "BackoffLimitExceeded"
	// ReasonProblemsUnavailable: spec.problems cannot be read, e.g. the
	// ConfigMap or its key is missing (Stalled).
	ReasonProblemsUnavailable = "ProblemsUnavailable"
	// ReasonServerStalled: a model's server cannot start; the model status
	// and the ServersReady condition name the cause (Stalled).
	ReasonServerStalled = "ServerStalled"
	// ReasonChildRejected: the API server rejected an object the operator
	// built from the spec (for example an invalid node selector key), so
	// retrying cannot help until the spec changes (Stalled).
	ReasonChildRejected = "ChildRejected"
	// ReasonChildNameTaken: a child (or a model's Kueue Workload) cannot be
	// created because an object of its kind and name exists that this
	// evaluation does not control (an earlier evaluation of the same name
	// whose children are still being deleted, or an object made by someone
	// else); the message names each object and its owner (Stalled True,
	// Reconciling False, state Stalled). The operator retries until it is
	// gone.
	ReasonChildNameTaken = "ChildNameTaken"
	// ReasonKueuePlacementConflict: a model's server or runner pods cannot
	// carry the node labels of the flavor Kueue admitted its Workload to
	// (its nodeSelector asks for another value of one of them), so they
	// are not created; the model's server status and a Warning event name
	// the label.
	ReasonKueuePlacementConflict = "KueuePlacementConflict"
	// ReasonPodStuckTerminating: a deleted evaluation waits on a runner pod
	// still Terminating past its grace period (a lost node); the Warning
	// names the pod and its node and how to let the deletion go on.
	ReasonPodStuckTerminating = "PodStuckTerminating"
	// ReasonFailed: the evaluation failed (Stalled, Ready false).
	ReasonFailed = "Failed"
	// ReasonReconciled: nothing left to do (Reconciling false, Stalled false).
	ReasonReconciled = "Reconciled"
)

// Reasons added for GitOps.
const (
	// ReasonProblemsChanged: the problems ConfigMap changed after the
	// evaluation started (status.problemsHash no longer matches), so its
	// runs would mix two problem sets (Failed).
	ReasonProblemsChanged = "ProblemsChanged"
)
