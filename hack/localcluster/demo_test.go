package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

func TestSimulatedSamples(t *testing.T) {
	path := filepath.Join(t.TempDir(), "samples.yaml")
	write := func(body string) {
		if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("apiVersion: repot.dev/v1alpha1\nkind: RepotEvaluation\nmetadata: {name: demo}\nspec:\n  models:\n  - {name: a, simulated: {profile: strong}}\n  - {name: b, simulated: {profile: weak}}\n" +
		"---\napiVersion: repot.dev/v1alpha1\nkind: RepotEvaluation\nmetadata: {name: big}\nspec:\n  models:\n  - {name: a, simulated: {profile: strong}}\n  - {name: q, vllm: {model: Qwen/Qwen3-0.6B}}\n" +
		"---\n# only a comment\n")
	got, total, err := simulatedSamples(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || got[0].GetName() != "demo" || total != 2 {
		t.Errorf("got %d samples of %d objects, want only demo of 2", len(got), total)
	}
	write("kind: [\n")
	if _, _, err := simulatedSamples(path); err == nil {
		t.Errorf("a broken manifest was accepted")
	}
}

func TestDropSimulatedGPUs(t *testing.T) {
	u := &unstructured.Unstructured{Object: map[string]any{"spec": map[string]any{"models": []any{
		map[string]any{"name": "a", "simulated": map[string]any{"profile": "strong", "fakeGPU": "h100", "gpus": int64(1)}},
		map[string]any{"name": "b", "simulated": map[string]any{"profile": "weak"}},
	}}}}
	dropSimulatedGPUs(u)
	want := []any{
		map[string]any{"name": "a", "simulated": map[string]any{"profile": "strong", "fakeGPU": "h100"}},
		map[string]any{"name": "b", "simulated": map[string]any{"profile": "weak"}},
	}
	got, _, _ := unstructured.NestedSlice(u.Object, "spec", "models")
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("models (-want +got):\n%s", diff)
	}
}

func TestSplitImage(t *testing.T) {
	for _, tc := range []struct{ ref, repo, tag string }{
		{"localhost/repot-operator:dev", "localhost/repot-operator", "dev"},
		{"registry.example.com:5000/repot-operator:v0.1.0", "registry.example.com:5000/repot-operator", "v0.1.0"},
		{"registry.example.com:5000/repot-operator", "registry.example.com:5000/repot-operator", "latest"},
		{"repot-operator", "repot-operator", "latest"},
	} {
		if repo, tag := splitImage(tc.ref); repo != tc.repo || tag != tc.tag {
			t.Errorf("splitImage(%q) = %q, %q; want %q, %q", tc.ref, repo, tag, tc.repo, tc.tag)
		}
	}
}
