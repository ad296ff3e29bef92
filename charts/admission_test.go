package charts

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"
)

// shippedOperator is the operator's ServiceAccount as config/admission
// names it (the kustomize installs'); the chart's is its release's.
const shippedOperator = "system:serviceaccount:repot-system:repot-operator-controller-manager"

// configPolicies reads config/admission/NAME.yaml as the chart would
// render it for release repot-operator in repot-system: names prefixed,
// the operator the release's ServiceAccount.
func configPolicies(t *testing.T, name string) map[string]*unstructured.Unstructured {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "config", "admission", name+".yaml"))
	if err != nil {
		t.Fatal(err)
	}
	text := strings.ReplaceAll(string(b), shippedOperator, "system:serviceaccount:repot-system:repot-operator")
	out := map[string]*unstructured.Unstructured{}
	for _, doc := range strings.Split(text, "\n---\n") {
		u := &unstructured.Unstructured{}
		if err := yaml.Unmarshal([]byte(doc), &u.Object); err != nil {
			t.Fatal(err)
		}
		u.SetName("repot-operator-" + u.GetName())
		if u.GetKind() == "ValidatingAdmissionPolicyBinding" {
			p, _, _ := unstructured.NestedString(u.Object, "spec", "policyName")
			if err := unstructured.SetNestedField(u.Object, "repot-operator-"+p, "spec", "policyName"); err != nil {
				t.Fatal(err)
			}
		}
		out[u.GetKind()+"/"+u.GetName()] = u
	}
	return out
}

// TestChartAdmissionPoliciesMatchConfig: the chart installs the policies
// of config/admission (which the envtest suite enforces), renamed for the
// release, and leaves out the trust-remote-code policy when the platform
// allows the flag, and all of them when disabled.
func TestChartAdmissionPoliciesMatchConfig(t *testing.T) {
	for _, tc := range []struct {
		name   string
		values map[string]any
		want   []string
	}{
		{"defaults", nil, []string{"references", "operator-writes", "trust-remote-code"}},
		{"trust-remote-code allowed", map[string]any{"vllm": map[string]any{"allowTrustRemoteCode": true}}, []string{"references", "operator-writes"}},
		{"disabled", map[string]any{"admissionPolicies": map[string]any{"enabled": false}}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			objs := render(t, tc.values)
			want := map[string]*unstructured.Unstructured{}
			for _, n := range tc.want {
				for k, u := range configPolicies(t, n) {
					want[k] = u
				}
			}
			got := map[string]*unstructured.Unstructured{}
			for k, u := range objs {
				if strings.HasPrefix(k, "ValidatingAdmissionPolicy") {
					got[k] = u
				}
			}
			if diff := cmp.Diff(keysOf(want), keysOf(got)); diff != "" {
				t.Fatalf("rendered policies (-want +got):\n%s", diff)
			}
			for k, w := range want {
				if diff := cmp.Diff(w.Object["spec"], got[k].Object["spec"]); diff != "" {
					t.Errorf("%s differs from config/admission (-config +chart):\n%s", k, diff)
				}
			}
		})
	}
}

func keysOf(m map[string]*unstructured.Unstructured) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}
