package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestReferenceIsCurrent: docs/api-reference.md is what the generator
// makes from the committed CRDs (make manifests regenerates it).
func TestReferenceIsCurrent(t *testing.T) {
	root := filepath.Join("..", "..")
	got, err := generate(filepath.Join(root, "config", "crd", "bases"))
	if err != nil {
		t.Fatal(err)
	}
	want, err := os.ReadFile(filepath.Join(root, "docs", "api-reference.md"))
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != string(want) {
		t.Fatal("docs/api-reference.md is stale: run make manifests and commit it")
	}
	for _, f := range []string{"`spec.models[].name`", "`status.models[].methods[].interval`", "`spec.suite`"} {
		if !strings.Contains(string(got), f) {
			t.Errorf("reference lacks %s", f)
		}
	}
}

func TestGenerateErrors(t *testing.T) {
	dir := t.TempDir()
	if _, err := generate(dir); err == nil || !strings.Contains(err.Error(), "no CRD manifests") {
		t.Errorf("empty dir: %v", err)
	}
	if err := os.WriteFile(filepath.Join(dir, "x.yaml"), []byte("kind: ConfigMap\nfoo: [\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := generate(dir); err == nil || !strings.Contains(err.Error(), "x.yaml") {
		t.Errorf("bad yaml: %v", err)
	}
}
