// Package charts holds the tests of the Helm charts: they lint and render
// charts/repot-operator with the Helm Go library (no helm binary needed) and
// check that the CRD and RBAC copied by `make manifests` are in sync.
package charts

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"helm.sh/helm/v4/pkg/chart/common"
	"helm.sh/helm/v4/pkg/chart/common/util"
	"helm.sh/helm/v4/pkg/chart/v2/lint"
	"helm.sh/helm/v4/pkg/chart/v2/lint/support"
	"helm.sh/helm/v4/pkg/chart/v2/loader"
	"helm.sh/helm/v4/pkg/engine"
	appsv1 "k8s.io/api/apps/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/yaml"

	"repot.dev/repot-operator/cmd/repot"
)

const chartDir = "repot-operator"

func TestChartLints(t *testing.T) {
	for _, tc := range []struct {
		name   string
		values map[string]any
	}{
		{"defaults", nil},
		{"everything on", map[string]any{"metrics": map[string]any{"serviceMonitor": map[string]any{"enabled": true}}, "watchNamespace": "team-a"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			l := lint.RunAll(chartDir, tc.values, "repot-system")
			for _, m := range l.Messages {
				// helm lint --strict fails on warnings too.
				if m.Severity > support.InfoSev {
					t.Errorf("lint: %s", m)
				}
			}
		})
	}
}

func TestChartRejectsBadValues(t *testing.T) {
	l := lint.RunAll(chartDir, map[string]any{"image": map[string]any{"pullPolicy": "Sometimes"}}, "repot-system")
	if l.HighestSeverity < support.ErrorSev {
		t.Errorf("lint accepted image.pullPolicy=Sometimes; values.schema.json should reject it")
	}
}

// render renders the chart with values and returns the objects by "Kind/name".
func render(t *testing.T, values map[string]any) map[string]*unstructured.Unstructured {
	t.Helper()
	chrt, err := loader.Load(chartDir)
	if err != nil {
		t.Fatal(err)
	}
	vals, err := util.ToRenderValues(chrt, values, common.ReleaseOptions{Name: "repot-operator", Namespace: "repot-system", IsInstall: true}, nil)
	if err != nil {
		t.Fatal(err)
	}
	files, err := engine.Render(chrt, vals)
	if err != nil {
		t.Fatal(err)
	}
	// Decode strictly with the built-in types, so a misspelt field fails.
	scheme := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	strict := serializer.NewCodecFactory(scheme, serializer.EnableStrict).UniversalDeserializer()
	objs := map[string]*unstructured.Unstructured{}
	names := make([]string, 0, len(files))
	for name := range files {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		if !strings.HasSuffix(name, ".yaml") {
			continue
		}
		for _, doc := range strings.Split(files[name], "\n---") {
			if strings.TrimSpace(doc) == "" {
				continue
			}
			u := &unstructured.Unstructured{}
			if err := yaml.Unmarshal([]byte(doc), &u.Object); err != nil {
				t.Fatalf("%s: %v\n%s", name, err, doc)
			}
			if len(u.Object) == 0 {
				continue
			}
			if scheme.Recognizes(u.GroupVersionKind()) {
				if _, _, err := strict.Decode([]byte(doc), nil, nil); err != nil {
					t.Errorf("%s: %v", name, err)
				}
			}
			key := u.GetKind() + "/" + u.GetName()
			if _, dup := objs[key]; dup {
				t.Errorf("%s rendered twice", key)
			}
			objs[key] = u
		}
	}
	return objs
}

