package controllers

import (
	"context"
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"repot.dev/repot-operator/controllers/build"
)

// childKind is one kind of object the controller creates and owns.
// childKinds is the one list of them: the manager's cache and owner index
// and watches (setup.go), the world's lists (snapshot.go), the projected
// world (project.go) and the kind checks (kindOf) all iterate over it, so
// a new child kind is added here and nowhere else.
type childKind interface {
	// object is an empty object of the kind (for watches, index and cache).
	object() client.Object
	// load lists the kind's objects with opts into the world.
	load(ctx context.Context, c client.Reader, w *world, opts ...client.ListOption) error
	// clone gives dst its own copy of src's slice of this kind.
	clone(dst, src *world)
	// put adds or replaces o by name, if o is of this kind.
	put(w *world, o client.Object) bool
	// remove drops o by name, if o is of this kind.
	remove(w *world, o client.Object) bool
	// owns says whether o is of this kind.
	owns(o client.Object) bool
	// has says whether w holds an object of this kind named name.
	has(w *world, name string) bool
}

// childKinds is the registry of child kinds, in the order they are listed.
var childKinds = []childKind{
	kind[appsv1.Deployment, *appsv1.Deployment, appsv1.DeploymentList, *appsv1.DeploymentList]{
		plural: "deployments", items: func(l *appsv1.DeploymentList) []appsv1.Deployment { return l.Items },
		field: func(w *world) *[]appsv1.Deployment { return &w.Deployments },
	},
	kind[corev1.Service, *corev1.Service, corev1.ServiceList, *corev1.ServiceList]{
		plural: "services", items: func(l *corev1.ServiceList) []corev1.Service { return l.Items },
		field: func(w *world) *[]corev1.Service { return &w.Services },
	},
	kind[batchv1.Job, *batchv1.Job, batchv1.JobList, *batchv1.JobList]{
		plural: "jobs", items: func(l *batchv1.JobList) []batchv1.Job { return l.Items },
		field: func(w *world) *[]batchv1.Job { return &w.Jobs },
	},
	kind[corev1.ConfigMap, *corev1.ConfigMap, corev1.ConfigMapList, *corev1.ConfigMapList]{
		plural: "configmaps", items: func(l *corev1.ConfigMapList) []corev1.ConfigMap { return l.Items },
		field: func(w *world) *[]corev1.ConfigMap { return &w.Ledgers },
		// The only ConfigMaps an evaluation owns are its ledgers.
		keep: func(cm *corev1.ConfigMap) bool { return cm.Labels[build.LabelComponent] == build.ComponentLedger },
	},
	kind[corev1.ServiceAccount, *corev1.ServiceAccount, corev1.ServiceAccountList, *corev1.ServiceAccountList]{
		plural: "serviceaccounts", items: func(l *corev1.ServiceAccountList) []corev1.ServiceAccount { return l.Items },
		field: func(w *world) *[]corev1.ServiceAccount { return &w.ServiceAccounts },
	},
	kind[rbacv1.Role, *rbacv1.Role, rbacv1.RoleList, *rbacv1.RoleList]{
		plural: "roles", items: func(l *rbacv1.RoleList) []rbacv1.Role { return l.Items },
		field: func(w *world) *[]rbacv1.Role { return &w.Roles },
	},
	kind[rbacv1.RoleBinding, *rbacv1.RoleBinding, rbacv1.RoleBindingList, *rbacv1.RoleBindingList]{
		plural: "rolebindings", items: func(l *rbacv1.RoleBindingList) []rbacv1.RoleBinding { return l.Items },
		field: func(w *world) *[]rbacv1.RoleBinding { return &w.RoleBindings },
	},
	kind[networkingv1.NetworkPolicy, *networkingv1.NetworkPolicy, networkingv1.NetworkPolicyList, *networkingv1.NetworkPolicyList]{
		plural: "networkpolicies", items: func(l *networkingv1.NetworkPolicyList) []networkingv1.NetworkPolicy { return l.Items },
		field: func(w *world) *[]networkingv1.NetworkPolicy { return &w.NetworkPolicies },
	},
}

// childObjects returns an empty object of every child kind.
func childObjects() []client.Object {
	out := make([]client.Object, 0, len(childKinds))
	for _, k := range childKinds {
		out = append(out, k.object())
	}
	return out
}

// kindOf finds the registered kind of o, or nil.
func kindOf(o client.Object) childKind {
	for _, k := range childKinds {
		if k.owns(o) {
			return k
		}
	}
	return nil
}

// kind implements childKind for object type T (PT is *T) listed as L.
type kind[T any, PT interface {
	*T
	client.Object
}, L any, PL interface {
	*L
	client.ObjectList
}] struct {
	plural string
	items  func(PL) []T
	field  func(*world) *[]T
	// keep, when set, filters the listed objects.
	keep func(PT) bool
}

func (k kind[T, PT, L, PL]) object() client.Object { return PT(new(T)) }

func (k kind[T, PT, L, PL]) owns(o client.Object) bool {
	_, ok := o.(PT)
	return ok
}

func (k kind[T, PT, L, PL]) has(w *world, name string) bool {
	return hasNamed[T, PT](*k.field(w), name)
}

func (k kind[T, PT, L, PL]) load(ctx context.Context, c client.Reader, w *world, opts ...client.ListOption) error {
	l := PL(new(L))
	if err := c.List(ctx, l, opts...); err != nil {
		return fmt.Errorf("list owned %s: %w", k.plural, err)
	}
	items := k.items(l)
	if k.keep != nil {
		kept := items[:0]
		for i := range items {
			if k.keep(PT(&items[i])) {
				kept = append(kept, items[i])
			}
		}
		items = kept
	}
	*k.field(w) = items
	return nil
}

func (k kind[T, PT, L, PL]) clone(dst, src *world) {
	*k.field(dst) = append([]T(nil), *k.field(src)...)
}

func (k kind[T, PT, L, PL]) put(w *world, o client.Object) bool {
	x, ok := o.(PT)
	if !ok {
		return false
	}
	// Replace in place (the slice is the projected world's own copy, see
	// clone), else append: no copy of the whole slice per object.
	f := k.field(w)
	for i := range *f {
		if PT(&(*f)[i]).GetName() == x.GetName() {
			(*f)[i] = *x
			return true
		}
	}
	*f = append(*f, *x)
	return true
}

func (k kind[T, PT, L, PL]) remove(w *world, o client.Object) bool {
	if _, ok := o.(PT); !ok {
		return false
	}
	f := k.field(w)
	*f = without[T, PT](*f, o.GetName())
	return true
}

type named interface{ GetName() string }

// byName returns the item named name, or nil.
func byName[T any, PT interface {
	*T
	named
}](items []T, name string) PT {
	for i := range items {
		if PT(&items[i]).GetName() == name {
			return &items[i]
		}
	}
	return nil
}

func hasNamed[T any, PT interface {
	*T
	named
}](items []T, name string) bool {
	return byName[T, PT](items, name) != nil
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
