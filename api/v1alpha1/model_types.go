package v1alpha1

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

// DefaultGPUProduct is the nvidia.com/gpu.product node label value vLLM
// servers are scheduled on by default: an H100 80GB.
const DefaultGPUProduct = "NVIDIA-H100-80GB-HBM3"

// GPUProductLabel is the node label (set by NVIDIA GPU feature discovery)
// that names a node's GPU model.
const GPUProductLabel = "nvidia.com/gpu.product"

// ModelSpec is one model to evaluate: exactly one of vllm (the operator runs
// a vLLM server), endpoint (an existing OpenAI-compatible server) or
// simulated (the project's simulated server).
//
// +kubebuilder:validation:XValidation:rule="[has(self.vllm), has(self.endpoint), has(self.simulated)].filter(x, x).size() == 1",message="each entry of spec.models needs exactly one of vllm, endpoint or simulated"
type ModelSpec struct {
	// name identifies the model in the status, the ledgers and the records,
	// and names its server and runner objects: a lowercase DNS label of at
	// most 20 characters, unique within spec.models.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=20
	// +kubebuilder:validation:Pattern=`^[a-z]([-a-z0-9]*[a-z0-9])?$`
	Name string `json:"name"`

	// disableThinking overrides spec.sampling.disableThinking for this
	// model. Unset means the spec-wide setting.
	// +optional
	DisableThinking *bool `json:"disableThinking,omitempty"`

	// vllm has the operator run a vLLM server for the model on GPU nodes.
	// +optional
	VLLM *VLLMModel `json:"vllm,omitempty"`

	// endpoint uses an existing OpenAI-compatible server; nothing is started.
	// +optional
	Endpoint *EndpointModel `json:"endpoint,omitempty"`

	// simulated has the operator run the project's simulated model server
	// (repot sim-server) with a capability profile; it needs no GPU.
	// +optional
	Simulated *SimulatedModel `json:"simulated,omitempty"`
}

