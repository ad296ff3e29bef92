package repot

import (
	"errors"
	"fmt"
	"net"
	"strings"
	"time"

	"github.com/spf13/cobra"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/healthz"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	"repot.dev/repot-operator/contract/buildinfo"
	"repot.dev/repot-operator/controllers"
	"repot.dev/repot-operator/controllers/build"
	"repot.dev/repot-operator/controllers/schedule"
)

func init() { register(newManagerCommand) }

func newManagerCommand() *cobra.Command {
	var (
		metricsAddr, probeAddr, namespace, image, apiCIDRs string
		scraperNS, scraperPods                             string
		leaderElect, devLog, metricsSecure                 bool
		defaultStore                                       defaultStoreFlags
		concurrency                                        int
		leaseDuration, renewDeadline, retryPeriod          time.Duration
	)
	cmd := &cobra.Command{
		Use:   "manager",
		Short: "Run the operator: reconcile RepotEvaluations into model servers, runner Jobs, ledgers and status",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctrl.SetLogger(zap.New(zap.UseDevMode(devLog)))
			scheme, err := controllers.NewScheme()
			if err != nil {
				return err
			}
			cfg, err := ctrl.GetConfig()
			if err != nil {
				return fmt.Errorf("kubeconfig: %w", err)
			}
			// The Workload cache needs Kueue's API; without Kueue a queued
			// evaluation says so in its status, and the operator restarts
			// itself once Kueue is installed (KueueWatch).
			withKueue, err := controllers.KueueServed(cfg)
			if err != nil {
				return err
			}
			mgr, err := ctrl.NewManager(cfg, ctrl.Options{
				Scheme:                 scheme,
				Metrics:                controllers.MetricsServerOptions(metricsAddr, metricsSecure),
				HealthProbeBindAddress: probeAddr,
				LeaderElection:         leaderElect,
				LeaderElectionID:       "repot-operator.repot.dev",
				LeaseDuration:          &leaseDuration,
				RenewDeadline:          &renewDeadline,
				RetryPeriod:            &retryPeriod,
				Cache:                  controllers.CacheOptions(namespace, withKueue),
			})
			if err != nil {
				return fmt.Errorf("create manager: %w", err)
			}
			ctx := ctrl.SetupSignalHandler()
			opts := build.Options{Image: image, MaxConcurrentReconciles: concurrency}
			opts.OperatorVersion, opts.OperatorCommit = buildinfo.Version()
			if opts.APIServerCIDRs, err = parseCIDRs(apiCIDRs); err != nil {
				return fmt.Errorf("--apiserver-cidrs: %w", err)
			}
			if opts.MetricsScraper, err = parseScraper(scraperNS, scraperPods); err != nil {
				return err
			}
			if opts.DefaultS3, err = defaultStore.store(); err != nil {
				return err
			}
			if err := controllers.SetupWithManager(ctx, mgr, opts); err != nil {
				return err
			}
			if err := schedule.SetupWithManager(ctx, mgr, schedule.Options{}); err != nil {
				return err
			}
			if err := mgr.AddHealthzCheck("healthz", healthz.Ping); err != nil {
				return err
			}
			if err := mgr.AddReadyzCheck("readyz", healthz.Ping); err != nil {
				return err
			}
			if !withKueue {
				// Kueue installed later: stop, so that the restart watches
				// Workloads (the caches are fixed at start).
				watch := controllers.KueueWatch{Served: func() (bool, error) { return controllers.KueueServed(cfg) }}
				if err := mgr.Add(watch); err != nil {
					return err
				}
			}
			err = mgr.Start(ctx)
			if errors.Is(err, controllers.ErrKueueInstalled) {
				fmt.Fprintln(cmd.ErrOrStderr(), "repot manager:", err)
				return nil
			}
			return err
		},
	}
	f := cmd.Flags()
	f.StringVar(&metricsAddr, "metrics-bind-address", ":8443", "address of the Prometheus metrics endpoint (0 disables it)")
	f.BoolVar(&metricsSecure, "metrics-secure", true, "serve metrics over HTTPS (a self-signed certificate) to clients the API server authenticates (TokenReview) and authorizes for GET /metrics (SubjectAccessReview); false serves plain HTTP to anyone who reaches the port")
	f.StringVar(&probeAddr, "health-probe-bind-address", ":8081", "address of the /healthz and /readyz endpoints")
	f.BoolVar(&leaderElect, "leader-elect", false, "elect a leader so that only one replica reconciles")
	// More tolerant than client-go's 15s/10s/2s: a leader that cannot renew
	// in time exits (and restarts), and on a busy control plane (a small
	// cluster's API server under a burst of runners) a renewal can take
	// more than 10 s. The price is a slower take-over after a crash.
	f.DurationVar(&leaseDuration, "leader-elect-lease-duration", 60*time.Second, "how long a non-leader waits before taking over an unrenewed lease")
	f.DurationVar(&renewDeadline, "leader-elect-renew-deadline", 40*time.Second, "how long the leader keeps retrying to renew before it gives up leadership and exits")
	f.DurationVar(&retryPeriod, "leader-elect-retry-period", 5*time.Second, "time between attempts to acquire or renew the lease")
	f.StringVar(&image, "runner-image", build.DefaultImage, "the project's image for runner pods, simulated servers and readiness sidecars")
	f.StringVar(&namespace, "namespace", "", "watch only this namespace (default: all namespaces)")
	f.StringVar(&apiCIDRs, "apiserver-cidrs", "", "comma-separated CIDRs of the API server that runner NetworkPolicies allow the ledger sidecar to reach (default: the addresses of the kubernetes EndpointSlice in default; when those cannot be read, any address but link-local on 443 and 6443, with a Warning event)")
	f.StringVar(&scraperNS, "metrics-scraper-namespace-selector", "", "label selector of the namespaces whose pods may scrape the model servers' metrics, e.g. kubernetes.io/metadata.name=monitoring (default: no scraper; only the evaluation's runners reach the servers)")
	f.StringVar(&scraperPods, "metrics-scraper-pod-selector", "", "label selector of the pods that may scrape the model servers' metrics, e.g. app.kubernetes.io/name=prometheus (alone: such pods in the evaluation's namespace; with --metrics-scraper-namespace-selector: in those namespaces)")
	f.IntVar(&concurrency, "max-concurrent-reconciles", 4, "evaluations reconciled in parallel")
	defaultStore.register(f)
	f.BoolVar(&devLog, "dev-log", false, "human-readable logs instead of JSON")
	return cmd
}

