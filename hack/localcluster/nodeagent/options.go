// Package nodeagent is the local cluster's kubelet replacement: it registers
// process nodes, keeps their leases alive and runs the pods bound to them as
// local processes of the project's binary.
package nodeagent

import (
	"io"
	"strconv"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/clock"
)

// GPU node conventions, as the NVIDIA GPU operator and GKE/EKS publish them.
const (
	GPUResource     corev1.ResourceName = "nvidia.com/gpu"
	GPUProductLabel                     = "nvidia.com/gpu.product"
	GPUCountLabel                       = "nvidia.com/gpu.count"
	GPUPresentLabel                     = "nvidia.com/gpu.present"
	// DefaultGPUProduct is the H100 product label value.
	DefaultGPUProduct = "NVIDIA-H100-80GB-HBM3"
	// ProcessNodeLabel marks the local cluster's nodes.
	ProcessNodeLabel = "repot.dev/process-node"
)

// GPUTaint is the taint of a dedicated GPU node.
var GPUTaint = corev1.Taint{Key: string(GPUResource), Value: "present", Effect: corev1.TaintEffectNoSchedule}

// NodeSpec describes one process node.
type NodeSpec struct {
	Name string
	// Capacity advertised (virtual: the pods share this machine).
	CPU, Memory, Pods, Storage resource.Quantity
	GPUs                       int64
	GPUProduct                 string
	// Tainted adds GPUTaint.
	Tainted bool
}

// DefaultNodes returns n node specs named localcluster-node-0..n-1, each with
// 8 H100 GPUs. Node 0 carries the GPU taint (a dedicated GPU node); the others
// do not, so pods that do not tolerate it (runners, the operator) can run.
func DefaultNodes(n int) []NodeSpec {
	out := make([]NodeSpec, n)
	for i := range out {
		out[i] = NodeSpec{
			Name:       "localcluster-node-" + strconv.Itoa(i),
			CPU:        resource.MustParse("64"),
			Memory:     resource.MustParse("512Gi"),
			Pods:       resource.MustParse("250"),
			Storage:    resource.MustParse("500Gi"),
			GPUs:       8,
			GPUProduct: DefaultGPUProduct,
			Tainted:    i == 0 && n > 1,
		}
	}
	return out
}

// Options configures the agent.
type Options struct {
	Client kubernetes.Interface
	Nodes  []NodeSpec
	// PodsDir holds one directory per pod (volumes, logs, hosts file).
	PodsDir string
	// RepotBinary is the path of the repot binary that stands in for the
	// project's image.
	RepotBinary string
	// Images decides which images run.
	Images ImageMatcher
	// APIServer is the API server URL, APIHost/APIPort its loopback address
	// as pods get it, CAFile the cluster CA.
	APIServer string
	APIHost   string
	APIPort   int
	CAFile    string
	// KubeletVersion is reported in the node info.
	KubeletVersion string
	// Log receives one line per pod lifecycle event.
	Log io.Writer
	// Clock is injected for tests.
	Clock clock.WithTicker
	// RestartBackoff is the first delay before restarting a container; it
	// doubles up to MaxRestartBackoff.
	RestartBackoff, MaxRestartBackoff time.Duration
	// ShutdownGrace bounds how long pods get to stop when the agent exits.
	ShutdownGrace time.Duration
	// IPBlock is B of the pod IPs 127.B.x.y (see cluster.AcquireIPBlock).
	IPBlock int
}

func (o *Options) defaults() {
	if o.Clock == nil {
		o.Clock = clock.RealClock{}
	}
	if o.Log == nil {
		o.Log = io.Discard
	}
	if o.RestartBackoff == 0 {
		o.RestartBackoff = 2 * time.Second
	}
	if o.MaxRestartBackoff == 0 {
		o.MaxRestartBackoff = 60 * time.Second
	}
	if o.ShutdownGrace == 0 {
		o.ShutdownGrace = 10 * time.Second
	}
	if len(o.Images.Patterns) == 0 {
		o.Images.Patterns = DefaultImagePatterns
	}
	if o.APIHost == "" {
		o.APIHost = "127.0.0.1"
	}
}
