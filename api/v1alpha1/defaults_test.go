package v1alpha1_test

import (
	"sort"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	v1alpha1 "repot.dev/repot-operator/api/v1alpha1"
	"repot.dev/repot-operator/modelserver/simserver"
)

func TestModelKind(t *testing.T) {
	cases := []struct {
		name string
		m    v1alpha1.ModelSpec
		want v1alpha1.ModelKind
	}{
		{"vllm", v1alpha1.ModelSpec{VLLM: &v1alpha1.VLLMModel{}}, v1alpha1.ModelKindVLLM},
		{"endpoint", v1alpha1.ModelSpec{Endpoint: &v1alpha1.EndpointModel{}}, v1alpha1.ModelKindEndpoint},
		{"simulated", v1alpha1.ModelSpec{Simulated: &v1alpha1.SimulatedModel{}}, v1alpha1.ModelKindSimulated},
		{"none", v1alpha1.ModelSpec{}, ""},
		{"two", v1alpha1.ModelSpec{VLLM: &v1alpha1.VLLMModel{}, Simulated: &v1alpha1.SimulatedModel{}}, ""},
	}
	for _, tc := range cases {
		if got := tc.m.Kind(); got != tc.want {
			t.Errorf("%s: Kind() = %q, want %q", tc.name, got, tc.want)
		}
	}
}

func TestDisableThinkingPrecedence(t *testing.T) {
	yes, no := true, false
	cases := []struct {
		name     string
		sampling *v1alpha1.SamplingSpec
		model    *bool
		want     bool
	}{
		{"default on", nil, nil, true},
		{"spec off", &v1alpha1.SamplingSpec{DisableThinking: &no}, nil, false},
		{"model overrides spec", &v1alpha1.SamplingSpec{DisableThinking: &no}, &yes, true},
		{"model off", nil, &no, false},
	}
	for _, tc := range cases {
		s := v1alpha1.RepotEvaluationSpec{Sampling: tc.sampling}
		m := v1alpha1.ModelSpec{DisableThinking: tc.model}
		if got := s.DisableThinkingFor(&m); got != tc.want {
			t.Errorf("%s: DisableThinkingFor = %v, want %v", tc.name, got, tc.want)
		}
	}
}

func TestResourceRequirementsCore(t *testing.T) {
	var nilReq *v1alpha1.ResourceRequirements
	if diff := cmp.Diff(corev1.ResourceRequirements{}, nilReq.Core()); diff != "" {
		t.Errorf("nil: %s", diff)
	}
	r := &v1alpha1.ResourceRequirements{
		Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("2")},
		Limits:   corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("4Gi")},
	}
	got := r.Core()
	if got.Requests.Cpu().String() != "2" || got.Limits.Memory().String() != "4Gi" {
		t.Errorf("Core() = %+v", got)
	}
	got.Requests[corev1.ResourceCPU] = resource.MustParse("9")
	if r.Requests.Cpu().String() != "2" {
		t.Error("Core() shares its maps with the API object")
	}
}

// The simulated profiles of the API are exactly those the simulated server
// knows.
func TestSimulatedProfilesMatchServer(t *testing.T) {
	var server []string
	for name := range simserver.Profiles {
		server = append(server, name)
	}
	api := append([]string(nil), v1alpha1.SimulatedProfiles...)
	sort.Strings(server)
	sort.Strings(api)
	if diff := cmp.Diff(server, api); diff != "" {
		t.Errorf("simulated.profile enum vs modelserver/simserver.Profiles (-server +api); update SimulatedProfiles and the +kubebuilder:validation:Enum marker:\n%s", diff)
	}
}
