package build

import (
	"fmt"
	"net/url"
	"strconv"
	"strings"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	repotv1 "repot.dev/repot-operator/api/v1alpha1"
	"repot.dev/repot-operator/contract"
)

// Paths inside runner pods.
const (
	workOutPath    = "/repot/out"
	problemsPath   = "/repot/problems"
	artifactsPath  = "/repot/artifacts"
	tokenMountPath = "/var/run/secrets/kubernetes.io/serviceaccount"
	recordsFile    = workOutPath + "/" + contract.RecordsFile
	tracesFile     = workOutPath + "/" + contract.TracesFile
	apiKeyEnv      = "REPOT_API_KEY"
	// backoffPerShard is how often one shard may fail (not counting
	// evictions and preemptions) before the shard is given up.
	backoffPerShard = 3
	// awaitLedger bounds how long `repot run` waits for the ledger-sync
	// sidecar's answer after its last run.
	awaitLedger = "2m"
)

// Size limits of the runner pod's emptyDirs; past one the kubelet evicts
// the pod (the Job starts the shard again, resuming from its ledger).
var (
	// outSizeLimit bounds /repot/out: the records, the GPU readings, the
	// provenance and, without spec.artifacts, traces.jsonl, every model
	// reply of the shard, the largest (a shard of thousands of runs of a
	// reasoning model writes hundreds of megabytes).
	outSizeLimit = resource.MustParse("4Gi")
	// tmpSizeLimit bounds /tmp: HOME, and the sandbox's working directory
	// of each program (its files, each at most 1 MiB by RLIMIT_FSIZE, are
	// removed when it ends).
	tmpSizeLimit = resource.MustParse("1Gi")
)

// ServerURL is the OpenAI-compatible base URL a model's runner calls.
func ServerURL(e *repotv1.RepotEvaluation, m *repotv1.ModelSpec) string {
	if m.Endpoint != nil {
		return m.Endpoint.URL
	}
	return fmt.Sprintf("http://%s.%s.svc:%d/v1", ServerName(e.Name, m.Name), e.Namespace, serverPort)
}

// WithoutCredentials is raw without the userinfo (user:password@) of its
// authority, for a URL shown where more people can read it than the
// evaluation's spec (status.models[].server.endpoint). The API refuses such
// URLs; this keeps the credentials of one stored before that rule out of
// status. A URL that does not parse is left out whole (""): where its
// credentials would be cannot be told.
func WithoutCredentials(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return ""
	}
	if u.User == nil {
		return raw
	}
	u.User = nil
	return u.String()
}

// RunnerJob is a model's Indexed Job: one completion per shard, each running
// `repot run` on its slice of the suite. suspend holds it (and stops its
// pods).
func RunnerJob(e *repotv1.RepotEvaluation, m *repotv1.ModelSpec, o Options, suspend bool) *batchv1.Job {
	shards := e.Spec.ShardsPerModelOrDefault()
	j := &batchv1.Job{
		ObjectMeta: ChildMeta(e, RunnerJobName(e.Name, m.Name), m.Name, ComponentRunner),
		Spec: batchv1.JobSpec{
			CompletionMode:       ptr.To(batchv1.IndexedCompletion),
			Completions:          ptr.To(shards),
			Parallelism:          ptr.To(shards),
			BackoffLimitPerIndex: ptr.To[int32](backoffPerShard),
			Suspend:              ptr.To(suspend),
			// Evictions and preemptions are the cluster's doing, not the
			// shard's: they never count against the backoff limit.
			PodFailurePolicy: &batchv1.PodFailurePolicy{Rules: []batchv1.PodFailurePolicyRule{{
				Action:          batchv1.PodFailurePolicyActionIgnore,
				OnPodConditions: []batchv1.PodFailurePolicyOnPodConditionsPattern{{Type: corev1.DisruptionTarget, Status: corev1.ConditionTrue}},
			}}},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: PodLabels(e, m.Name, ComponentRunner)},
				Spec:       runnerPod(e, m, o),
			},
		},
	}
	placeRunnerPod(e, &j.Spec.Template)
	recordOperator(&j.ObjectMeta, o)
	return j
}

