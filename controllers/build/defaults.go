package build

import (
	repotv1 "repot.dev/repot-operator/api/v1alpha1"
)

// projectImage is the image of runner pods, simulated servers and readiness
// sidecars: spec.runner.image, else the operator's configured image.
func projectImage(e *repotv1.RepotEvaluation, o Options) string {
	if r := e.Spec.Runner; r != nil && r.Image != "" {
		return r.Image
	}
	return o.Image
}

// servedModel is the model id a runner sends in requests.
func servedModel(m *repotv1.ModelSpec) string {
	switch {
	case m.VLLM != nil && m.VLLM.ServedModelName != "":
		return m.VLLM.ServedModelName
	case m.VLLM != nil:
		return m.VLLM.Model
	case m.Endpoint != nil:
		return m.Endpoint.ServedModelName
	}
	return m.Name
}

// HasServer reports whether the operator runs a server for the model.
func HasServer(m *repotv1.ModelSpec) bool { return m.VLLM != nil || m.Simulated != nil }

func runtimeClassOf(e *repotv1.RepotEvaluation) *string {
	if r := e.Spec.Runner; r != nil && r.RuntimeClassName != nil {
		v := *r.RuntimeClassName
		return &v
	}
	return nil
}
