// Package split divides RBAC rules between a namespaced Role and a
// cluster-wide ClusterRole, for an operator that watches one namespace.
package split

import (
	"fmt"
	"slices"
	"strings"

	rbacv1 "k8s.io/api/rbac/v1"
)

// ClusterScoped are the group/resource of the cluster-scoped kinds a rule
// of the manager may name ("" is the core group). The chart's
// templates/manager-rbac.yaml keeps the same list.
var ClusterScoped = []string{
	"kueue.x-k8s.io/resourceflavors", "kueue.x-k8s.io/workloadpriorityclasses", "scheduling.k8s.io/priorityclasses",
	"/nodes", "/namespaces", "/persistentvolumes", "apiextensions.k8s.io/customresourcedefinitions", "storage.k8s.io/storageclasses",
}

// readVerbs are the verbs a cluster-wide rule may keep.
var readVerbs = []string{"get", "list", "watch"}

// Rules splits rules: every resource of a rule that is cluster-scoped goes
// to cluster (reads only: a write is an error), the rest to namespaced.
// Subresources ("pods/log") follow their resource.
func Rules(rules []rbacv1.PolicyRule) (namespaced, cluster []rbacv1.PolicyRule, err error) {
	for _, r := range rules {
		if len(r.NonResourceURLs) > 0 {
			return nil, nil, fmt.Errorf("rule %v names non-resource URLs, which only a ClusterRole can grant", r.NonResourceURLs)
		}
		var inCluster, inNamespace []string
		for _, res := range r.Resources {
			base, _, _ := strings.Cut(res, "/")
			scoped := slices.ContainsFunc(r.APIGroups, func(g string) bool { return slices.Contains(ClusterScoped, g+"/"+base) })
			if scoped {
				inCluster = append(inCluster, res)
			} else {
				inNamespace = append(inNamespace, res)
			}
		}
		if len(inCluster) > 0 {
			for _, v := range r.Verbs {
				if !slices.Contains(readVerbs, v) {
					return nil, nil, fmt.Errorf("the rules grant %q on the cluster-scoped %v: an install that watches one namespace holds no cluster-wide write", v, inCluster)
				}
			}
			c := r
			c.Resources = inCluster
			cluster = append(cluster, c)
		}
		if len(inNamespace) > 0 {
			n := r
			n.Resources = inNamespace
			namespaced = append(namespaced, n)
		}
	}
	return namespaced, cluster, nil
}
