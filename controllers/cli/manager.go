package cli

import (
	"errors"
	"fmt"
	"net"
	"strings"

	"github.com/spf13/cobra"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/healthz"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"repot.dev/repot-operator/controllers"
	"repot.dev/repot-operator/controllers/build"
	"repot.dev/repot-operator/controllers/schedule"
)

func init() { register(newManagerCommand) }

func newManagerCommand() *cobra.Command {
	var (
		metricsAddr, probeAddr, namespace, image, apiCIDRs string
		leaderElect, devLog                                bool
		concurrency                                        int
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
				Metrics:                metricsserver.Options{BindAddress: metricsAddr},
				HealthProbeBindAddress: probeAddr,
				LeaderElection:         leaderElect,
				LeaderElectionID:       "repot-operator.repot.dev",
				Cache:                  controllers.CacheOptions(namespace, withKueue),
			})
			if err != nil {
				return fmt.Errorf("create manager: %w", err)
			}
			ctx := ctrl.SetupSignalHandler()
			opts := build.Options{Image: image, MaxConcurrentReconciles: concurrency}
			if opts.APIServerCIDRs, err = parseCIDRs(apiCIDRs); err != nil {
				return fmt.Errorf("--apiserver-cidrs: %w", err)
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
	f.StringVar(&metricsAddr, "metrics-bind-address", ":8080", "address of the Prometheus metrics endpoint (0 disables it)")
	f.StringVar(&probeAddr, "health-probe-bind-address", ":8081", "address of the /healthz and /readyz endpoints")
	f.BoolVar(&leaderElect, "leader-elect", false, "elect a leader so that only one replica reconciles")
	f.StringVar(&image, "runner-image", build.DefaultImage, "the project's image for runner pods, simulated servers and readiness sidecars")
	f.StringVar(&namespace, "namespace", "", "watch only this namespace (default: all namespaces)")
	f.StringVar(&apiCIDRs, "apiserver-cidrs", "", "comma-separated CIDRs of the API server that runner NetworkPolicies allow the ledger sidecar to reach (default: any address on 443 and 6443)")
	f.IntVar(&concurrency, "max-concurrent-reconciles", 4, "evaluations reconciled in parallel")
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
