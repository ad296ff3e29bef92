// Package config holds the tests of the kustomize tree: every manifest
// decodes strictly into its Go type (a misspelt field fails), every
// kustomization names files that exist, and the manager's arguments are
// flags the manager knows.
package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	apiextv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/yaml"

	v1alpha1 "repot.dev/repot-operator/api/v1alpha1"
	"repot.dev/repot-operator/cmd/repot"
)

func docs(t *testing.T, path string) []string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, d := range strings.Split(string(data), "\n---") {
		if strings.TrimSpace(strings.TrimPrefix(d, "---")) != "" {
			out = append(out, d)
		}
	}
	return out
}

func TestManifestsDecodeStrictly(t *testing.T) {
	scheme := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{clientgoscheme.AddToScheme, v1alpha1.AddToScheme, apiextv1.AddToScheme} {
		if err := add(scheme); err != nil {
			t.Fatal(err)
		}
	}
	strict := serializer.NewCodecFactory(scheme, serializer.EnableStrict).UniversalDeserializer()
	n := 0
	err := filepath.WalkDir(".", func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".yaml") || filepath.Base(path) == "kustomization.yaml" {
			return err
		}
		for _, doc := range docs(t, path) {
			u := &unstructured.Unstructured{}
			if err := yaml.Unmarshal([]byte(doc), &u.Object); err != nil {
				t.Errorf("%s: %v", path, err)
				continue
			}
			if !scheme.Recognizes(u.GroupVersionKind()) {
				continue // e.g. the ServiceMonitor
			}
			n++
			if _, _, err := strict.Decode([]byte(doc), nil, nil); err != nil {
				t.Errorf("%s: %s %s: %v", path, u.GetKind(), u.GetName(), err)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if n < 10 {
		t.Errorf("decoded only %d manifests under config/", n)
	}
}

func TestKustomizationsNameExistingFiles(t *testing.T) {
	paths, _ := filepath.Glob("*/kustomization.yaml")
	if len(paths) < 5 {
		t.Fatalf("found %d kustomizations: %v", len(paths), paths)
	}
	for _, p := range paths {
		var k struct {
			Resources []string `json:"resources"`
		}
		data, _ := os.ReadFile(p)
		if err := yaml.Unmarshal(data, &k); err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		for _, r := range k.Resources {
			if _, err := os.Stat(filepath.Join(filepath.Dir(p), r)); err != nil {
				t.Errorf("%s names %s: %v", p, r, err)
			}
		}
	}
}

func TestManagerArgsAreKnownFlags(t *testing.T) {
	for _, doc := range docs(t, filepath.Join("manager", "manager.yaml")) {
		var dep appsv1.Deployment
		if err := yaml.Unmarshal([]byte(doc), &dep); err != nil {
			t.Fatal(err)
		}
		if dep.Kind != "Deployment" {
			continue
		}
		args := dep.Spec.Template.Spec.Containers[0].Args
		if err := repot.ParseArgs(args); err != nil {
			t.Errorf("manager Deployment args %v: %v", args, err)
		}
		return
	}
	t.Fatal("no Deployment in manager/manager.yaml")
}
