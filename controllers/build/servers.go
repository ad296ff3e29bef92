package build

import (
	"strconv"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	repotv1 "repot.dev/repot-operator/api/v1alpha1"
)

// Ports and paths of server pods.
const (
	serverPort     = 8000
	readyCheckPort = 8081
	// hfCachePath is where the model cache is mounted and HF_HOME points.
	hfCachePath = "/model-cache"
	GPUResource = corev1.ResourceName("nvidia.com/gpu")
)

// Probe budgets. vLLM loads weights before /health answers; a 70B model from
// a cold cache can take tens of minutes, so the startup probe allows 40.
const (
	vllmStartupPeriod    = 10
	vllmStartupFailures  = 240
	simStartupPeriod     = 2
	simStartupFailures   = 30
	readyCheckPeriod     = 5
	readyCheckFailures   = 2
	vllmReadyBudgetSlack = 10 * time.Minute
)

// ServerReadyBudget is how long a running server pod may stay unready before
// it counts as a probe timeout.
func ServerReadyBudget(m *repotv1.ModelSpec, o Options) time.Duration {
	if m.VLLM != nil {
		return time.Duration(vllmStartupPeriod*vllmStartupFailures)*time.Second + vllmReadyBudgetSlack
	}
	return o.SimulatedReadyBudget
}

// ServerService is the Service runners reach a model's server at. It is
// headless: the name resolves straight to the ready server pod, as for the
// leader of a LeaderWorkerSet. A server is one pod, so a virtual IP would
// balance nothing; and a sweep's many servers would each take an address
// from the cluster's shared Service range, whose allocation is also the
// costliest write the operator makes (a third of a second per Service at
// sweep scale, BenchmarkHundredEvaluations).
func ServerService(e *repotv1.RepotEvaluation, m *repotv1.ModelSpec) *corev1.Service {
	svc := &corev1.Service{
		ObjectMeta: ChildMeta(e, ServerName(e.Name, m.Name), m.Name, ComponentServer),
		Spec: corev1.ServiceSpec{
			Type:      corev1.ServiceTypeClusterIP,
			ClusterIP: corev1.ClusterIPNone,
			Selector:  ServerSelector(e.Name, m.Name),
			Ports: []corev1.ServicePort{{
				Name: "http", Port: serverPort, TargetPort: intstr.FromInt32(serverPort), Protocol: corev1.ProtocolTCP,
			}},
		},
	}
	if HasGPUTelemetry(m) {
		svc.Spec.Ports = append(svc.Spec.Ports, telemetryServicePort())
	}
	return svc
}

// ServerDeployment is the Deployment of a vllm or simulated model's server
// with replicas replicas (0 releases the GPUs while suspended), or nil for a
// model without a server.
func ServerDeployment(e *repotv1.RepotEvaluation, m *repotv1.ModelSpec, o Options, replicas int32) *appsv1.Deployment {
	var pod corev1.PodSpec
	switch {
	case m.VLLM != nil:
		pod = vllmPod(m, projectImage(e, o))
	case m.Simulated != nil:
		pod = simulatedPod(m, projectImage(e, o))
	default:
		return nil
	}
	sel := ServerSelector(e.Name, m.Name)
	d := &appsv1.Deployment{
		ObjectMeta: ChildMeta(e, ServerName(e.Name, m.Name), m.Name, ComponentServer),
		Spec: appsv1.DeploymentSpec{
			Replicas:             ptr.To(replicas),
			Selector:             &metav1.LabelSelector{MatchLabels: sel},
			Strategy:             appsv1.DeploymentStrategy{Type: appsv1.RecreateDeploymentStrategyType},
			RevisionHistoryLimit: ptr.To[int32](1),
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: PodLabels(e, m.Name, ComponentServer)},
				Spec:       pod,
			},
		},
	}
	placeServerPod(e, &d.Spec.Template)
	recordOperator(&d.ObjectMeta, o)
	return d
}

// The operator's defaults for a vLLM container without
// spec.models[].vllm.resources, per GPU: vLLM's host side (the API server,
// tokenization, the scheduler, one worker process per GPU) and the weights
// it reads through host memory at load. No CPU limit: throttling stalls
// the engine loop; the memory limit leaves room for the load's peak.
const (
	vllmCPUPerGPU         = 4
	vllmMemoryPerGPUGi    = 32
	vllmMemoryLimitPerGPU = 64
)