func keys(m map[string]*unstructured.Unstructured) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func TestChartRendersDefaults(t *testing.T) {
	objs := render(t, nil)
	want := []string{
		// The default install is namespaced: the manager's rules in a Role
		// of the release's namespace, only reads cluster-wide.
		"ClusterRole/repot-operator-editor", "ClusterRole/repot-operator-manager-cluster-read",
		"ClusterRole/repot-operator-metrics-auth", "ClusterRole/repot-operator-metrics-reader", "ClusterRole/repot-operator-viewer",
		"ClusterRoleBinding/repot-operator-manager-cluster-read", "ClusterRoleBinding/repot-operator-metrics-auth", "Deployment/repot-operator",
		"NetworkPolicy/repot-operator-manager",
		"Role/repot-operator-apiserver-endpoints-reader", "Role/repot-operator-leader-election", "Role/repot-operator-manager",
		"RoleBinding/repot-operator-apiserver-endpoints-reader", "RoleBinding/repot-operator-leader-election", "RoleBinding/repot-operator-manager",
		"Service/repot-operator-metrics", "ServiceAccount/repot-operator",
		"ValidatingAdmissionPolicy/repot-operator-operator-writes",
		"ValidatingAdmissionPolicy/repot-operator-references",
		"ValidatingAdmissionPolicy/repot-operator-trust-remote-code",
		"ValidatingAdmissionPolicyBinding/repot-operator-operator-writes",
		"ValidatingAdmissionPolicyBinding/repot-operator-references",
		"ValidatingAdmissionPolicyBinding/repot-operator-trust-remote-code",
	}
	if diff := cmp.Diff(want, keys(objs)); diff != "" {
		t.Fatalf("rendered objects (-want +got):\n%s", diff)
	}
	var dep appsv1.Deployment
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(objs["Deployment/repot-operator"].Object, &dep); err != nil {
		t.Fatal(err)
	}
	c := dep.Spec.Template.Spec.Containers[0]
	if c.Image != "repot-operator:0.1.0" {
		t.Errorf("image %q; want repot-operator:<appVersion>", c.Image)
	}
	wantArgs := []string{"manager", "--leader-elect=true", "--metrics-bind-address=:8443", "--health-probe-bind-address=:8081",
		"--runner-image=repot-operator:0.1.0", "--max-concurrent-reconciles=4", "--namespace=repot-system"}
	if diff := cmp.Diff(wantArgs, c.Args); diff != "" {
		t.Errorf("manager args (-want +got):\n%s", diff)
	}
	if err := repot.ParseArgs(c.Args); err != nil {
		t.Errorf("manager args %v: %v", c.Args, err)
	}
	if c.SecurityContext == nil || c.SecurityContext.ReadOnlyRootFilesystem == nil || !*c.SecurityContext.ReadOnlyRootFilesystem {
		t.Errorf("manager container must have a read-only root filesystem")
	}
	if c.Resources.Requests.Memory().String() != "128Mi" {
		t.Errorf("memory request %s; want the values' 128Mi", c.Resources.Requests.Memory())
	}
}

func TestChartRendersOverrides(t *testing.T) {
	objs := render(t, map[string]any{
		"image":          map[string]any{"repository": "ghcr.io/x/repot", "tag": "v9"},
		"runnerImage":    "ghcr.io/x/runner:v9",
		"leaderElection": map[string]any{"enabled": false},
		"metrics":        map[string]any{"enabled": true, "port": 9090, "serviceMonitor": map[string]any{"enabled": true, "labels": map[string]any{"release": "prom"}}},
		"watchNamespace": "team-a",
		"apiserverCIDRs": []any{"10.0.0.1/32", "10.0.0.2/32"},
		"userRoles":      false,
		"artifacts": map[string]any{"s3": map[string]any{
			"endpoint": "minio.storage.svc:9000", "bucket": "repot-traces", "prefix": "team-a",
			"credentialsSecret": "repot-s3", "insecure": true,
		}},
	})
	for _, gone := range []string{"Role/repot-operator-leader-election", "ClusterRole/repot-operator-editor"} {
		if _, ok := objs[gone]; ok {
			t.Errorf("%s rendered although disabled", gone)
		}
	}
	sm, ok := objs["ServiceMonitor/repot-operator"]
	if !ok {
		t.Fatalf("no ServiceMonitor; got %v", keys(objs))
	}
	if sm.GetLabels()["release"] != "prom" {
		t.Errorf("ServiceMonitor labels %v lack release=prom", sm.GetLabels())
	}
	var dep appsv1.Deployment
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(objs["Deployment/repot-operator"].Object, &dep); err != nil {
		t.Fatal(err)
	}
	args := dep.Spec.Template.Spec.Containers[0].Args
	for _, a := range []string{"--leader-elect=false", "--metrics-bind-address=:9090", "--runner-image=ghcr.io/x/runner:v9",
		"--namespace=team-a", "--apiserver-cidrs=10.0.0.1/32,10.0.0.2/32",
		"--artifacts-s3-endpoint=minio.storage.svc:9000", "--artifacts-s3-bucket=repot-traces", "--artifacts-s3-prefix=team-a",
		"--artifacts-s3-credentials-secret=repot-s3", "--artifacts-s3-insecure=true"} {
		if !slices.Contains(args, a) {
			t.Errorf("args %v lack %s", args, a)
		}
	}
	if err := repot.ParseArgs(args); err != nil {
		t.Errorf("manager args %v: %v", args, err)
	}
	if img := dep.Spec.Template.Spec.Containers[0].Image; img != "ghcr.io/x/repot:v9" {
		t.Errorf("image %q", img)
	}
}

