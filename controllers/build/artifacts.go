package build

import (
	"strconv"

	corev1 "k8s.io/api/core/v1"

	repotv1 "repot.dev/repot-operator/api/v1alpha1"
	"repot.dev/repot-operator/artifacts"
)

// S3Store is the S3 store an evaluation's traces go to: spec.artifacts.s3,
// else the operator's default (Options.DefaultS3) unless the evaluation
// names a PVC; nil for none.
func S3Store(e *repotv1.RepotEvaluation, o Options) *repotv1.S3Store {
	if a := e.Spec.Artifacts; a != nil {
		return a.S3
	}
	return o.DefaultS3
}

// ArtifactsLayout is where the evaluation's objects go in store s.
func ArtifactsLayout(e *repotv1.RepotEvaluation, s *repotv1.S3Store) artifacts.Layout {
	return artifacts.Layout{Prefix: s.Prefix, Namespace: e.Namespace, Evaluation: e.Name, UID: string(e.UID)}
}

// ArtifactsLocation is s as the artifacts package's Location.
func ArtifactsLocation(s *repotv1.S3Store) artifacts.Location {
	return artifacts.Location{Endpoint: s.Endpoint, Bucket: s.Bucket, Prefix: s.Prefix, Region: s.Region, Insecure: s.Insecure}
}

// artifactsSyncArgs are the ledger sidecar's arguments that make it upload
// the shard's traces (none without an S3 store).
func artifactsSyncArgs(e *repotv1.RepotEvaluation, m *repotv1.ModelSpec, s *repotv1.S3Store) []string {
	if s == nil {
		return nil
	}
	args := []string{
		"--artifacts-endpoint=" + s.Endpoint,
		"--artifacts-bucket=" + s.Bucket,
		"--evaluation=" + e.Name,
		"--evaluation-uid=" + string(e.UID),
		"--model=" + m.Name,
		"--shard=$(JOB_COMPLETION_INDEX)",
		"--traces-file=" + tracesFile,
	}
	if s.Prefix != "" {
		args = append(args, "--artifacts-prefix="+s.Prefix)
	}
	if s.Region != "" {
		args = append(args, "--artifacts-region="+s.Region)
	}
	if s.Insecure {
		args = append(args, "--artifacts-insecure="+strconv.FormatBool(true))
	}
	return args
}

// artifactsEnv are the sidecar's credentials from spec's Secret (none for
// the ambient identity). Only the ledger sidecar gets them.
func artifactsEnv(s *repotv1.S3Store) []corev1.EnvVar {
	if s == nil || s.CredentialsSecret == "" {
		return nil
	}
	ref := func(key string) *corev1.EnvVarSource {
		return &corev1.EnvVarSource{SecretKeyRef: &corev1.SecretKeySelector{
			LocalObjectReference: corev1.LocalObjectReference{Name: s.CredentialsSecret}, Key: key,
		}}
	}
	return []corev1.EnvVar{
		{Name: artifacts.EnvAccessKeyID, ValueFrom: ref(artifacts.EnvAccessKeyID)},
		{Name: artifacts.EnvSecretAccessKey, ValueFrom: ref(artifacts.EnvSecretAccessKey)},
	}
}

// storeURL is s's endpoint as a URL, for its NetworkPolicy rule.
func storeURL(s *repotv1.S3Store) string {
	if s.Insecure {
		return "http://" + s.Endpoint
	}
	return "https://" + s.Endpoint
}
