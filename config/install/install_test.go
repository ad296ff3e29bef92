// Package install tests the two kustomize installs of the operator, rendered
// with kustomize's library as `kubectl apply -k` renders them.
package install

import (
	"bytes"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	appsv1 "k8s.io/api/apps/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"sigs.k8s.io/kustomize/api/krusty"
	"sigs.k8s.io/kustomize/kyaml/filesys"
	"sigs.k8s.io/yaml"
)

// build renders a kustomization with kustomize's own library, as
// `kubectl apply -k` does.
func build(t *testing.T, dir string) map[string][]byte {
	t.Helper()
	k := krusty.MakeKustomizer(krusty.MakeDefaultOptions())
	m, err := k.Run(filesys.MakeFsOnDisk(), dir)
	if err != nil {
		t.Fatalf("kustomize build %s: %v", dir, err)
	}
	out := map[string][]byte{}
	for _, r := range m.Resources() {
		y, err := r.AsYAML()
		if err != nil {
			t.Fatal(err)
		}
		out[r.GetKind()+"/"+r.GetName()] = y
	}
	return out
}

// grants are a set of group/resource/verb.
func grants(rules []rbacv1.PolicyRule) map[string]bool {
	out := map[string]bool{}
	for _, r := range rules {
		for _, g := range r.APIGroups {
			for _, res := range r.Resources {
				for _, v := range r.Verbs {
					out[g+"/"+res+"/"+v] = true
				}
			}
		}
	}
	return out
}

func keys(m map[string]bool) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// TestNamespacedInstallHoldsNoClusterWrite: config/namespaced grants the
// manager exactly what the generated ClusterRole grants, with every write
// in a Role of the namespace it watches (the one it runs in) and only reads
// cluster-wide; and its manager is told to watch that namespace.
func TestNamespacedInstallHoldsNoClusterWrite(t *testing.T) {
	var want rbacv1.ClusterRole
	data, err := os.ReadFile("../rbac/role.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if err := yaml.Unmarshal(bytes.TrimPrefix(data, []byte("---\n")), &want); err != nil {
		t.Fatal(err)
	}
	objs := build(t, "../namespaced")
	const ns, sa = "repot-system", "repot-operator-controller-manager"
	got := map[string]bool{}
	for key, y := range objs {
		switch {
		case strings.HasPrefix(key, "ClusterRoleBinding/"):
			var b rbacv1.ClusterRoleBinding
			mustUnmarshal(t, y, &b)
			if b.Subjects[0].Name != sa {
				continue
			}
			var cr rbacv1.ClusterRole
			mustUnmarshal(t, objs["ClusterRole/"+b.RoleRef.Name], &cr)
			if b.RoleRef.Name == "repot-operator-metrics-auth-role" {
				// The metrics authentication asks the API server (reviews
				// are not stored objects), and nothing more.
				reviews := []rbacv1.PolicyRule{
					{APIGroups: []string{"authentication.k8s.io"}, Resources: []string{"tokenreviews"}, Verbs: []string{"create"}},
					{APIGroups: []string{"authorization.k8s.io"}, Resources: []string{"subjectaccessreviews"}, Verbs: []string{"create"}},
				}
				if diff := cmp.Diff(reviews, cr.Rules); diff != "" {
					t.Errorf("%s: (-want +got):\n%s", key, diff)
				}
				continue
			}
			for _, r := range cr.Rules {
				for _, v := range r.Verbs {
					if v != "get" && v != "list" && v != "watch" {
						t.Errorf("%s gives the manager %q on %v cluster-wide", key, v, r.Resources)
					}
				}
			}
			for g := range grants(cr.Rules) {
				got[g] = true
			}
		case strings.HasPrefix(key, "RoleBinding/"):
			var b rbacv1.RoleBinding
			mustUnmarshal(t, y, &b)
			if b.Subjects[0].Name != sa || b.RoleRef.Name == "repot-operator-leader-election-role" {
				continue
			}
			if b.Name == "repot-operator-apiserver-endpoints-reader" {
				continue // checked below
			}
			if b.Namespace != ns || b.Subjects[0].Namespace != ns {
				t.Errorf("%s in namespace %q for %s/%s, want %s", key, b.Namespace, b.Subjects[0].Namespace, b.Subjects[0].Name, ns)
			}
			var r rbacv1.Role
			mustUnmarshal(t, objs["Role/"+b.RoleRef.Name], &r)
			for g := range grants(r.Rules) {
				got[g] = true
			}
		}
	}
	if diff := cmp.Diff(keys(grants(want.Rules)), keys(got)); diff != "" {
		t.Errorf("what the namespaced install grants the manager, against config/rbac/role.yaml (-want +got):\n%s", diff)
	}
	// In default it may get the kubernetes EndpointSlice, and nothing
	// else: the runner NetworkPolicy names the API server from it.
	var rb rbacv1.RoleBinding
	mustUnmarshal(t, objs["RoleBinding/repot-operator-apiserver-endpoints-reader"], &rb)
	var reader rbacv1.Role
	mustUnmarshal(t, objs["Role/"+rb.RoleRef.Name], &reader)
	wantReader := []rbacv1.PolicyRule{{APIGroups: []string{"discovery.k8s.io"}, Resources: []string{"endpointslices"}, ResourceNames: []string{"kubernetes"}, Verbs: []string{"get"}}}
	if rb.Namespace != "default" || reader.Namespace != "default" || rb.RoleRef.Kind != "Role" ||
		!cmp.Equal(rb.Subjects, []rbacv1.Subject{{Kind: "ServiceAccount", Name: sa, Namespace: ns}}) || !cmp.Equal(reader.Rules, wantReader) {
		t.Errorf("the API server endpoints reader: binding %s/%s %+v, role %s/%s %+v", rb.Namespace, rb.Name, rb.Subjects, reader.Namespace, reader.Name, reader.Rules)
	}
	var dep appsv1.Deployment
	mustUnmarshal(t, objs["Deployment/repot-operator-controller-manager"], &dep)
	if args := dep.Spec.Template.Spec.Containers[0].Args; !slices.Contains(args, "--namespace="+ns) {
		t.Errorf("manager args %v: want --namespace=%s, the namespace its Role is in", args, ns)
	}
}

// TestDefaultInstallBuilds: the cluster-wide install renders and binds the
// generated ClusterRole.
func TestDefaultInstallBuilds(t *testing.T) {
	objs := build(t, "../default")
	var b rbacv1.ClusterRoleBinding
	mustUnmarshal(t, objs["ClusterRoleBinding/repot-operator-manager-rolebinding"], &b)
	if b.RoleRef.Name != "repot-operator-manager-role" {
		t.Errorf("the manager's ClusterRoleBinding binds %s", b.RoleRef.Name)
	}
}

func mustUnmarshal(t *testing.T, y []byte, into any) {
	t.Helper()
	if y == nil {
		t.Fatal("object not rendered")
	}
	if err := yaml.Unmarshal(y, into); err != nil {
		t.Fatal(err)
	}
}