// The chart's CRD and manager rules are copies made by `make manifests`.
func TestChartInSyncWithConfig(t *testing.T) {
	for chartFile, configFile := range map[string]string{
		"repot-operator/crds/repot.dev_repotevaluations.yaml": "../config/crd/bases/repot.dev_repotevaluations.yaml",
		"repot-operator/crds/repot.dev_repotschedules.yaml":   "../config/crd/bases/repot.dev_repotschedules.yaml",
		"repot-operator/files/manager-role.yaml":              "../config/rbac/role.yaml",
	} {
		a, err := os.ReadFile(filepath.FromSlash(chartFile))
		if err != nil {
			t.Fatal(err)
		}
		b, err := os.ReadFile(filepath.FromSlash(configFile))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(a, b) {
			t.Errorf("charts/%s differs from config/%s: run make manifests", chartFile, strings.TrimPrefix(configFile, "../config/"))
		}
	}
	var role rbacv1.ClusterRole
	data, _ := os.ReadFile("../config/rbac/role.yaml")
	if err := yaml.Unmarshal(bytes.TrimPrefix(data, []byte("---\n")), &role); err != nil {
		t.Fatal(err)
	}
	cr, ok := render(t, map[string]any{"clusterWide": true})["ClusterRole/repot-operator-manager"]
	if !ok {
		t.Fatal("the chart renders no ClusterRole/repot-operator-manager")
	}
	var rendered rbacv1.ClusterRole
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(cr.Object, &rendered); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(role.Rules, rendered.Rules); diff != "" {
		t.Errorf("chart manager rules differ from config/rbac/role.yaml (-config +chart):\n%s", diff)
	}
}

// With watchNamespace the operator holds no cluster-wide write: every rule
// of config/rbac/role.yaml is granted, the namespaced ones by a Role in the
// watched namespace, and what a ClusterRoleBinding gives the operator's
// ServiceAccount is read-only.
func TestChartWatchNamespaceHoldsNoClusterWrite(t *testing.T) {
	var want rbacv1.ClusterRole
	data, err := os.ReadFile("../config/rbac/role.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if err := yaml.Unmarshal(bytes.TrimPrefix(data, []byte("---\n")), &want); err != nil {
		t.Fatal(err)
	}
	objs := render(t, map[string]any{"watchNamespace": "team-a"})
	const sa = "repot-operator"
	granted := map[string]bool{} // group/resource/verb
	grant := func(rules []rbacv1.PolicyRule) {
		for _, r := range rules {
			for _, g := range r.APIGroups {
				for _, res := range r.Resources {
					for _, v := range r.Verbs {
						granted[g+"/"+res+"/"+v] = true
					}
				}
			}
		}
	}
	for key, o := range objs {
		switch o.GetKind() {
		case "ClusterRoleBinding":
			var b rbacv1.ClusterRoleBinding
			if err := runtime.DefaultUnstructuredConverter.FromUnstructured(o.Object, &b); err != nil {
				t.Fatal(err)
			}
			if !bindsSA(b.Subjects, sa) {
				continue
			}
			cr, ok := objs["ClusterRole/"+b.RoleRef.Name]
			if !ok {
				t.Fatalf("%s binds ClusterRole %s, which the chart does not render", key, b.RoleRef.Name)
			}
			if b.RoleRef.Name == "repot-operator-metrics-auth" {
				checkReviewsOnly(t, key, cr)
				continue
			}
			var role rbacv1.ClusterRole
			if err := runtime.DefaultUnstructuredConverter.FromUnstructured(cr.Object, &role); err != nil {
				t.Fatal(err)
			}
			for _, r := range role.Rules {
				for _, v := range r.Verbs {
					if v != "get" && v != "list" && v != "watch" {
						t.Errorf("%s gives the operator %q on %v cluster-wide", key, v, r.Resources)
					}
				}
			}
			grant(role.Rules)
		case "RoleBinding":
			var b rbacv1.RoleBinding
			if err := runtime.DefaultUnstructuredConverter.FromUnstructured(o.Object, &b); err != nil {
				t.Fatal(err)
			}
			if !bindsSA(b.Subjects, sa) || b.RoleRef.Kind != "Role" {
				continue
			}
			ro, ok := objs["Role/"+b.RoleRef.Name]
			if !ok {
				t.Fatalf("%s binds Role %s, which the chart does not render", key, b.RoleRef.Name)
			}
			var role rbacv1.Role
			if err := runtime.DefaultUnstructuredConverter.FromUnstructured(ro.Object, &role); err != nil {
				t.Fatal(err)
			}
			if role.Namespace == "team-a" {
				if b.Namespace != "team-a" {
					t.Errorf("%s is in namespace %q, its Role in team-a", key, b.Namespace)
				}
				grant(role.Rules)
			}
		}
	}
	for _, r := range want.Rules {
		for _, g := range r.APIGroups {
			for _, res := range r.Resources {
				for _, v := range r.Verbs {
					if !granted[g+"/"+res+"/"+v] {
						t.Errorf("config/rbac/role.yaml grants %s on %s/%s; the watchNamespace install does not", v, g, res)
					}
				}
			}
		}
	}
}