// runnerPod is the pod of one shard. Only the two ledger containers see the
// service account token; the runner, which executes the model's programs,
// has none.
func runnerPod(e *repotv1.RepotEvaluation, m *repotv1.ModelSpec, o Options) corev1.PodSpec {
	image := projectImage(e, o)
	volumes := []corev1.Volume{
		{Name: "out", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{SizeLimit: ptr.To(outSizeLimit.DeepCopy())}}},
		{Name: "tmp", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{SizeLimit: ptr.To(tmpSizeLimit.DeepCopy())}}},
		ledgerTokenVolume(),
	}
	mounts := []corev1.VolumeMount{{Name: "out", MountPath: workOutPath}, {Name: "tmp", MountPath: "/tmp"}}
	if p := e.Spec.Problems; p != nil && p.ConfigMap != nil {
		volumes = append(volumes, corev1.Volume{Name: "problems", VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{
			LocalObjectReference: corev1.LocalObjectReference{Name: p.ConfigMap.Name},
		}}})
		mounts = append(mounts, corev1.VolumeMount{Name: "problems", MountPath: problemsPath, ReadOnly: true})
	}
	if a := e.Spec.Artifacts; a != nil && a.PVCName != "" {
		volumes = append(volumes, corev1.Volume{Name: "artifacts", VolumeSource: corev1.VolumeSource{
			PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: a.PVCName},
		}})
		mounts = append(mounts, corev1.VolumeMount{Name: "artifacts", MountPath: artifactsPath, SubPath: e.Name})
	}
	env := []corev1.EnvVar{{Name: "HOME", Value: "/tmp"}}
	if m.Endpoint != nil && m.Endpoint.APIKeySecret != nil {
		s := m.Endpoint.APIKeySecret
		env = append(env, secretEnv(apiKeyEnv, s.Name, s.KeyOrDefault()))
	}
	res := corev1.ResourceRequirements{
		Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1"), corev1.ResourceMemory: resource.MustParse("1Gi")},
		Limits:   corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("4Gi")},
	}
	if r := e.Spec.Runner; r != nil && r.Resources != nil {
		res = r.Resources.Core()
	}
	run := corev1.Container{
		Name:            "run",
		Image:           image,
		Command:         []string{"repot"},
		Args:            RunArgs(e, m),
		Env:             env,
		Resources:       res,
		VolumeMounts:    mounts,
		SecurityContext: RestrictedContainerSecurity(),
	}
	ledger := LedgerPrefix(e.Name, m.Name) + "$(JOB_COMPLETION_INDEX)"
	sync := ledgerContainer("ledger-sync", image, "sync", ledger, LedgerSpills(e), ptr.To(corev1.ContainerRestartPolicyAlways))
	// With an S3 store the sidecar also uploads the traces, and it alone
	// holds the store's credentials.
	store := S3Store(e, o)
	sync.Args = append(sync.Args, artifactsSyncArgs(e, m, store)...)
	sync.Env = append(sync.Env, artifactsEnv(store)...)
	return corev1.PodSpec{
		RestartPolicy:                 corev1.RestartPolicyNever,
		ServiceAccountName:            RunnerAccessName(e.Name),
		AutomountServiceAccountToken:  ptr.To(false),
		EnableServiceLinks:            ptr.To(false),
		SecurityContext:               RestrictedPodSecurity(),
		RuntimeClassName:              runtimeClassOf(e),
		TerminationGracePeriodSeconds: ptr.To[int64](60),
		InitContainers: []corev1.Container{
			ledgerContainer("ledger-restore", image, "restore", ledger, LedgerSpills(e), nil),
			sync,
		},
		Containers: []corev1.Container{run},
		Volumes:    volumes,
	}
}

