package build

import (
	"fmt"
	"strconv"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	repotv1 "repot.dev/repot-operator/api/v1alpha1"
)

// GPU telemetry inside server pods: the operator copies the repot binary
// into an emptyDir (the pattern of Argo Workflows' emissary executor) and
// runs vLLM as the child of `repot gpu-telemetry --exec`, because only the
// container that requests the GPUs can see them.
const (
	telemetryPort     = 9400
	toolsVolume       = "repot-tools"
	toolsPath         = "/repot-tools"
	toolsBinary       = toolsPath + "/repot"
	projectBinaryPath = "/usr/local/bin/repot"
)

// Volume sizes of vLLM pods.
var (
	defaultShmSizeLimit   = resource.MustParse("8Gi")
	defaultCacheSizeLimit = resource.MustParse("200Gi")
	// vllmHomeSizeLimit and vllmTmpSizeLimit bound the emptyDirs that take
	// vLLM's own writes outside the model cache, since its root is
	// read-only: compiled kernels and graphs (torch.compile, Triton,
	// FlashInfer) under HOME, scratch files under /tmp.
	vllmHomeSizeLimit = resource.MustParse("8Gi")
	vllmTmpSizeLimit  = resource.MustParse("2Gi")
	// writableLayerRequest is ephemeral storage for the container's own
	// writes besides the model cache: the vllm-home and tmp emptyDirs (and
	// the logs).
	writableLayerRequest = resource.MustParse("10Gi")
)

// Writable paths of the vLLM container, whose root filesystem is read-only.
const (
	vllmHomePath = "/home/vllm"
	vllmTmpPath  = "/tmp"
)

// vllmEnv is the vLLM container's environment: every directory vLLM and the
// libraries it loads write to points into a writable volume (HOME and the
// caches into vllm-home, scratch into tmp, the Hugging Face home into the
// model cache), so that the root filesystem can stay read-only; USER names
// the user, since the image has no passwd entry for nonRootUID and torch's
// default cache directory asks getpass.getuser(), which then fails; and
// vLLM's usage statistics are off (the pod may reach only the model hub).
func vllmEnv() []corev1.EnvVar {
	cache := vllmHomePath + "/.cache"
	config := vllmHomePath + "/.config"
	return []corev1.EnvVar{
		podIPEnv(),
		{Name: "HOME", Value: vllmHomePath},
		{Name: "USER", Value: "vllm"},
		{Name: "TMPDIR", Value: vllmTmpPath},
		{Name: "XDG_CACHE_HOME", Value: cache},
		{Name: "XDG_CONFIG_HOME", Value: config},
		{Name: "HF_HOME", Value: hfCachePath},
		{Name: "VLLM_CACHE_ROOT", Value: cache + "/vllm"},
		{Name: "VLLM_CONFIG_ROOT", Value: config + "/vllm"},
		{Name: "TRITON_CACHE_DIR", Value: vllmHomePath + "/.triton/cache"},
		{Name: "TORCHINDUCTOR_CACHE_DIR", Value: cache + "/torchinductor"},
		{Name: "NUMBA_CACHE_DIR", Value: cache + "/numba"},
		{Name: "VLLM_NO_USAGE_STATS", Value: "1"},
		{Name: "DO_NOT_TRACK", Value: "1"},
	}
}

// vllmServeCommand is `vllm serve MODEL` with the arguments the operator
// owns, then spec args. It binds 0.0.0.0 so that both the pod IP (the
// Service, the ready-check) and loopback (kubectl port-forward) reach it.
func vllmServeCommand(m *repotv1.ModelSpec) []string {
	v := m.VLLM
	cmd := []string{"vllm", "serve", v.Model, "--host", "0.0.0.0", "--port", strconv.Itoa(serverPort)}
	if v.Revision != "" {
		cmd = append(cmd, "--revision", v.Revision)
	}
	if gpus := v.GPUsOrDefault(); gpus > 1 {
		cmd = append(cmd, "--tensor-parallel-size", strconv.Itoa(int(gpus)))
	}
	if v.ServedModelName != "" {
		cmd = append(cmd, "--served-model-name", v.ServedModelName)
	}
	if v.MaxModelLen != nil {
		cmd = append(cmd, "--max-model-len", strconv.Itoa(int(*v.MaxModelLen)))
	}
	if p := v.GPUMemoryUtilizationPermille; p != nil {
		cmd = append(cmd, "--gpu-memory-utilization", repotv1.GPUMemoryUtilizationArg(*p))
	}
	return append(cmd, v.Args...)
}

// vllmVolumeSizes returns the /dev/shm and model cache size limits.
func vllmVolumeSizes(v *repotv1.VLLMModel) (shm, cache resource.Quantity) {
	shm, cache = defaultShmSizeLimit, defaultCacheSizeLimit
	if v.ShmSizeLimit != nil {
		shm = *v.ShmSizeLimit
	}
	if v.CacheSizeLimit != nil {
		cache = *v.CacheSizeLimit
	}
	return shm, cache
}