func bindsSA(subjects []rbacv1.Subject, name string) bool {
	for _, s := range subjects {
		if s.Kind == "ServiceAccount" && s.Name == name && s.Namespace == "repot-system" {
			return true
		}
	}
	return false
}

// TestChartScope: namespaced by default (the release's namespace, or
// watchNamespace); clusterWide=true watches every namespace with one
// ClusterRole; both at once is refused.
func TestChartScope(t *testing.T) {
	for _, tc := range []struct {
		name       string
		values     map[string]any
		wantArg    string // the --namespace argument, "" for none
		wantObject string
	}{
		{"default", nil, "--namespace=repot-system", "Role/repot-operator-manager"},
		{"watchNamespace", map[string]any{"watchNamespace": "team-a"}, "--namespace=team-a", "Role/repot-operator-manager"},
		{"clusterWide", map[string]any{"clusterWide": true}, "", "ClusterRoleBinding/repot-operator-manager"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			objs := render(t, tc.values)
			if _, ok := objs[tc.wantObject]; !ok {
				t.Errorf("no %s; got %v", tc.wantObject, keys(objs))
			}
			var dep appsv1.Deployment
			if err := runtime.DefaultUnstructuredConverter.FromUnstructured(objs["Deployment/repot-operator"].Object, &dep); err != nil {
				t.Fatal(err)
			}
			var got string
			for _, a := range dep.Spec.Template.Spec.Containers[0].Args {
				if strings.HasPrefix(a, "--namespace=") {
					got = a
				}
			}
			if got != tc.wantArg {
				t.Errorf("namespace argument %q; want %q", got, tc.wantArg)
			}
		})
	}
	chrt, err := loader.Load(chartDir)
	if err != nil {
		t.Fatal(err)
	}
	vals, err := util.ToRenderValues(chrt, map[string]any{"clusterWide": true, "watchNamespace": "team-a"}, common.ReleaseOptions{Name: "repot-operator", Namespace: "repot-system", IsInstall: true}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := engine.Render(chrt, vals); err == nil || !strings.Contains(err.Error(), "contradict") {
		t.Errorf("rendering clusterWide=true with watchNamespace=team-a: %v; want the chart to refuse it", err)
	}
}

// reviews are what the metrics authentication may create: questions to
// the API server, not stored objects.
var reviews = []rbacv1.PolicyRule{
	{APIGroups: []string{"authentication.k8s.io"}, Resources: []string{"tokenreviews"}, Verbs: []string{"create"}},
	{APIGroups: []string{"authorization.k8s.io"}, Resources: []string{"subjectaccessreviews"}, Verbs: []string{"create"}},
}

func checkReviewsOnly(t *testing.T, key string, cr *unstructured.Unstructured) {
	t.Helper()
	var role rbacv1.ClusterRole
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(cr.Object, &role); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(reviews, role.Rules); diff != "" {
		t.Errorf("%s grants more than TokenReviews and SubjectAccessReviews (-want +got):\n%s", key, diff)
	}
}

// TestChartImageDigest: image.digest pins the operator's image (and the
// runners', which default to it) as repository@digest; the schema refuses
// anything but a sha256 digest.
func TestChartImageDigest(t *testing.T) {
	const digest = "sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
	objs := render(t, map[string]any{"image": map[string]any{"repository": "ghcr.io/x/repot", "tag": "v9", "digest": digest}})
	var dep appsv1.Deployment
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(objs["Deployment/repot-operator"].Object, &dep); err != nil {
		t.Fatal(err)
	}
	c := dep.Spec.Template.Spec.Containers[0]
	want := "ghcr.io/x/repot@" + digest
	if c.Image != want {
		t.Errorf("image %q, want %q", c.Image, want)
	}
	if !slices.Contains(c.Args, "--runner-image="+want) {
		t.Errorf("args %v lack --runner-image=%s", c.Args, want)
	}
	for _, bad := range []string{"0123", "sha256:XYZ", "latest"} {
		l := lint.RunAll(chartDir, map[string]any{"image": map[string]any{"repository": "r", "digest": bad}}, "repot-system")
		if l.HighestSeverity < support.ErrorSev {
			t.Errorf("lint accepted image.digest=%q; values.schema.json should reject it", bad)
		}
	}
}
