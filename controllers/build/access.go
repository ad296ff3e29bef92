package build

import (
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/utils/ptr"

	repotv1 "repot.dev/repot-operator/api/v1alpha1"
)

// RunnerServiceAccount is the identity of an evaluation's runner pods. Its
// token is never automounted; only the ledger containers get a projected
// one.
func RunnerServiceAccount(e *repotv1.RepotEvaluation) *corev1.ServiceAccount {
	return &corev1.ServiceAccount{
		ObjectMeta:                   ChildMeta(e, RunnerAccessName(e.Name), "", ComponentRunner),
		AutomountServiceAccountToken: ptr.To(false),
	}
}

// RunnerRole lets the runner's ledger containers read and patch the
// evaluation's own ledger ConfigMaps and their spill ConfigMaps, by name,
// and nothing else: get and patch are all the ledger store (controllers/
// ledger's Store, with its ConfigMapClient of Get and Patch) calls. No
// update (a patch with the read resourceVersion is as safe against lost
// writes), no list, watch or delete, and no other evaluation's ledgers. No
// create either: the operator creates the spill ConfigMaps with the
// ledgers (LedgerConfigMaps), because RBAC cannot restrict create to
// names, and a runner that may create ConfigMaps may create any in the
// namespace.
func RunnerRole(e *repotv1.RepotEvaluation) *rbacv1.Role {
	var names []string
	spills := LedgerSpills(e)
	for i := range e.Spec.Models {
		for s := range int(e.Spec.ShardsPerModelOrDefault()) {
			names = append(names, ledgerChain(e.Name, e.Spec.Models[i].Name, s, spills)...)
		}
	}
	return &rbacv1.Role{
		ObjectMeta: ChildMeta(e, RunnerAccessName(e.Name), "", ComponentRunner),
		Rules: []rbacv1.PolicyRule{{
			APIGroups:     []string{""},
			Resources:     []string{"configmaps"},
			ResourceNames: names,
			Verbs:         []string{"get", "patch"},
		}},
	}
}

// RunnerRoleBinding binds runnerRole to runnerServiceAccount.
func RunnerRoleBinding(e *repotv1.RepotEvaluation) *rbacv1.RoleBinding {
	name := RunnerAccessName(e.Name)
	return &rbacv1.RoleBinding{
		ObjectMeta: ChildMeta(e, name, "", ComponentRunner),
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: name},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: name, Namespace: e.Namespace}},
	}
}
