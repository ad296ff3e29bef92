//go:build e2e

package e2e

import (
	"context"
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/types"
	"repot.dev/repot-operator/controllers/build"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// children lists what is left of an evaluation: objects that carry its label
// or an owner reference to it.
func children(ctx context.Context, c client.Client, eval string, uid types.UID) []string {
	lists := []client.ObjectList{
		&corev1.PodList{}, &corev1.ServiceList{}, &corev1.ConfigMapList{}, &corev1.ServiceAccountList{},
		&appsv1.DeploymentList{}, &appsv1.ReplicaSetList{}, &batchv1.JobList{},
		&rbacv1.RoleList{}, &rbacv1.RoleBindingList{}, &networkingv1.NetworkPolicyList{},
	}
	var left []string
	for _, l := range lists {
		if err := c.List(ctx, l, client.InNamespace(ns)); err != nil {
			left = append(left, fmt.Sprintf("listing %T: %v", l, err))
			continue
		}
		items, err := meta.ExtractList(l)
		if err != nil {
			left = append(left, err.Error())
			continue
		}
		for _, item := range items {
			o, err := meta.Accessor(item)
			if err != nil {
				continue
			}
			owned := o.GetLabels()[build.LabelEvaluation] == eval
			for _, r := range o.GetOwnerReferences() {
				if r.UID == uid {
					owned = true
				}
			}
			if owned {
				left = append(left, fmt.Sprintf("%T %s", l, o.GetName()))
			}
		}
	}
	return left
}
