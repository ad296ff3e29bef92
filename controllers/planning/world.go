package planning

import (
	"time"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	rbacv1 "k8s.io/api/rbac/v1"

	repotv1 "repot.dev/repot-operator/api/v1alpha1"
	"repot.dev/repot-operator/contract"
	"repot.dev/repot-operator/controllers/build"
	"repot.dev/repot-operator/controllers/kueueadapter"
)

// World is everything the controller observed about one evaluation: its
// children (found through the owner index; one slice per kind of the
// childKinds registry), its server pods, the records of
// its ledgers and the clock. Planning is a pure function of the evaluation
// and its world.
type World struct {
	Now time.Time

	Deployments []appsv1.Deployment
	Services    []corev1.Service
	Jobs        []batchv1.Job
	// Ledgers are the ledger ConfigMaps (and spills) the evaluation
	// controls and expects by name (ExpectedLedgers).
	Ledgers []corev1.ConfigMap
	// StrayLedgers are the ledger ConfigMaps the evaluation controls but
	// does not build (ExpectedLedgers): never read, deleted as a removed
	// model's (deleteRemovedModels).
	StrayLedgers    []corev1.ConfigMap
	ServiceAccounts []corev1.ServiceAccount
	Roles           []rbacv1.Role
	RoleBindings    []rbacv1.RoleBinding
	NetworkPolicies []networkingv1.NetworkPolicy
	// ServerPods are the pods of the evaluation's servers (by label: envtest
	// and real clusters alike create them through ReplicaSets).
	ServerPods []corev1.Pod

	// Records are the records of all ledgers in a fixed order (readLedgers).
	Records []contract.Record
	// ShardsInFlight is, per model, the concurrency each shard settled at
	// (ShardsInFlight of the ledgers).
	ShardsInFlight map[string][]repotv1.ShardInFlight
	// ShardSpend is, per model and shard index, what the shard's ledgers
	// record (ShardSpending); computed from Ledgers when nil.
	ShardSpend map[string]map[int]Spend
	// Results, when set, are computeResults of Records for this
	// evaluation, memoized by the snapshot; the planner computes them when
	// nil. Shared between passes: read only.
	Results *EvaluationResults
	// LedgerProblems are unreadable ledger lines (logged, never counted).
	LedgerProblems []ledgerProblem

	// Problems is what is known about spec.problems.
	Problems problemsInfo

	// NameTaken are children the evaluation needs whose names objects it
	// does not control hold: observed by the shell before the pass for the
	// runner path (RunnerPathChildren), so that the decision knows the
	// runner blocked (modelStall), and, in the world once a pass is applied
	// (Describe's projection), those its creates met as well
	// (Applied.NameTaken, planNameTaken).
	NameTaken []TakenName

	// Admitted, when not nil, is what an admission system (Kueue) admitted:
	// only the models set true may have children (world.admitted). nil means
	// no admission system: every model is admitted.
	Admitted map[string]bool

	// ArtifactsProbe is the Job that checks the artifact store before the
	// evaluation starts (build.ArtifactsProbeJob), not among Jobs;
	// ArtifactsProbePods are its pods.
	ArtifactsProbe     *batchv1.Job
	ArtifactsProbePods []corev1.Pod

	// RunnerPods are the pods of the evaluation's runner Jobs (by label).
	RunnerPods []corev1.Pod
	// MountFailures are the latest FailedMount event messages of runner
	// pods Pending past their grace period, by pod name.
	MountFailures map[string]string
	// RunnerCreateFailures are the latest FailedCreate event messages of
	// runner Jobs that have no live pod (RunnerJobsWithoutPods), by Job
	// name: the Job controller reports pods the API server refuses only as
	// events (LatestCreateFailure).
	RunnerCreateFailures map[string]string

	// Kueue is what Kueue says of a queued evaluation's models;
	// KueueMissing that the evaluation is queued but Kueue is not installed.
	Kueue        kueueadapter.QueueWorld
	KueueMissing bool
}

// problemsInfo describes the evaluation's problem set.
type problemsInfo struct {
	// Count is the number of problems, 0 when unknown (a URL of custom
	// problems is only read by the runner).
	Count int
	// Unavailable, when set, says why spec.problems cannot be read; runners
	// are not started until it can.
	Unavailable string
	// Hash is "sha256:<hex>" of a problems ConfigMap's key ("" otherwise).
	Hash string
}

func (w *World) deployment(name string) *appsv1.Deployment {
	return byName[appsv1.Deployment](w.Deployments, name)
}

func (w *World) service(name string) *corev1.Service {
	return byName[corev1.Service](w.Services, name)
}

func (w *World) job(name string) *batchv1.Job { return byName[batchv1.Job](w.Jobs, name) }

func (w *World) hasLedger(name string) bool { return hasNamed[corev1.ConfigMap](w.Ledgers, name) }

// serverPods returns the pods of one model's server.
func (w *World) serverPods(eval, model string) []corev1.Pod {
	var out []corev1.Pod
	for _, p := range w.ServerPods {
		if p.Labels[build.LabelEvaluation] == eval && p.Labels[build.LabelModel] == model {
			out = append(out, p)
		}
	}
	return out
}

func jobCondition(j *batchv1.Job, t batchv1.JobConditionType) *batchv1.JobCondition {
	for i := range j.Status.Conditions {
		if j.Status.Conditions[i].Type == t && j.Status.Conditions[i].Status == corev1.ConditionTrue {
			return &j.Status.Conditions[i]
		}
	}
	return nil
}

func jobCompleted(j *batchv1.Job) bool { return jobCondition(j, batchv1.JobComplete) != nil }

func jobFinished(j *batchv1.Job) bool {
	return jobCondition(j, batchv1.JobComplete) != nil || jobCondition(j, batchv1.JobFailed) != nil
}

// results are the aggregated records: memoized by the snapshot, or computed.
func (w *World) results(e *repotv1.RepotEvaluation) EvaluationResults {
	if w.Results != nil {
		return *w.Results
	}
	return ComputeResults(e, w.Records)
}