// ledgerContainer runs `repot ledger restore` (an init container that writes
// the ledger's records into the shared records file, so that `repot run
// --resume` skips them) or `repot ledger sync` (a native sidecar that copies
// new records into the ledger in small batches and on SIGTERM). These are
// the only containers that mount the service account token.
func ledgerContainer(name, image, verb, ledger string, spills int, restart *corev1.ContainerRestartPolicy) corev1.Container {
	return corev1.Container{
		Name:          name,
		Image:         image,
		Command:       []string{"repot"},
		Args:          ledgerArgs(verb, ledger, spills),
		RestartPolicy: restart,
		Env: []corev1.EnvVar{{Name: "POD_NAMESPACE", ValueFrom: &corev1.EnvVarSource{
			FieldRef: &corev1.ObjectFieldSelector{APIVersion: "v1", FieldPath: "metadata.namespace"},
		}}},
		Resources: corev1.ResourceRequirements{
			Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("10m"), corev1.ResourceMemory: resource.MustParse("32Mi")},
			Limits:   corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("128Mi")},
		},
		VolumeMounts: []corev1.VolumeMount{
			{Name: "out", MountPath: workOutPath},
			{Name: "ledger-token", MountPath: tokenMountPath, ReadOnly: true},
		},
		SecurityContext: RestrictedContainerSecurity(),
	}
}

// ledgerTokenVolume is the projected service account token (with the
// cluster CA and the namespace, as the automounted volume has them) that
// only the ledger containers mount.
func ledgerTokenVolume() corev1.Volume {
	return corev1.Volume{Name: "ledger-token", VolumeSource: corev1.VolumeSource{Projected: &corev1.ProjectedVolumeSource{
		DefaultMode: ptr.To[int32](0o440),
		Sources: []corev1.VolumeProjection{
			{ServiceAccountToken: &corev1.ServiceAccountTokenProjection{Path: "token", ExpirationSeconds: ptr.To[int64](3600)}},
			{ConfigMap: &corev1.ConfigMapProjection{
				LocalObjectReference: corev1.LocalObjectReference{Name: "kube-root-ca.crt"},
				Items:                []corev1.KeyToPath{{Key: "ca.crt", Path: "ca.crt"}},
			}},
			{DownwardAPI: &corev1.DownwardAPIProjection{Items: []corev1.DownwardAPIVolumeFile{{
				Path: "namespace", FieldRef: &corev1.ObjectFieldSelector{APIVersion: "v1", FieldPath: "metadata.namespace"},
			}}}},
		},
	}}}
}

// RunArgs are the arguments of `repot run` for one shard of one model.
func RunArgs(e *repotv1.RepotEvaluation, m *repotv1.ModelSpec) []string {
	methods := make([]string, 0, len(e.Spec.MethodsOrDefault()))
	for _, x := range e.Spec.MethodsOrDefault() {
		methods = append(methods, string(x))
	}
	args := []string{"run",
		"--suite", string(e.Spec.SuiteOrDefault()),
	}
	if p := e.Spec.Problems; p != nil {
		if p.ConfigMap != nil {
			args = append(args, "--problems", problemsPath+"/"+p.ConfigMap.KeyOrDefault())
		} else {
			args = append(args, "--problems", p.URL)
		}
	}
	args = append(args,
		methodsFlag(e), strings.Join(methods, ","),
		"--base-url", ServerURL(e, m),
		"--model", servedModel(m),
		"--model-label", m.Name,
		"--shard-index=$(JOB_COMPLETION_INDEX)",
		"--shard-count", strconv.Itoa(int(e.Spec.ShardsPerModelOrDefault())),
		"--concurrency", strconv.Itoa(int(e.Spec.InFlightPerShardOrDefault())),
		"--repair-budget", strconv.Itoa(int(e.Spec.RepairBudgetOrDefault())),
		"--adaptive-threshold-permille", strconv.Itoa(int(e.Spec.ShortPrefixPermilleOrDefault())),
		"--temperature", e.Spec.TemperatureOrDefault(),
		"--max-tokens", strconv.Itoa(int(e.Spec.MaxTokensOrDefault())),
		"--disable-thinking="+strconv.FormatBool(e.Spec.DisableThinkingFor(m)),
		"--out", workOutPath,
		"--resume",
		// The run container's exit carries the ledger-sync sidecar's answer
		// (is every record in the ledger?), so a lost final write fails the
		// pod and the Job runs the shard again. Above the sidecar's 20s
		// final timeout.
		"--await-ledger="+awaitLedger,
	)
	args = append(args, derailArgs(e)...)
	args = append(args, vrrArgs(e.Spec.VRR)...)
	args = append(args, baselineArgs(e)...)
	if m.Endpoint != nil && m.Endpoint.APIKeySecret != nil {
		args = append(args, "--api-key-env", apiKeyEnv)
	}
	if HasGPUTelemetry(m) {
		args = append(args, "--gpu-telemetry-url", gpuTelemetryURL(e, m))
	}
	if a := e.Spec.Artifacts; a != nil && a.PVCName != "" {
		args = append(args, "--traces", artifactsPath+"/"+m.Name+"-shard-$(JOB_COMPLETION_INDEX).jsonl")
	}
	return args
}

