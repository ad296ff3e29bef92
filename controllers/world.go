package controllers

import (
	"time"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	rbacv1 "k8s.io/api/rbac/v1"

	"repot.dev/repot-operator/runner/summary"
)

// world is everything the controller observed about one evaluation: its
// children (found through the owner index), its server pods, the records of
// its ledgers and the clock. Planning is a pure function of the evaluation
// and its world.
type world struct {
	Now time.Time

	Deployments     []appsv1.Deployment
	Services        []corev1.Service
	Jobs            []batchv1.Job
	Ledgers         []corev1.ConfigMap
	ServiceAccounts []corev1.ServiceAccount
	Roles           []rbacv1.Role
	RoleBindings    []rbacv1.RoleBinding
	NetworkPolicies []networkingv1.NetworkPolicy
	// ServerPods are the pods of the evaluation's servers (by label: envtest
	// and real clusters alike create them through ReplicaSets).
	ServerPods []corev1.Pod

	// Records are the records of all ledgers in a fixed order (readLedgers).
	Records []summary.Record
	// LedgerProblems are unreadable ledger lines (logged, never counted).
	LedgerProblems []ledgerProblem

	// Problems is what is known about spec.problems.
	Problems problemsInfo
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

func (w *world) deployment(name string) *appsv1.Deployment {
	for i := range w.Deployments {
		if w.Deployments[i].Name == name {
			return &w.Deployments[i]
		}
	}
	return nil
}

func (w *world) service(name string) *corev1.Service {
	for i := range w.Services {
		if w.Services[i].Name == name {
			return &w.Services[i]
		}
	}
	return nil
}

func (w *world) job(name string) *batchv1.Job {
	for i := range w.Jobs {
		if w.Jobs[i].Name == name {
			return &w.Jobs[i]
		}
	}
	return nil
}

func (w *world) hasLedger(name string) bool {
	for i := range w.Ledgers {
		if w.Ledgers[i].Name == name {
			return true
		}
	}
	return false
}

// serverPods returns the pods of one model's server.
func (w *world) serverPods(eval, model string) []corev1.Pod {
	var out []corev1.Pod
	for _, p := range w.ServerPods {
		if p.Labels[LabelEvaluation] == eval && p.Labels[LabelModel] == model {
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

func jobFinished(j *batchv1.Job) bool {
	return jobCondition(j, batchv1.JobComplete) != nil || jobCondition(j, batchv1.JobFailed) != nil
}