// VLLMModel is a vLLM server the operator runs: a Deployment and a Service.
type VLLMModel struct {
	// image is the vLLM server image. Default vLLM v0.11.0 pinned by
	// digest, "vllm/vllm-openai:v0.11.0@sha256:014a95f21c9edf6abe0aea6b07353f96baa4ec291c427bb1176dc7c93a85845c".
	// The server runs it as uid 65532 with a read-only root (see
	// docs/operations.md, Pod Security).
	// +optional
	// +kubebuilder:default="vllm/vllm-openai:v0.11.0@sha256:014a95f21c9edf6abe0aea6b07353f96baa4ec291c427bb1176dc7c93a85845c"
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=512
	Image string `json:"image,omitempty"`

	// model is the Hugging Face model id (or a path in the model cache) that
	// vLLM serves (`vllm serve MODEL`), e.g. "Qwen/Qwen3-30B-A3B". It is
	// also the model id sent in requests unless servedModelName is set.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=256
	Model string `json:"model"`

	// revision pins the model's revision (a branch, tag or commit). Unset
	// means the default branch.
	// +optional
	// +kubebuilder:validation:MaxLength=128
	Revision string `json:"revision,omitempty"`

	// args are extra arguments for `vllm serve`, appended after the ones
	// the operator sets (the model, --host 0.0.0.0, --port, --revision,
	// --tensor-parallel-size, --served-model-name, --max-model-len,
	// --gpu-memory-utilization); use the typed fields for those.
	// At most 32. An argument that sets one of those flags (as --flag or
	// --flag=value, with dashes or underscores) is rejected.
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=32
	// +kubebuilder:validation:items:MaxLength=1024
	// +kubebuilder:validation:items:XValidation:rule="!self.matches('^-(-(host|port|model|revision|tensor[-_]parallel[-_]size|served[-_]model[-_]name|max[-_]model[-_]len|gpu[-_]memory[-_]utilization)|tp)(=|$)')",message="spec.models[].vllm.args must not set a flag the operator sets (--host, --port, --model, --revision, --tensor-parallel-size or -tp, --served-model-name, --max-model-len, --gpu-memory-utilization): set the typed fields revision, gpus, servedModelName, maxModelLen or gpuMemoryUtilizationPermille instead"
	Args []string `json:"args,omitempty"`

	// gpus is the number of nvidia.com/gpu the server requests (and its
	// tensor parallel size): 1 to 8, default 1.
	// +optional
	// +kubebuilder:default=1
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=8
	GPUs *int32 `json:"gpus,omitempty"`

	// gpuProduct is the required value of the node label
	// nvidia.com/gpu.product. Default "NVIDIA-H100-80GB-HBM3".
	// +optional
	// +kubebuilder:default="NVIDIA-H100-80GB-HBM3"
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=63
	GPUProduct string `json:"gpuProduct,omitempty"`

	// nodeSelector are further node labels the server's node must carry, as
	// a list of key/value pairs (unique keys), at most 16.
	// +optional
	// +listType=map
	// +listMapKey=key
	// +kubebuilder:validation:MaxItems=16
	NodeSelector []NodeLabel `json:"nodeSelector,omitempty"`

	// tolerations let the server schedule on tainted GPU nodes, at most 16.
	// The operator always tolerates the nvidia.com/gpu NoSchedule taint.
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=16
	Tolerations []corev1.Toleration `json:"tolerations,omitempty"`

	// resources are the server container's cpu and memory; the GPU request
	// comes from gpus. Unset means the operator's defaults, per GPU: cpu 4
	// and memory 32Gi requested, memory limited to 64Gi, no cpu limit.
	// Set, they are taken as they are (a namespace LimitRange fills in what
	// they leave out).
	// +optional
	Resources *ResourceRequirements `json:"resources,omitempty"`

	// modelCachePVC is a PersistentVolumeClaim in the evaluation's namespace
	// mounted as the Hugging Face cache, so restarts do not download the
	// weights again. Unset means an emptyDir.
	// +optional
	// +kubebuilder:validation:MaxLength=253
	ModelCachePVC string `json:"modelCachePVC,omitempty"`

	// hfTokenSecret is a Secret key holding a Hugging Face token, passed as
	// HF_TOKEN for gated models.
	// +optional
	HFTokenSecret *SecretKey `json:"hfTokenSecret,omitempty"`

	// servedModelName is the model id vLLM serves (--served-model-name) and
	// that the runners and the ready-check send in requests. Default: model.
	// Immutable once the evaluation started, like the rest of the spec.
	// +optional
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=256
	// +kubebuilder:validation:Pattern=`^[^\s]+$`
	ServedModelName string `json:"servedModelName,omitempty"`

	// maxModelLen is the model's context length in tokens
	// (--max-model-len): 1 to 10485760. Unset means vLLM's default, the
	// length in the model's config.
	// +optional
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=10485760
	MaxModelLen *int32 `json:"maxModelLen,omitempty"`

	// gpuMemoryUtilizationPermille is the share of each GPU's memory vLLM
	// may take, in thousandths (--gpu-memory-utilization 0.9 is 900): 1 to
	// 1000. Unset means vLLM's default (0.9).
	// +optional
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=1000
	GPUMemoryUtilizationPermille *int32 `json:"gpuMemoryUtilizationPermille,omitempty"`

	// shmSizeLimit bounds the memory-backed /dev/shm of the server (NCCL and
	// vLLM's worker processes use it; it counts against the pod's memory).
	// Default 8Gi.
	// +optional
	ShmSizeLimit *resource.Quantity `json:"shmSizeLimit,omitempty"`

	// cacheSizeLimit bounds the model cache emptyDir (when modelCachePVC is
	// unset) and is requested as ephemeral-storage, so the server lands on
	// a node with room for the weights. Default 200Gi.
	// +optional
	CacheSizeLimit *resource.Quantity `json:"cacheSizeLimit,omitempty"`

	// podMonitor has the operator create a Prometheus Operator PodMonitor
	// (monitoring.coreos.com/v1) that scrapes vLLM's /metrics and the GPU
	// telemetry's /metrics of the server pod every 30s. Needs the PodMonitor
	// CRD in the cluster. Default false.
	// +optional
	PodMonitor bool `json:"podMonitor,omitempty"`
}

// NodeLabel is one node label a server's node must carry.
type NodeLabel struct {
	// key is the label key, e.g. "topology.kubernetes.io/zone".
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=317
	Key string `json:"key"`

	// value is the label value.
	// +required
	// +kubebuilder:validation:MaxLength=63
	Value string `json:"value"`
}

