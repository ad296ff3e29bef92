package planning

import (
	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"repot.dev/repot-operator/controllers/build"
)

// Object is a Kubernetes object: the method set of controller-runtime's
// client.Object, so that planning needs no client (a client.Object is an
// Object and the other way round).
type Object interface {
	metav1.Object
	runtime.Object
}

// ObjectList is a list of objects (the method set of client.ObjectList).
type ObjectList interface {
	metav1.ListInterface
	runtime.Object
}

// childKind is one kind of object the controller creates and owns.
// ChildKinds is the one list of them: the manager's cache and owner index
// and watches (the shell's setup.go), the world's lists (its snapshot.go),
// the projected world (project.go) and the kind checks (KindOf) all
// iterate over it, so a new child kind is added here and nowhere else.
type childKind interface {
	// Object is an empty object of the kind (for watches, index and cache).
	Object() Object
	// Plural is the kind's resource name, for messages.
	Plural() string
	// NewList is an empty list of the kind, for the snapshot to fill.
	NewList() ObjectList
	// SetList puts the objects of l, a filled NewList, into the world.
	SetList(w *World, l ObjectList)
	// Clone gives dst its own copy of src's slice of this kind.
	Clone(dst, src *World)
	// Put adds or replaces o by name, if o is of this kind.
	Put(w *World, o Object) bool
	// Remove drops o by name, if o is of this kind.
	Remove(w *World, o Object) bool
	// Owns says whether o is of this kind.
	Owns(o Object) bool
	// Has says whether w holds an object of this kind named name.
	Has(w *World, name string) bool
}

// ChildKinds is the registry of child kinds, in the order they are listed.
var ChildKinds = []childKind{
	kind[appsv1.Deployment, *appsv1.Deployment, appsv1.DeploymentList, *appsv1.DeploymentList]{
		plural: "deployments", items: func(l *appsv1.DeploymentList) []appsv1.Deployment { return l.Items },
		field: func(w *World) *[]appsv1.Deployment { return &w.Deployments },
	},
	kind[corev1.Service, *corev1.Service, corev1.ServiceList, *corev1.ServiceList]{
		plural: "services", items: func(l *corev1.ServiceList) []corev1.Service { return l.Items },
		field: func(w *World) *[]corev1.Service { return &w.Services },
	},
	kind[batchv1.Job, *batchv1.Job, batchv1.JobList, *batchv1.JobList]{
		plural: "jobs", items: func(l *batchv1.JobList) []batchv1.Job { return l.Items },
		field: func(w *World) *[]batchv1.Job { return &w.Jobs },
	},
	kind[corev1.ConfigMap, *corev1.ConfigMap, corev1.ConfigMapList, *corev1.ConfigMapList]{
		plural: "configmaps", items: func(l *corev1.ConfigMapList) []corev1.ConfigMap { return l.Items },
		field: func(w *World) *[]corev1.ConfigMap { return &w.Ledgers },
		// The only ConfigMaps an evaluation owns are its ledgers.
		keep: func(cm *corev1.ConfigMap) bool { return cm.Labels[build.LabelComponent] == build.ComponentLedger },
	},
	kind[corev1.ServiceAccount, *corev1.ServiceAccount, corev1.ServiceAccountList, *corev1.ServiceAccountList]{
		plural: "serviceaccounts", items: func(l *corev1.ServiceAccountList) []corev1.ServiceAccount { return l.Items },
		field: func(w *World) *[]corev1.ServiceAccount { return &w.ServiceAccounts },
	},
	kind[rbacv1.Role, *rbacv1.Role, rbacv1.RoleList, *rbacv1.RoleList]{
		plural: "roles", items: func(l *rbacv1.RoleList) []rbacv1.Role { return l.Items },
		field: func(w *World) *[]rbacv1.Role { return &w.Roles },
	},
	kind[rbacv1.RoleBinding, *rbacv1.RoleBinding, rbacv1.RoleBindingList, *rbacv1.RoleBindingList]{
		plural: "rolebindings", items: func(l *rbacv1.RoleBindingList) []rbacv1.RoleBinding { return l.Items },
		field: func(w *World) *[]rbacv1.RoleBinding { return &w.RoleBindings },
	},
	kind[networkingv1.NetworkPolicy, *networkingv1.NetworkPolicy, networkingv1.NetworkPolicyList, *networkingv1.NetworkPolicyList]{
		plural: "networkpolicies", items: func(l *networkingv1.NetworkPolicyList) []networkingv1.NetworkPolicy { return l.Items },
		field: func(w *World) *[]networkingv1.NetworkPolicy { return &w.NetworkPolicies },
	},
}

// ChildObjects returns an empty object of every child kind.
func ChildObjects() []Object {
	out := make([]Object, 0, len(ChildKinds))
	for _, k := range ChildKinds {
		out = append(out, k.Object())
	}
	return out
}

// KindOf finds the registered kind of o, or nil.
func KindOf(o Object) childKind {
	for _, k := range ChildKinds {
		if k.Owns(o) {
			return k
		}
	}
	return nil
}

// kind implements childKind for object type T (PT is *T) listed as L.
type kind[T any, PT interface {
	*T
	Object
}, L any, PL interface {
	*L
	ObjectList
}] struct {
	plural string
	items  func(PL) []T
	field  func(*World) *[]T
	// keep, when set, filters the listed objects.
	keep func(PT) bool
}

func (k kind[T, PT, L, PL]) Object() Object { return PT(new(T)) }

func (k kind[T, PT, L, PL]) Plural() string { return k.plural }

func (k kind[T, PT, L, PL]) Owns(o Object) bool {
	_, ok := o.(PT)
	return ok
}

func (k kind[T, PT, L, PL]) Has(w *World, name string) bool {
	return hasNamed[T, PT](*k.field(w), name)
}

func (k kind[T, PT, L, PL]) NewList() ObjectList { return PL(new(L)) }

func (k kind[T, PT, L, PL]) SetList(w *World, l ObjectList) {
	items := k.items(l.(PL))
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
}

func (k kind[T, PT, L, PL]) Clone(dst, src *World) {
	*k.field(dst) = append([]T(nil), *k.field(src)...)
}

func (k kind[T, PT, L, PL]) Put(w *World, o Object) bool {
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

func (k kind[T, PT, L, PL]) Remove(w *World, o Object) bool {
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
