package v1alpha1_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"
)

// readSchedules reads RepotSchedule manifests; bad ones start with
// "# want: <part of the API server's message>".
func readSchedules(t *testing.T, pattern string) []manifest {
	t.Helper()
	paths, err := filepath.Glob(pattern)
	if err != nil || len(paths) == 0 {
		t.Fatalf("no manifests match %s (%v)", pattern, err)
	}
	var out []manifest
	for _, p := range paths {
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		mf := manifest{path: p}
		if first, _, ok := strings.Cut(string(data), "\n"); ok && strings.HasPrefix(first, "# want: ") {
			mf.want = strings.TrimPrefix(first, "# want: ")
		}
		u := &unstructured.Unstructured{}
		if err := yaml.Unmarshal(data, &u.Object); err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		if u.GetKind() != "RepotSchedule" {
			t.Fatalf("%s: not a RepotSchedule", p)
		}
		mf.obj = u
		out = append(out, mf)
	}
	return out
}

func TestInvalidSchedulesAreRejected(t *testing.T) {
	requireAPIServer(t)
	ns := newNamespace(t)
	mfs := readSchedules(t, "testdata/schedule/invalid/*.yaml")
	if len(mfs) < 10 {
		t.Fatalf("only %d invalid schedules; want at least 10", len(mfs))
	}
	for _, mf := range mfs {
		t.Run(filepath.Base(mf.path), func(t *testing.T) {
			if mf.want == "" {
				t.Fatalf("%s: first line must be `# want: <part of the API server's message>`", mf.path)
			}
			mf.obj.SetNamespace(ns)
			err := k8sClient.Create(context.Background(), mf.obj)
			if err == nil {
				t.Fatalf("the API server accepted %s; want an error containing %q", mf.path, mf.want)
			}
			if !strings.Contains(err.Error(), mf.want) {
				t.Errorf("error for %s:\n  %v\nwant it to contain %q", mf.path, err, mf.want)
			}
		})
	}
}

func TestValidSchedulesAreAccepted(t *testing.T) {
	requireAPIServer(t)
	ns := newNamespace(t)
	mfs := readSchedules(t, "testdata/schedule/valid/*.yaml")
	mfs = append(mfs, readSchedules(t, "../../config/samples/gitops/repotschedule.yaml")...)
	for _, mf := range mfs {
		t.Run(filepath.Base(mf.path), func(t *testing.T) {
			mf.obj.SetNamespace(ns)
			if err := k8sClient.Create(context.Background(), mf.obj); err != nil {
				t.Fatalf("the API server rejected %s: %v", mf.path, err)
			}
		})
	}
}