// EndpointModel is an existing OpenAI-compatible server.
//
// +kubebuilder:validation:XValidation:rule="!has(self.apiKeySecret) || self.url.startsWith('https://') || (isURL(self.url) && (url(self.url).getHostname().endsWith('.svc') || url(self.url).getHostname().endsWith('.svc.cluster.local')))",message="endpoint.apiKeySecret needs an https:// endpoint.url: over http:// the API key crosses the network in clear text; use https://, or an in-cluster Service name (a host ending in .svc or .svc.cluster.local)"
type EndpointModel struct {
	// url is the API root that ends before /chat/completions, e.g.
	// "https://api.example.com/v1": http or https, a host, and a port from
	// 1 to 65535 where it names one. It must not carry credentials
	// (user:password@): give an API key through apiKeySecret. With
	// apiKeySecret it must be https://, unless its host is an in-cluster
	// Service name (ending in .svc or .svc.cluster.local).
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=2048
	// +kubebuilder:validation:XValidation:rule="self.startsWith('http://') || self.startsWith('https://')",message="endpoint.url must start with http:// or https://"
	// +kubebuilder:validation:XValidation:rule="isURL(self) && url(self).getHostname() != '' && !self.matches('^[a-zA-Z][a-zA-Z0-9+.-]*://[^/?#]*:(0+|[0-9]{6,}|6553[6-9]|655[4-9][0-9]|65[6-9][0-9][0-9]|6[6-9][0-9][0-9][0-9]|[7-9][0-9][0-9][0-9][0-9])([/?#].*)?$')",message="endpoint.url must be a URL with a host and, where it names a port, one from 1 to 65535, e.g. http://vllm.team.svc:8000/v1 (the rule of the runner's --base-url)"
	// +kubebuilder:validation:XValidation:rule="!self.matches('^[a-zA-Z][a-zA-Z0-9+.-]*://[^/?#\\\\[]*:[^/?#]*:')",message="endpoint.url must not have a second colon outside brackets in its host and port: write an IPv6 address in brackets, e.g. http://[fd00::1]:8000/v1"
	// +kubebuilder:validation:XValidation:rule="!self.matches('[?#]')",message="endpoint.url must not have a query or fragment: the runner appends /chat/completions to it"
	// +kubebuilder:validation:XValidation:rule="!self.matches('^[a-zA-Z][a-zA-Z0-9+.-]*://[^/?#]*@')",message="endpoint.url must not carry credentials (user:password@host): they would be copied into the runner's arguments and the evaluation's status; give the API key through endpoint.apiKeySecret"
	URL string `json:"url"`

	// servedModelName is the model id sent in each request.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=256
	ServedModelName string `json:"servedModelName"`

	// apiKeySecret is a Secret key holding the API key, sent as a bearer
	// token. Unset sends no key. Needs an https:// url, or an in-cluster
	// Service host (.svc, .svc.cluster.local).
	// +optional
	APIKeySecret *SecretKey `json:"apiKeySecret,omitempty"`
}

// SimulatedProfiles are the profiles of the simulated server, weakest
// first; the enum of simulated.profile lists the same.
var SimulatedProfiles = []string{"weak", "medium", "strong", "frontier"}

// SimulatedModel is the project's simulated OpenAI-compatible server.
type SimulatedModel struct {
	// profile is the simulated capability profile: weak, medium, strong or
	// frontier (see `repot sim-server --help`).
	// +required
	// +kubebuilder:validation:Enum=weak;medium;strong;frontier
	Profile string `json:"profile"`

	// seed makes the simulated answers reproducible. Default 0.
	// +optional
	// +kubebuilder:default=0
	// +kubebuilder:validation:Minimum=0
	Seed *int64 `json:"seed,omitempty"`

	// faultPermille is the share of requests, in thousandths, that the
	// server fails with an infrastructure error (5xx, reset, slow answer) to
	// test retries: 0 to 1000, default 0.
	// +optional
	// +kubebuilder:default=0
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=1000
	FaultPermille *int32 `json:"faultPermille,omitempty"`

	// gpus is the number of nvidia.com/gpu the simulated server requests,
	// to rehearse GPU scheduling, capacity and GPU-second accounting where
	// no model can run: 0 to 8, default 0. The server uses none of them.
	// +optional
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=8
	GPUs *int32 `json:"gpus,omitempty"`

	// fakeGPU gives the simulated server a SIMULATED GPU whose telemetry
	// (power from 70 W idle to 700 W at full decode load, utilisation,
	// energy) follows its simulated decode load, so that status.models[].gpu
	// can be shown without hardware: "h100". Unset means no GPU telemetry.
	// The readings are simulated and say nothing about any real GPU.
	// +optional
	// +kubebuilder:validation:Enum=h100
	FakeGPU string `json:"fakeGPU,omitempty"`
}
