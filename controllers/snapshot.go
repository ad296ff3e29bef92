package controllers

import (
	"context"
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"

	repotv1 "repot.dev/repot-operator/api/v1alpha1"
)

// snapshot reads the world of one evaluation: its children through the
// owner index, its server pods by label, its ledgers' records (parsed once
// per ConfigMap resourceVersion) and its problem set.
func (r *EvaluationReconciler) snapshot(ctx context.Context, e *repotv1.RepotEvaluation) (*world, error) {
	w := &world{Now: r.opts.Clock.Now()}
	owned := []client.ListOption{client.InNamespace(e.Namespace), client.MatchingFields{ownerKey: e.Name}}
	lists := []struct {
		list client.ObjectList
		name string
	}{
		{&appsv1.DeploymentList{}, "deployments"},
		{&corev1.ServiceList{}, "services"},
		{&batchv1.JobList{}, "jobs"},
		{&corev1.ConfigMapList{}, "configmaps"},
		{&corev1.ServiceAccountList{}, "serviceaccounts"},
		{&rbacv1.RoleList{}, "roles"},
		{&rbacv1.RoleBindingList{}, "rolebindings"},
		{&networkingv1.NetworkPolicyList{}, "networkpolicies"},
	}
	for _, l := range lists {
		if err := r.client.List(ctx, l.list, owned...); err != nil {
			return nil, fmt.Errorf("list owned %s: %w", l.name, err)
		}
	}
	w.Deployments = lists[0].list.(*appsv1.DeploymentList).Items
	w.Services = lists[1].list.(*corev1.ServiceList).Items
	w.Jobs = lists[2].list.(*batchv1.JobList).Items
	for _, cm := range lists[3].list.(*corev1.ConfigMapList).Items {
		if cm.Labels[LabelComponent] == ComponentLedger {
			w.Ledgers = append(w.Ledgers, cm)
		}
	}
	w.ServiceAccounts = lists[4].list.(*corev1.ServiceAccountList).Items
	w.Roles = lists[5].list.(*rbacv1.RoleList).Items
	w.RoleBindings = lists[6].list.(*rbacv1.RoleBindingList).Items
	w.NetworkPolicies = lists[7].list.(*networkingv1.NetworkPolicyList).Items

	var pods corev1.PodList
	if err := r.client.List(ctx, &pods, client.InNamespace(e.Namespace),
		client.MatchingLabels{LabelEvaluation: e.Name, LabelComponent: ComponentServer}); err != nil {
		return nil, fmt.Errorf("list server pods: %w", err)
	}
	w.ServerPods = pods.Items

	w.Records, w.LedgerProblems = r.ledgers.read(namespacedName(e), w.Ledgers)
	if n := len(w.LedgerProblems); n > 0 {
		log.FromContext(ctx).Info("skipping ledger lines that are not records", "count", n, "first", w.LedgerProblems[0].String())
	}

	w.Problems = problemsFromSpec(e)
	if p := e.Spec.Problems; p != nil && p.ConfigMap != nil {
		var cm corev1.ConfigMap
		err := r.apiReader.Get(ctx, types.NamespacedName{Namespace: e.Namespace, Name: p.ConfigMap.Name}, &cm)
		switch {
		case apierrors.IsNotFound(err):
			w.Problems = problemsFromConfigMap(p.ConfigMap, nil)
		case err != nil:
			return nil, fmt.Errorf("get problems ConfigMap %s: %w", p.ConfigMap.Name, err)
		default:
			w.Problems = problemsFromConfigMap(p.ConfigMap, &cm)
		}
	}
	return w, nil
}
