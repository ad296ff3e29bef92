package controllers

import (
	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// project returns the world as it will be once the plan's child changes
// are applied. The status describes that world, so that a pass which
// creates the children also reports them, and the next pass finds nothing
// to change. Objects are shallow-copied into new slices; w is not modified.
func project(w *world, p *plan) *world {
	n := *w
	n.Deployments = append([]appsv1.Deployment(nil), w.Deployments...)
	n.Services = append([]corev1.Service(nil), w.Services...)
	n.Jobs = append([]batchv1.Job(nil), w.Jobs...)
	n.Ledgers = append([]corev1.ConfigMap(nil), w.Ledgers...)
	n.ServiceAccounts = append([]corev1.ServiceAccount(nil), w.ServiceAccounts...)
	n.Roles = append([]rbacv1.Role(nil), w.Roles...)
	n.RoleBindings = append([]rbacv1.RoleBinding(nil), w.RoleBindings...)
	n.NetworkPolicies = append([]networkingv1.NetworkPolicy(nil), w.NetworkPolicies...)
	for _, o := range p.Create {
		n.put(o)
	}
	for _, o := range p.Update {
		n.put(o)
	}
	for _, o := range p.Delete {
		switch o.(type) {
		case *appsv1.Deployment:
			n.Deployments = without(n.Deployments, o.GetName())
		case *corev1.Service:
			n.Services = without(n.Services, o.GetName())
		case *batchv1.Job:
			n.Jobs = without(n.Jobs, o.GetName())
		}
	}
	return &n
}

// put adds or replaces an object by name.
func (w *world) put(o client.Object) {
	switch x := o.(type) {
	case *appsv1.Deployment:
		w.Deployments = append(without(w.Deployments, x.Name), *x)
	case *corev1.Service:
		w.Services = append(without(w.Services, x.Name), *x)
	case *batchv1.Job:
		w.Jobs = append(without(w.Jobs, x.Name), *x)
	case *corev1.ConfigMap:
		w.Ledgers = append(without(w.Ledgers, x.Name), *x)
	case *corev1.ServiceAccount:
		w.ServiceAccounts = append(without(w.ServiceAccounts, x.Name), *x)
	case *rbacv1.Role:
		w.Roles = append(without(w.Roles, x.Name), *x)
	case *rbacv1.RoleBinding:
		w.RoleBindings = append(without(w.RoleBindings, x.Name), *x)
	case *networkingv1.NetworkPolicy:
		w.NetworkPolicies = append(without(w.NetworkPolicies, x.Name), *x)
	}
}

func without[T any, PT interface {
	*T
	named
}](items []T, name string) []T {
	out := items[:0:0]
	for i := range items {
		if PT(&items[i]).GetName() != name {
			out = append(out, items[i])
		}
	}
	return out
}
