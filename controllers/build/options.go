package build

import (
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/clock"

	repotv1 "repot.dev/repot-operator/api/v1alpha1"
)

// DefaultImage is the project's image: the operator, the runner, the
// simulated server and the readiness sidecar are all the one repot binary.
// The local cluster runs containers of this image as local processes.
const DefaultImage = "repot-operator:dev"

// Options configure the evaluation controller.
type Options struct {
	// Image is the project's image used for runner pods, simulated servers
	// and readiness sidecars unless spec.runner.image overrides it.
	Image string
	// OperatorVersion and OperatorCommit are the operator's own build (the
	// repot binary's version and VCS revision). The builders write them on
	// each model's server Deployment (an endpoint model's runner Job) when
	// they create it, and status.models[].provenance records them from
	// there, so a later operator does not rewrite them. Empty: not recorded.
	OperatorVersion string
	OperatorCommit  string
	// Clock is the time source of every timed decision (deadline, TTL,
	// probe budget). Tests inject a fake one. Default: the real clock.
	Clock clock.PassiveClock
	// APIServerCIDRs are the addresses runner pods may reach the API server
	// at (for the ledger sidecar): --apiserver-cidrs, else what the shell
	// reads from the kubernetes EndpointSlice on each pass. Empty allows TCP
	// 443 and 6443 to any address but the link-local ones, since the API
	// server's endpoints are outside pod selectors.
	APIServerCIDRs []string
	// MetricsScraper is the peer the server pods' NetworkPolicy admits to
	// their metrics (vLLM's /metrics, the GPU telemetry). Zero: none.
	MetricsScraper MetricsScraper
	// MaxConcurrentReconciles bounds parallel reconciles. Default 4.
	MaxConcurrentReconciles int
	// CreatesPerPass bounds the children one reconcile creates; the rest
	// wait for the next pass, which their creation events bring at once.
	// It keeps each pass short, so that a sweep of many evaluations, or one
	// of many models, shares the workers and the API server fairly instead
	// of holding a worker for dozens of sequential creations. Default 8.
	CreatesPerPass int
	// SimulatedReadyBudget is how long a running simulated server may stay
	// unready before it counts as a probe timeout. Default 2 minutes.
	SimulatedReadyBudget time.Duration
	// DefaultS3 is the operator's default artifact store (--artifacts-s3-*
	// flags, the chart's artifacts.s3 values), used by evaluations without
	// spec.artifacts. Nil: none.
	DefaultS3 *repotv1.S3Store
}

// MetricsScraper selects the pods that scrape the servers' metrics, as a
// NetworkPolicy peer: pods matching PodSelector in namespaces matching
// NamespaceSelector (a nil PodSelector: every pod there; a nil
// NamespaceSelector: the evaluation's namespace).
type MetricsScraper struct {
	NamespaceSelector *metav1.LabelSelector
	PodSelector       *metav1.LabelSelector
}

// WithDefaults is o with every unset option at its default (image, clock,
// concurrency, creates per pass, the simulated servers' ready budget).
func (o Options) WithDefaults() Options {
	if o.Image == "" {
		o.Image = DefaultImage
	}
	if o.Clock == nil {
		o.Clock = clock.RealClock{}
	}
	if o.MaxConcurrentReconciles <= 0 {
		o.MaxConcurrentReconciles = 4
	}
	if o.CreatesPerPass <= 0 {
		o.CreatesPerPass = 8
	}
	if o.SimulatedReadyBudget <= 0 {
		o.SimulatedReadyBudget = 2 * time.Minute
	}
	return o
}