// vllmEphemeralRequest is the server container's ephemeral-storage request:
// the model cache when it is an emptyDir, plus the writable layer. A
// request set in spec resources wins.
func vllmEphemeralRequest(v *repotv1.VLLMModel, res *corev1.ResourceRequirements) {
	if _, set := res.Requests[corev1.ResourceEphemeralStorage]; set {
		return
	}
	q := writableLayerRequest.DeepCopy()
	if v.ModelCachePVC == "" {
		_, cache := vllmVolumeSizes(v)
		q.Add(cache)
	}
	res.Requests[corev1.ResourceEphemeralStorage] = q
}

// withGPUTelemetry wraps the server container of pod in `repot
// gpu-telemetry --exec`: an init container copies the repot binary from the
// project image into a shared emptyDir, and the server's command becomes
// the wrapper followed by its own command. The wrapper serves /metrics and
// /telemetry on telemetryPort, forwards signals to vLLM and exits with its
// code.
func withGPUTelemetry(pod corev1.PodSpec, image string) corev1.PodSpec {
	pod.Volumes = append(pod.Volumes, corev1.Volume{Name: toolsVolume, VolumeSource: corev1.VolumeSource{
		EmptyDir: &corev1.EmptyDirVolumeSource{SizeLimit: ptr.To(resource.MustParse("256Mi"))},
	}})
	pod.InitContainers = append(pod.InitContainers, corev1.Container{
		Name:    "repot-tools",
		Image:   image,
		Command: []string{"cp", projectBinaryPath, toolsBinary},
		Resources: corev1.ResourceRequirements{
			Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("10m"), corev1.ResourceMemory: resource.MustParse("32Mi")},
			Limits:   corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("64Mi")},
		},
		VolumeMounts:    []corev1.VolumeMount{{Name: toolsVolume, MountPath: toolsPath}},
		SecurityContext: RestrictedContainerSecurity(),
	})
	for i := range pod.Containers {
		c := &pod.Containers[i]
		if c.Name != "server" {
			continue
		}
		wrapped := append([]string{toolsBinary, "gpu-telemetry", "--exec", "--listen=:" + strconv.Itoa(telemetryPort), "--"}, c.Command...)
		c.Command = append(wrapped, c.Args...)
		c.Args = nil
		c.Ports = append(c.Ports, corev1.ContainerPort{Name: "telemetry", ContainerPort: telemetryPort, Protocol: corev1.ProtocolTCP})
		c.VolumeMounts = append(c.VolumeMounts, corev1.VolumeMount{Name: toolsVolume, MountPath: toolsPath, ReadOnly: true})
	}
	return pod
}

// telemetryServicePort is the Service port runners read /telemetry on.
func telemetryServicePort() corev1.ServicePort {
	return corev1.ServicePort{Name: "telemetry", Port: telemetryPort, TargetPort: intstr.FromInt32(telemetryPort), Protocol: corev1.ProtocolTCP}
}

// PreviousGPU is the model's GPU status in the evaluation's last status.
func PreviousGPU(e *repotv1.RepotEvaluation, model string) *repotv1.ModelGPUStatus {
	for i := range e.Status.Models {
		if e.Status.Models[i].Name == model {
			return e.Status.Models[i].GPU
		}
	}
	return nil
}

// simulatedGPU gives a simulated server with fakeGPU its SIMULATED GPU
// telemetry, served like gpu-telemetry's on telemetryPort.
func simulatedGPU(server *corev1.Container, s *repotv1.SimulatedModel) {
	if s.FakeGPU == "" {
		return
	}
	server.Args = append(server.Args, "--fake-gpu", s.FakeGPU, "--telemetry-listen=$(POD_IP):"+strconv.Itoa(telemetryPort))
	server.Ports = append(server.Ports, corev1.ContainerPort{Name: "telemetry", ContainerPort: telemetryPort, Protocol: corev1.ProtocolTCP})
}

// HasGPUTelemetry reports whether the model's server serves GPU telemetry:
// a vLLM server (wrapped by gpu-telemetry) or a simulated one with a
// SIMULATED GPU.
func HasGPUTelemetry(m *repotv1.ModelSpec) bool {
	return m.VLLM != nil || (m.Simulated != nil && m.Simulated.FakeGPU != "")
}

// gpuTelemetryURL is where a model's runners read the server's telemetry.
func gpuTelemetryURL(e *repotv1.RepotEvaluation, m *repotv1.ModelSpec) string {
	return fmt.Sprintf("http://%s.%s.svc:%d/telemetry", ServerName(e.Name, m.Name), e.Namespace, telemetryPort)
}