// parseCIDRs splits a comma-separated list of CIDRs (an address without a
// prefix length means that one address) and rejects anything else, so that a
// typo fails the manager at start instead of every runner NetworkPolicy.
func parseCIDRs(s string) ([]string, error) {
	var out []string
	for _, f := range strings.Split(s, ",") {
		f = strings.TrimSpace(f)
		if f == "" {
			continue
		}
		if ip := net.ParseIP(f); ip != nil {
			bits := 32
			if ip.To4() == nil {
				bits = 128
			}
			f = fmt.Sprintf("%s/%d", ip, bits)
		}
		if _, _, err := net.ParseCIDR(f); err != nil {
			return nil, fmt.Errorf("%q is not a CIDR such as 10.0.0.1/32", f)
		}
		out = append(out, f)
	}
	return out, nil
}

// parseScraper reads the metrics scraper's selectors (label selector
// syntax); both empty is no scraper.
func parseScraper(namespaces, pods string) (build.MetricsScraper, error) {
	var s build.MetricsScraper
	var err error
	if namespaces != "" {
		if s.NamespaceSelector, err = metav1.ParseToLabelSelector(namespaces); err != nil {
			return s, fmt.Errorf("--metrics-scraper-namespace-selector: %w", err)
		}
	}
	if pods != "" {
		if s.PodSelector, err = metav1.ParseToLabelSelector(pods); err != nil {
			return s, fmt.Errorf("--metrics-scraper-pod-selector: %w", err)
		}
	}
	return s, nil
}