// VLLMDefaultResources are the requests and limits of a vLLM container of
// gpus GPUs without spec.models[].vllm.resources: cpu 4 and memory 32Gi
// requested per GPU, memory limited to 64Gi per GPU (the GPU count and
// ephemeral storage are added for every server, set or not).
func VLLMDefaultResources(gpus int32) corev1.ResourceRequirements {
	n := int64(gpus)
	return corev1.ResourceRequirements{
		Requests: corev1.ResourceList{
			corev1.ResourceCPU:    *resource.NewQuantity(vllmCPUPerGPU*n, resource.DecimalSI),
			corev1.ResourceMemory: *resource.NewQuantity(vllmMemoryPerGPUGi*n<<30, resource.BinarySI),
		},
		Limits: corev1.ResourceList{
			corev1.ResourceMemory: *resource.NewQuantity(vllmMemoryLimitPerGPU*n<<30, resource.BinarySI),
		},
	}
}

// vllmPod runs vLLM on a GPU node of the requested product, with the
// readiness sidecar gating the pod. Like every pod the operator creates, it
// meets the restricted Pod Security Standard: vLLM runs as nonRootUID with
// every capability dropped, no privilege escalation, the RuntimeDefault
// seccomp profile and a read-only root; what it writes goes to emptyDirs
// (vllmEnv) and the model cache. The Hugging Face token reaches the vLLM
// container only.
func vllmPod(m *repotv1.ModelSpec, image string) corev1.PodSpec {
	v := m.VLLM
	gpus := v.GPUsOrDefault()

	res := v.Resources.Core()
	if v.Resources == nil {
		res = VLLMDefaultResources(gpus)
	}
	gpuQty := *resource.NewQuantity(int64(gpus), resource.DecimalSI)
	if res.Requests == nil {
		res.Requests = corev1.ResourceList{}
	}
	if res.Limits == nil {
		res.Limits = corev1.ResourceList{}
	}
	res.Requests[GPUResource] = gpuQty
	res.Limits[GPUResource] = gpuQty
	vllmEphemeralRequest(v, &res)
	shmSize, cacheSize := vllmVolumeSizes(v)

	env := vllmEnv()
	if s := v.HFTokenSecret; s != nil {
		env = append(env, secretEnv("HF_TOKEN", s.Name, s.KeyOrDefault()))
	}

	cache := corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{SizeLimit: &cacheSize}}
	if v.ModelCachePVC != "" {
		cache = corev1.VolumeSource{PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: v.ModelCachePVC}}
	}

	nodeSel := map[string]string{repotv1.GPUProductLabel: v.GPUProductOrDefault()}
	for _, l := range v.NodeSelector {
		nodeSel[l.Key] = l.Value
	}
	tol := []corev1.Toleration{{Key: string(GPUResource), Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule}}
	tol = append(tol, v.Tolerations...)

	server := corev1.Container{
		Name:      "server",
		Image:     v.ImageOrDefault(),
		Command:   vllmServeCommand(m),
		Env:       env,
		Ports:     []corev1.ContainerPort{{Name: "http", ContainerPort: serverPort, Protocol: corev1.ProtocolTCP}},
		Resources: res,
		StartupProbe: &corev1.Probe{
			ProbeHandler:     httpGet("/health", serverPort),
			PeriodSeconds:    vllmStartupPeriod,
			FailureThreshold: vllmStartupFailures,
			TimeoutSeconds:   5,
		},
		LivenessProbe: &corev1.Probe{
			ProbeHandler:     httpGet("/health", serverPort),
			PeriodSeconds:    15,
			FailureThreshold: 4,
			TimeoutSeconds:   5,
		},
		SecurityContext: RestrictedContainerSecurity(),
		VolumeMounts: []corev1.VolumeMount{
			{Name: "model-cache", MountPath: hfCachePath},
			{Name: "dshm", MountPath: "/dev/shm"},
			{Name: "vllm-home", MountPath: vllmHomePath},
			{Name: "tmp", MountPath: vllmTmpPath},
		},
	}
	security := RestrictedPodSecurity()
	// A model cache PVC filled by an earlier (root) server is handed to the
	// non-root user once, not on every start: a recursive ownership change
	// of hundreds of gigabytes would delay each server.
	security.FSGroupChangePolicy = ptr.To(corev1.FSGroupChangeOnRootMismatch)
	return withGPUTelemetry(corev1.PodSpec{
		Containers:                    []corev1.Container{server, readyCheckContainer(image, servedModel(m))},
		NodeSelector:                  nodeSel,
		Tolerations:                   tol,
		SecurityContext:               security,
		AutomountServiceAccountToken:  ptr.To(false),
		EnableServiceLinks:            ptr.To(false),
		TerminationGracePeriodSeconds: ptr.To[int64](60),
		Volumes: []corev1.Volume{
			{Name: "model-cache", VolumeSource: cache},
			{Name: "dshm", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{Medium: corev1.StorageMediumMemory, SizeLimit: &shmSize}}},
			{Name: "vllm-home", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{SizeLimit: ptr.To(vllmHomeSizeLimit.DeepCopy())}}},
			{Name: "tmp", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{SizeLimit: ptr.To(vllmTmpSizeLimit.DeepCopy())}}},
		},
	}, image)
}

