package cluster

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	psaapi "k8s.io/pod-security-admission/api"
	"k8s.io/pod-security-admission/policy"
)

// TestArtifactStorePodSecurity checks the store's pod with the Pod Security
// admission library: at restricted, its hostPath data volume is the only
// thing refused (the reason its namespace enforces no level), so the same
// pod with the data on an emptyDir is admitted.
func TestArtifactStorePodSecurity(t *testing.T) {
	evaluator, err := policy.NewEvaluator(policy.DefaultChecks(), nil)
	if err != nil {
		t.Fatal(err)
	}
	restricted := psaapi.LevelVersion{Level: psaapi.LevelRestricted, Version: psaapi.LatestVersion()}
	tmpl := artifactStoreDeployment(map[string]string{"app": "s3"}, "/var/lib/store").Spec.Template
	var refused []string
	for _, r := range evaluator.EvaluatePod(restricted, &tmpl.ObjectMeta, &tmpl.Spec) {
		if !r.Allowed {
			refused = append(refused, r.ForbiddenReason)
		}
	}
	if len(refused) != 1 || refused[0] != "restricted volume types" {
		t.Errorf("refused at restricted: %q, want only the volume types (its hostPath)", refused)
	}
	for i, v := range tmpl.Spec.Volumes {
		if v.HostPath != nil {
			tmpl.Spec.Volumes[i].VolumeSource = corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}
		}
	}
	if agg := policy.AggregateCheckResults(evaluator.EvaluatePod(restricted, &tmpl.ObjectMeta, &tmpl.Spec)); !agg.Allowed {
		t.Errorf("with an emptyDir instead of the hostPath: forbidden at restricted: %s: %s", agg.ForbiddenReason(), agg.ForbiddenDetail())
	}
}
