package main

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
)

func TestPrintTable(t *testing.T) {
	now := time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC)
	tbl := &metav1.Table{
		ColumnDefinitions: []metav1.TableColumnDefinition{
			{Name: "Name", Type: "string"},
			{Name: "Progress", Type: "string"},
			{Name: "Detail", Type: "string", Priority: 1},
			{Name: "Age", Type: "date"},
		},
		Rows: []metav1.TableRow{
			{Cells: []any{"demo", "960/960", "x", "2026-11-30T08:55:00Z"}, Object: runtime.RawExtension{Raw: []byte(`{"metadata":{"namespace":"default"}}`)}},
			{Cells: []any{"other", nil, "y", "2026-11-29T09:00:00Z"}, Object: runtime.RawExtension{Raw: []byte(`{"metadata":{"namespace":"team"}}`)}},
		},
	}
	var b bytes.Buffer
	printTable(&b, tbl, true, false, now)
	want := "NAMESPACE   NAME    PROGRESS   AGE\n" +
		"default     demo    960/960    5m\n" +
		"team        other   <none>     24h\n"
	if diff := cmp.Diff(want, b.String()); diff != "" {
		t.Errorf("table (-want +got):\n%s", diff)
	}
}

func TestSimulatedSamples(t *testing.T) {
	dir := t.TempDir()
	write := func(name, body string) {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("demo.yaml", "apiVersion: repot.dev/v1alpha1\nkind: RepotEvaluation\nmetadata: {name: demo}\nspec:\n  models:\n  - {name: a, simulated: {profile: strong}}\n  - {name: b, simulated: {profile: weak}}\n")
	write("vllm.yaml", "apiVersion: repot.dev/v1alpha1\nkind: RepotEvaluation\nmetadata: {name: big}\nspec:\n  models:\n  - {name: a, simulated: {profile: strong}}\n  - {name: q, vllm: {model: Qwen/Qwen3-0.6B}}\n")
	write("kustomization.yaml", "resources: [demo.yaml]\n")
	got, err := simulatedSamples(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || got[0].GetName() != "demo" {
		t.Errorf("got %d samples, want only demo", len(got))
	}
	write("bad.yaml", "kind: [\n")
	if _, err := simulatedSamples(dir); err == nil {
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
