package build

import (
	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	repotv1 "repot.dev/repot-operator/api/v1alpha1"
)

// ServerArgs is the server command the operator renders for m: `vllm serve
// MODEL ...` for a vLLM server (the command the gpu-telemetry wrapper
// runs), `repot sim-server ...` for a simulated one, nil for an endpoint.
// The server builders use the same functions, so it is what a server pod
// created now runs; status.models[].provenance.serverArgs records what the
// server was created with (DeploymentServerArgs) instead, which an
// operator upgrade does not change.
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

// DeploymentServerArgs is the server command of a server Deployment as it
// was created: the command and args of its "server" container, without the
// `repot gpu-telemetry` wrapper around a vLLM server (what follows the
// wrapper's "--"). For a Deployment ServerDeployment built it equals the ServerArgs
// of its model at that time. nil when there is no server container.
func DeploymentServerArgs(d *appsv1.Deployment) []string {
	for _, c := range d.Spec.Template.Spec.Containers {
		if c.Name != "server" {
			continue
		}
		cmd := append(append([]string(nil), c.Command...), c.Args...)
		if len(cmd) > 1 && cmd[1] == "gpu-telemetry" {
			for i, a := range cmd {
				if a == "--" {
					return cmd[i+1:]
				}
			}
		}
		return cmd
	}
	return nil
}

// recordOperator writes the operator's build (Options.OperatorVersion and
// OperatorCommit) on a child being built, as AnnotationOperatorVersion and
// AnnotationOperatorCommit.
func recordOperator(meta *metav1.ObjectMeta, o Options) {
	for k, v := range map[string]string{AnnotationOperatorVersion: o.OperatorVersion, AnnotationOperatorCommit: o.OperatorCommit} {
		if v == "" {
			continue
		}
		if meta.Annotations == nil {
			meta.Annotations = map[string]string{}
		}
		meta.Annotations[k] = v
	}
}

// CreatedByOperator is the operator build recorded on a child at its
// creation (recordOperator): empty for a child an operator created that
// did not record it.
func CreatedByOperator(obj metav1.Object) (version, commit string) {
	a := obj.GetAnnotations()
	return a[AnnotationOperatorVersion], a[AnnotationOperatorCommit]
}
