package v1alpha1

import (
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"repot.dev/repot-operator/contract"
)

// enumOf returns the values of the +kubebuilder:validation:Enum marker right
// above "type NAME string" in file: what the CRD's schema admits.
func enumOf(t *testing.T, file, name string) []string {
	t.Helper()
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^// \+kubebuilder:validation:Enum=(.*)\ntype ` + name + ` string$`).FindSubmatch(b)
	if m == nil {
		t.Fatalf("%s: no Enum marker above type %s", file, name)
	}
	return strings.Split(string(m[1]), ";")
}

func strs[T ~string](vs []T) []string {
	out := make([]string, len(vs))
	for i, v := range vs {
		out[i] = string(v)
	}
	return out
}

// TestMethodsMatchTheContract: the API admits exactly the methods the
// engine runs (contract.Methods), in the same order, with the same
// defaults; likewise the Derail-550 conditions.
func TestMethodsMatchTheContract(t *testing.T) {
	for _, tc := range []struct {
		what      string
		api, want []string
	}{
		{"spec.methods enum", enumOf(t, "spec_types.go", "Method"), contract.Methods},
		{"Method constants", strs([]Method{MethodPoT, MethodPoTRetry, MethodRePoT, MethodAdaptive, MethodRePoTNoPrefix, MethodRePoTRestart, MethodVRR, MethodCoT, MethodSelfConsistency, MethodVEX}), contract.Methods},
		{"DefaultMethods", strs(DefaultMethods()), contract.DefaultMethods},
		{"spec.derail.conditions enum", enumOf(t, "derail_types.go", "DerailCondition"), contract.DerailConditions},
		{"AllDerailConditions", strs(AllDerailConditions()), contract.DerailConditions},
		{"DefaultDerailConditions", strs(DefaultDerailConditions()), contract.DefaultDerailConditions},
	} {
		if diff := cmp.Diff(tc.want, tc.api); diff != "" {
			t.Errorf("%s differs from the contract (-contract +api):\n%s", tc.what, diff)
		}
	}
}
