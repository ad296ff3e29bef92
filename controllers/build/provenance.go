package build

import (
	repotv1 "repot.dev/repot-operator/api/v1alpha1"
)

// ServerArgs is the server command the operator renders for m, as
// status.models[].provenance.serverArgs records it: `vllm serve MODEL ...`
// for a vLLM server (the command the gpu-telemetry wrapper runs), `repot
// sim-server ...` for a simulated one, nil for an endpoint. The server
// builders use the same functions, so the record is what the pod runs.
func ServerArgs(m *repotv1.ModelSpec) []string {
	switch {
	case m.VLLM != nil:
		return vllmServeCommand(m)
	case m.Simulated != nil:
		c := simulatedPod(m, "").Containers[0]
		return append(append([]string(nil), c.Command...), c.Args...)
	}
	return nil
}
