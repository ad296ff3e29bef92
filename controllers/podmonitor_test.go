package controllers

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	revtesting "repot.dev/repot-operator/api/v1alpha1/testing"
	"repot.dev/repot-operator/controllers/build"
)

func TestPodMonitorFor(t *testing.T) {
	ev := revtesting.MakeEvaluation("ev", "ns").VLLM("m", "x").PodMonitor(true).Obj()
	pm := podMonitorFor(ev, &ev.Spec.Models[0])
	if pm.GetAPIVersion() != "monitoring.coreos.com/v1" || pm.GetKind() != "PodMonitor" || pm.GetName() != build.ServerName("ev", "m") || pm.GetNamespace() != "ns" {
		t.Errorf("PodMonitor %s %s %s/%s", pm.GetAPIVersion(), pm.GetKind(), pm.GetNamespace(), pm.GetName())
	}
	if len(pm.GetOwnerReferences()) != 1 || pm.GetOwnerReferences()[0].Name != "ev" {
		t.Errorf("owner references %+v", pm.GetOwnerReferences())
	}
	want := map[string]any{
		"selector": map[string]any{"matchLabels": map[string]any{build.LabelEvaluation: "ev", build.LabelModel: "m", build.LabelComponent: build.ComponentServer}},
		"podMetricsEndpoints": []any{
			map[string]any{"port": "http", "path": "/metrics", "interval": "30s"},
			map[string]any{"port": "telemetry", "path": "/metrics", "interval": "30s"},
		},
	}
	if diff := cmp.Diff(want, pm.Object["spec"]); diff != "" {
		t.Errorf("spec (-want +got):\n%s", diff)
	}
	// The ports it names exist on the server pod.
	pod := build.ServerDeployment(ev, &ev.Spec.Models[0], testOpts, 1).Spec.Template.Spec
	names := map[string]bool{}
	for _, p := range pod.Containers[0].Ports {
		names[p.Name] = true
	}
	if !names["http"] || !names["telemetry"] {
		t.Errorf("server ports %v lack http or telemetry", names)
	}
}