// simulatedPod runs `repot sim-server` from the project's image, in the same
// shape as a vLLM pod but without GPUs.
func simulatedPod(m *repotv1.ModelSpec, image string) corev1.PodSpec {
	s := m.Simulated
	var seed int64
	if s.Seed != nil {
		seed = *s.Seed
	}
	var fault int32
	if s.FaultPermille != nil {
		fault = *s.FaultPermille
	}
	server := corev1.Container{
		Name:    "server",
		Image:   image,
		Command: []string{"repot"},
		Args: []string{"sim-server",
			"--listen=$(POD_IP):" + strconv.Itoa(serverPort),
			"--profile", s.Profile,
			"--served-model-name", servedModel(m),
			"--seed", strconv.FormatInt(seed, 10),
			"--fault-permille", strconv.Itoa(int(fault)),
		},
		Env:   []corev1.EnvVar{podIPEnv()},
		Ports: []corev1.ContainerPort{{Name: "http", ContainerPort: serverPort, Protocol: corev1.ProtocolTCP}},
		Resources: corev1.ResourceRequirements{
			Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("100m"), corev1.ResourceMemory: resource.MustParse("128Mi")},
			Limits:   corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("512Mi")},
		},
		StartupProbe: &corev1.Probe{
			ProbeHandler:     httpGet("/health", serverPort),
			PeriodSeconds:    simStartupPeriod,
			FailureThreshold: simStartupFailures,
			TimeoutSeconds:   2,
		},
		SecurityContext: RestrictedContainerSecurity(),
	}
	simulatedGPU(&server, s)
	var tol []corev1.Toleration
	if g := m.ServerGPUs(); g > 0 {
		// Rehearse a GPU server: request (and tolerate) GPUs it never uses.
		q := *resource.NewQuantity(int64(g), resource.DecimalSI)
		server.Resources.Requests[GPUResource] = q
		server.Resources.Limits[GPUResource] = q
		tol = []corev1.Toleration{{Key: string(GPUResource), Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule}}
	}
	return corev1.PodSpec{
		Containers:                    []corev1.Container{server, readyCheckContainer(image, servedModel(m))},
		Tolerations:                   tol,
		SecurityContext:               RestrictedPodSecurity(),
		AutomountServiceAccountToken:  ptr.To(false),
		EnableServiceLinks:            ptr.To(false),
		TerminationGracePeriodSeconds: ptr.To[int64](10),
	}
}

// readyCheckContainer is the readiness sidecar of every server pod: its
// /readyz answers 200 only once a one-token completion against the server in
// the same pod has succeeded, so the pod (and the Service endpoint) becomes
// ready only when the model really answers. It reaches the server at the pod
// IP, where both the simulated server and vLLM listen.
func readyCheckContainer(image, model string) corev1.Container {
	return corev1.Container{
		Name:    "ready-check",
		Image:   image,
		Command: []string{"repot"},
		Args: []string{"ready-check",
			"--base-url", "http://$(POD_IP):" + strconv.Itoa(serverPort) + "/v1",
			"--model", model,
			"--listen=$(POD_IP):" + strconv.Itoa(readyCheckPort),
		},
		Env:   []corev1.EnvVar{podIPEnv()},
		Ports: []corev1.ContainerPort{{Name: "readyz", ContainerPort: readyCheckPort, Protocol: corev1.ProtocolTCP}},
		Resources: corev1.ResourceRequirements{
			Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("10m"), corev1.ResourceMemory: resource.MustParse("32Mi")},
			Limits:   corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("128Mi")},
		},
		ReadinessProbe: &corev1.Probe{
			ProbeHandler:     httpGet("/readyz", readyCheckPort),
			PeriodSeconds:    readyCheckPeriod,
			FailureThreshold: readyCheckFailures,
			TimeoutSeconds:   3,
		},
		SecurityContext: RestrictedContainerSecurity(),
	}
}

func httpGet(path string, port int32) corev1.ProbeHandler {
	return corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Path: path, Port: intstr.FromInt32(port)}}
}
