package argocd

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"
)

// TestArgoCMSampleEmbedsScripts keeps the argocd-cm sample in sync with the
// health.lua files.
func TestArgoCMSampleEmbedsScripts(t *testing.T) {
	data, err := os.ReadFile("../samples/gitops/argocd-cm-health.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var cm struct {
		Data map[string]string `json:"data"`
	}
	if err := yaml.Unmarshal(data, &cm); err != nil {
		t.Fatal(err)
	}
	for _, kind := range Kinds {
		want, err := Script(kind)
		if err != nil {
			t.Fatal(err)
		}
		key := "resource.customizations.health." + Group + "_" + kind
		if got := cm.Data[key]; got != want {
			t.Errorf("config/samples/gitops/argocd-cm-health.yaml key %s differs from config/argocd/resource_customizations/%s/%s/health.lua; copy the file into the sample", key, Group, kind)
		}
	}
}

// TestHealthOfCapturedObjects maps every state of both kinds to its Argo CD
// health and kstatus status. The objects in testdata were taken from a real
// API server: the envtest suites (controllers/integration for evaluations,
// controllers/schedule for schedules) write them when REPOT_CAPTURE_HEALTH
// is set, after checking the same expectations on the live objects.
func TestHealthOfCapturedObjects(t *testing.T) {
	cases := []struct {
		file, argo, kstatus string
		message             string // part of the Argo CD message
	}{
		{"RepotEvaluation-Pending.json", "Progressing", "InProgress", "Pending"},
		{"RepotEvaluation-Running.json", "Progressing", "InProgress", "Running"},
		{"RepotEvaluation-Suspended.json", "Suspended", "InProgress", "spec.suspend"},
		{"RepotEvaluation-Stalled.json", "Degraded", "Failed", "ProblemsUnavailable"},
		{"RepotEvaluation-Complete.json", "Healthy", "Current", "completed"},
		{"RepotEvaluation-Failed.json", "Degraded", "Failed", "DeadlineExceeded"},
		{"RepotSchedule-Scheduled.json", "Healthy", "Current", "next run at"},
		{"RepotSchedule-Suspended.json", "Suspended", "Current", "spec.suspend"},
		{"RepotSchedule-Regressed.json", "Degraded", "Current", "model sim, method repot"},
		{"RepotSchedule-NeverFires.json", "Degraded", "Failed", "InvalidSchedule"},
		{"RepotSchedule-Unobserved.json", "Progressing", "InProgress", "Waiting for the repot operator"},
	}
	for _, tc := range cases {
		t.Run(strings.TrimSuffix(tc.file, ".json"), func(t *testing.T) {
			data, err := os.ReadFile(filepath.Join("testdata", tc.file))
			if err != nil {
				t.Fatalf("%v: run the envtest suites with REPOT_CAPTURE_HEALTH=1 to capture it", err)
			}
			// Decoded as the API machinery decodes objects (integers stay
			// int64), as Argo CD and Flux receive them.
			u := &unstructured.Unstructured{}
			if err := u.UnmarshalJSON(data); err != nil {
				t.Fatal(err)
			}
			h, ks, _, err := Assess(u.Object)
			if err != nil {
				t.Fatal(err)
			}
			if h.Status != tc.argo || ks != tc.kstatus {
				t.Errorf("Argo CD %s (%q), kstatus %s; want Argo CD %s, kstatus %s", h.Status, h.Message, ks, tc.argo, tc.kstatus)
			}
			if !strings.Contains(h.Message, tc.message) {
				t.Errorf("Argo CD message %q does not contain %q", h.Message, tc.message)
			}
		})
	}
}

// TestScriptsOnBareObjects: a freshly applied object (no status) is
// Progressing and a script never fails on missing fields.
func TestScriptsOnBareObjects(t *testing.T) {
	for _, kind := range Kinds {
		obj := map[string]any{"apiVersion": "repot.dev/v1alpha1", "kind": kind, "metadata": map[string]any{"name": "x", "generation": int64(1)}}
		h, err := Evaluate(obj)
		if err != nil {
			t.Fatal(err)
		}
		if h.Status != "Progressing" {
			t.Errorf("%s without status: %s, want Progressing", kind, h.Status)
		}
	}
}