// baselineArgs are the `repot run` arguments of spec.selfConsistency and
// spec.vex (none when unset: the runner's defaults are the API's).
func baselineArgs(e *repotv1.RepotEvaluation) []string {
	var args []string
	if e.Spec.SelfConsistency != nil {
		args = append(args, "--self-consistency-samples", strconv.Itoa(int(e.Spec.SelfConsistencySamplesOrDefault())))
	}
	if v := e.Spec.VEX; v != nil {
		args = append(args, "--vex-max-llm-calls", strconv.Itoa(int(e.Spec.VEXMaxLLMCallsOrDefault())))
		for _, env := range v.Environments {
			if env.ChunkSize != nil {
				args = append(args, "--vex-chunk-size", env.Environment+"="+strconv.Itoa(int(*env.ChunkSize)))
			}
			if env.Proposer != "" {
				args = append(args, "--vex-proposer", env.Environment+"="+string(env.Proposer))
			}
		}
	}
	return args
}

// derailArgs are the `repot run` arguments a derail-550 evaluation adds:
// its checkpoint statement (its conditions go in place of --methods, see
// methodsFlag and MethodsOrDefault).
func derailArgs(e *repotv1.RepotEvaluation) []string {
	if !e.Spec.IsDerail() {
		return nil
	}
	return []string{"--checkpoint-statement", string(e.Spec.CheckpointStatementOrDefault())}
}

// vrrArgs are the `repot run` flags of spec.vrr: one per field that is set;
// an unset field takes the engine's default (analysis/vrr.Config.Normalized).
func vrrArgs(v *repotv1.VRRSpec) []string {
	if v == nil {
		return nil
	}
	var args []string
	add := func(flag string, p *int32) {
		if p != nil {
			args = append(args, "--"+flag+"="+strconv.Itoa(int(*p)))
		}
	}
	add("vrr-tau", v.Tau)
	add("vrr-votes", v.Votes)
	if n := v.VerifierNoise; n != nil {
		add("verifier-false-accept-permille", n.FalseAcceptPermille)
		add("verifier-false-reject-permille", n.FalseRejectPermille)
	}
	add("vrr-calibration-problems", v.CalibrationProblems)
	add("vrr-min-trials", v.MinTrials)
	add("vrr-guard-j-permille", v.GuardJPermille)
	add("vrr-guard-margin", v.GuardMargin)
	return args
}

// methodsFlag is the flag that names what to run on every problem.
func methodsFlag(e *repotv1.RepotEvaluation) string {
	if e.Spec.IsDerail() {
		return "--conditions"
	}
	return "--methods"
}
