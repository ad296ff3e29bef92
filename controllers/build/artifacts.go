package build

import (
	"crypto/sha256"
	"encoding/hex"
	"strconv"
	"strings"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

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
	return []corev1.EnvVar{
		secretEnv(artifacts.EnvAccessKeyID, s.CredentialsSecret, artifacts.EnvAccessKeyID),
		secretEnv(artifacts.EnvSecretAccessKey, s.CredentialsSecret, artifacts.EnvSecretAccessKey),
	}
}

// secretEnv is the environment variable name set from key of Secret
// secret: the only way a credential reaches a container.
func secretEnv(name, secret, key string) corev1.EnvVar {
	return corev1.EnvVar{Name: name, ValueFrom: &corev1.EnvVarSource{
		SecretKeyRef: &corev1.SecretKeySelector{LocalObjectReference: corev1.LocalObjectReference{Name: secret}, Key: key},
	}}
}

// storeURL is s's endpoint as a URL, for its NetworkPolicy rule.
func storeURL(s *repotv1.S3Store) string {
	if s.Insecure {
		return "http://" + s.Endpoint
	}
	return "https://" + s.Endpoint
}

// LabelArtifactsProbe marks the Job (and its pod) that checks the artifact
// store before anything of the evaluation starts. The pod is a runner pod
// for the NetworkPolicy and the identity (component runner, the runner's
// ServiceAccount), so it reaches the store exactly as the runners will; the
// label keeps it out of the runner Jobs and pods the planner counts.
const LabelArtifactsProbe = "repot.dev/artifacts-probe"

// AnnotationArtifactsStore on the probe Job is StoreHash of the store it
// probed: a store changed in the spec gets a new probe.
const AnnotationArtifactsStore = "repot.dev/artifacts-store"

// ArtifactsProbeJobName names the evaluation's store probe Job.
func ArtifactsProbeJobName(eval string) string { return ModelBase(eval, "") + "-artifacts-probe" }

// LabelArtifactsCleanup marks the Job (and its pod) that deletes a deleted
// evaluation's stored traces (ArtifactsCleanupJob); like the probe's, the
// pod is a runner pod for the NetworkPolicy and the identity.
const LabelArtifactsCleanup = "repot.dev/artifacts-cleanup"

// FinalizerArtifactsCleanup holds an evaluation with
// spec.artifacts.retainAfterDeletion false until its stored traces are
// deleted.
const FinalizerArtifactsCleanup = "repot.dev/artifacts-cleanup"

// ArtifactsCleanupJobName names the Job that deletes the evaluation's
// stored traces.
func ArtifactsCleanupJobName(eval string) string { return ModelBase(eval, "") + "-artifacts-cleanup" }

// StoreHash identifies a store setting (endpoint, bucket, prefix, region,
// Secret, TLS).
func StoreHash(s *repotv1.S3Store) string {
	sum := sha256.Sum256([]byte(strings.Join([]string{s.Endpoint, s.Bucket, s.Prefix, s.Region, s.CredentialsSecret, strconv.FormatBool(s.Insecure)}, "\x00")))
	return hex.EncodeToString(sum[:8])
}

// ArtifactsProbeJob runs `repot artifacts probe` once with the runners'
// identity, network policy, placement and credentials: it lists, writes,
// reads and deletes an object under the evaluation's prefix. Its pod's
// termination message says what failed (the endpoint, the bucket or the
// credentials), which the operator copies into the ArtifactStoreUnavailable
// condition.
func ArtifactsProbeJob(e *repotv1.RepotEvaluation, s *repotv1.S3Store, o Options) *batchv1.Job {
	j := artifactsJob(e, s, o, ArtifactsProbeJobName(e.Name), LabelArtifactsProbe, "probe")
	j.Annotations = map[string]string{AnnotationArtifactsStore: StoreHash(s)}
	return j
}

// ArtifactsCleanupJob runs `repot artifacts remove` once, as the probe runs:
// it deletes every key under the evaluation's prefix, for an evaluation
// deleted with spec.artifacts.retainAfterDeletion false. Its termination
// message says what failed.
func ArtifactsCleanupJob(e *repotv1.RepotEvaluation, s *repotv1.S3Store, o Options) *batchv1.Job {
	j := artifactsJob(e, s, o, ArtifactsCleanupJobName(e.Name), LabelArtifactsCleanup, "remove")
	// Deleting is one listing and batched deletes, but a long evaluation
	// has many segments; an interrupted removal resumes in the next Job.
	j.Spec.ActiveDeadlineSeconds = ptr.To[int64](600)
	return j
}

// artifactsJob runs `repot artifacts VERB` on the evaluation's prefix with
// the runners' identity, network policy, placement and credentials, its
// Job and pod marked with label.
func artifactsJob(e *repotv1.RepotEvaluation, s *repotv1.S3Store, o Options, name, label, verb string) *batchv1.Job {
	meta := ChildMeta(e, name, "", ComponentRunner)
	meta.Labels[label] = "true"
	labels := PodLabels(e, "", ComponentRunner)
	labels[label] = "true"
	args := []string{"artifacts", verb,
		"--artifacts-endpoint=" + s.Endpoint,
		"--artifacts-bucket=" + s.Bucket,
		"--namespace=$(POD_NAMESPACE)",
		"--evaluation=" + e.Name,
		"--evaluation-uid=" + string(e.UID),
	}
	if s.Prefix != "" {
		args = append(args, "--artifacts-prefix="+s.Prefix)
	}
	if s.Region != "" {
		args = append(args, "--artifacts-region="+s.Region)
	}
	if s.Insecure {
		args = append(args, "--artifacts-insecure=true")
	}
	env := append([]corev1.EnvVar{{Name: "POD_NAMESPACE", ValueFrom: &corev1.EnvVarSource{
		FieldRef: &corev1.ObjectFieldSelector{APIVersion: "v1", FieldPath: "metadata.namespace"},
	}}}, artifactsEnv(s)...)
	j := &batchv1.Job{
		ObjectMeta: meta,
		Spec: batchv1.JobSpec{
			BackoffLimit:          ptr.To[int32](0),
			ActiveDeadlineSeconds: ptr.To[int64](120),
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec: corev1.PodSpec{
					RestartPolicy:                 corev1.RestartPolicyNever,
					ServiceAccountName:            RunnerAccessName(e.Name),
					AutomountServiceAccountToken:  ptr.To(false),
					EnableServiceLinks:            ptr.To(false),
					SecurityContext:               RestrictedPodSecurity(),
					TerminationGracePeriodSeconds: ptr.To[int64](5),
					Containers: []corev1.Container{{
						Name:    verb,
						Image:   projectImage(e, o),
						Command: []string{"repot"},
						Args:    args,
						Env:     env,
						Resources: corev1.ResourceRequirements{
							Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("10m"), corev1.ResourceMemory: resource.MustParse("32Mi")},
							Limits:   corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("128Mi")},
						},
						// The command writes its verdict to the termination
						// message; a crash before that leaves its log's tail.
						TerminationMessagePolicy: corev1.TerminationMessageFallbackToLogsOnError,
						SecurityContext:          RestrictedContainerSecurity(),
					}},
				},
			},
		},
	}
	placeRunnerPod(e, &j.Spec.Template)
	recordOperator(&j.ObjectMeta, o)
	return j
}
