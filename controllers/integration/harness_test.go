package integration_test

import (
	"context"

	"k8s.io/client-go/rest"
	clocktesting "k8s.io/utils/clock/testing"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"repot.dev/repot-operator/controllers"
	"repot.dev/repot-operator/controllers/build"
	"repot.dev/repot-operator/controllers/integration/framework"
)

// testImage is the project image the tests expect in pods.
const testImage = "repot-operator:test"

// repoRoot finds the module root (the directory holding go.mod).
var repoRoot = framework.ModuleRoot

// startControlPlane starts etcd and kube-apiserver from bin/ with the CRDs
// from config/crd/bases and, where the module cache has them, Kueue's.
func startControlPlane(root string) (*framework.Framework, *rest.Config, error) {
	f := &framework.Framework{
		// The operator's CRDs, and a minimal PodMonitor CRD (the
		// Prometheus Operator's kind the operator applies).
		CRDDirs: []string{framework.DefaultCRDDir, podMonitorCRDDir},
		// Room for more Services than the default /24 allows (the
		// benchmark makes 400).
		APIServerFlags: map[string]string{"service-cluster-ip-range": "10.0.0.0/16"},
	}
	// Kueue's CRDs, so that the Workload contract is checked by the API
	// server (the Kueue tests skip when they are missing).
	if dir, why := kueueCRDs(root); why == "" {
		f.CRDDirs = append(f.CRDDirs, dir)
	} else {
		kueueMissing = why
	}
	cfg, err := f.Init()
	if err != nil {
		return nil, nil, err
	}
	return f, cfg, nil
}

// startManager starts the operator's manager the way `repot manager` does
// (same cache options, same setup), with an injected clock.
func startManager(cfg *rest.Config, clk *clocktesting.FakeClock, wrap func(build.Options) build.Options) (*framework.Manager, error) {
	return startManagerWithClient(cfg, clk, wrap, nil)
}

// startManagerWithClient is startManager whose manager's client (the
// cached one the reconcilers read the world through) wrapClient wraps, so
// that a test can make the cache lag the API server.
func startManagerWithClient(cfg *rest.Config, clk *clocktesting.FakeClock, wrap func(build.Options) build.Options, wrapClient func(client.Client) client.Client) (*framework.Manager, error) {
	return startManagerIn("", cfg, clk, wrap, wrapClient)
}

// startManagerIn is startManagerWithClient for a manager that watches
// namespace alone (all namespaces when it is ""), as `repot manager
// --namespace` runs.
func startManagerIn(namespace string, cfg *rest.Config, clk *clocktesting.FakeClock, wrap func(build.Options) build.Options, wrapClient func(client.Client) client.Client) (*framework.Manager, error) {
	return startManagerWrapped(namespace, cfg, clk, wrap, wrapClient, nil)
}

// startManagerWrapped is startManagerIn whose reconciler wrapReconciler
// wraps (the benchmark's timing), as controllers.SetupWithManager allows.
func startManagerWrapped(namespace string, cfg *rest.Config, clk *clocktesting.FakeClock, wrap func(build.Options) build.Options, wrapClient func(client.Client) client.Client, wrapReconciler controllers.ReconcilerWrapper) (*framework.Manager, error) {
	scheme, err := controllers.NewScheme()
	if err != nil {
		return nil, err
	}
	opts := build.Options{Image: testImage}
	if clk != nil {
		opts.Clock = clk
	}
	if wrap != nil {
		opts = wrap(opts)
	}
	mo := ctrl.Options{Scheme: scheme, Cache: controllers.CacheOptions(namespace, true), NewClient: framework.WrappedClient(wrapClient)}
	return framework.StartManager(cfg, mo,
		func(ctx context.Context, mgr ctrl.Manager) error {
			if wrapReconciler != nil {
				return controllers.SetupWithManager(ctx, mgr, opts, wrapReconciler)
			}
			return controllers.SetupWithManager(ctx, mgr, opts)
		})
}

func newClient(cfg *rest.Config) (client.Client, error) {
	scheme, err := controllers.NewScheme()
	if err != nil {
		return nil, err
	}
	return client.New(cfg, client.Options{Scheme: scheme})
}
