package split

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	rbacv1 "k8s.io/api/rbac/v1"
)

func TestRules(t *testing.T) {
	rule := func(group string, verbs []string, resources ...string) rbacv1.PolicyRule {
		return rbacv1.PolicyRule{APIGroups: []string{group}, Resources: resources, Verbs: verbs}
	}
	rw := []string{"create", "get", "list", "patch", "watch"}
	ro := []string{"get", "list", "watch"}
	cases := []struct {
		name                string
		rules               []rbacv1.PolicyRule
		namespaced, cluster []rbacv1.PolicyRule
		err                 string
	}{{
		name:       "namespaced writes stay namespaced",
		rules:      []rbacv1.PolicyRule{rule("", rw, "configmaps", "pods/log")},
		namespaced: []rbacv1.PolicyRule{rule("", rw, "configmaps", "pods/log")},
	}, {
		name:       "a rule over both scopes is cut in two",
		rules:      []rbacv1.PolicyRule{rule("kueue.x-k8s.io", ro, "resourceflavors", "workloads")},
		namespaced: []rbacv1.PolicyRule{rule("kueue.x-k8s.io", ro, "workloads")},
		cluster:    []rbacv1.PolicyRule{rule("kueue.x-k8s.io", ro, "resourceflavors")},
	}, {
		name:  "a cluster-wide write is refused",
		rules: []rbacv1.PolicyRule{rule("", rw, "namespaces")},
		err:   `grant "create" on the cluster-scoped [namespaces]`,
	}, {
		name:  "non-resource URLs are refused",
		rules: []rbacv1.PolicyRule{{NonResourceURLs: []string{"/metrics"}, Verbs: []string{"get"}}},
		err:   "non-resource URLs",
	}}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ns, cl, err := Rules(tc.rules)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("error %v, want one saying %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.namespaced, ns); diff != "" {
				t.Errorf("namespaced (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.cluster, cl); diff != "" {
				t.Errorf("cluster (-want +got):\n%s", diff)
			}
		})
	}
}
