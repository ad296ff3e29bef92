package integration_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"time"

	"go.uber.org/zap/zapcore"
	"k8s.io/client-go/rest"
	clocktesting "k8s.io/utils/clock/testing"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/config"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	logf "sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"repot.dev/repot-operator/controllers"
	"repot.dev/repot-operator/controllers/build"
)

// testImage is the project image the tests expect in pods.
const testImage = "repot-operator:test"

// repoRoot finds the module root (the directory holding go.mod).
func repoRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", fmt.Errorf("no go.mod above the working directory")
		}
		dir = parent
	}
}

// controlPlaneMissing says why envtest cannot run, or "" when it can: the
// real kube-apiserver and etcd must have been built into bin/ by
// hack/build-cluster-bins.sh.
func controlPlaneMissing(root string) string {
	for _, b := range []string{"kube-apiserver", "etcd"} {
		if _, err := os.Stat(filepath.Join(root, "bin", b)); err != nil {
			return fmt.Sprintf("bin/%s is missing: run `hack/build-cluster-bins.sh envtest` (or `make envtest-bin`) to build the control plane for the controller tests", b)
		}
	}
	return ""
}

// startControlPlane starts etcd and kube-apiserver from bin/ with the CRDs
// from config/crd/bases.
func startControlPlane(root string) (*envtest.Environment, *rest.Config, error) {
	logf.SetLogger(zap.New(zap.WriteTo(os.Stderr), zap.Level(zapLevel())))
	env := &envtest.Environment{
		BinaryAssetsDirectory: filepath.Join(root, "bin"),
		CRDDirectoryPaths:     []string{filepath.Join(root, "config", "crd", "bases")},
		ErrorIfCRDPathMissing: true,
	}
	// Kueue's CRDs, so that the Workload contract is checked by the API
	// server (the Kueue tests skip when they are missing).
	if dir, why := kueueCRDs(root); why == "" {
		env.CRDDirectoryPaths = append(env.CRDDirectoryPaths, dir)
	} else {
		kueueMissing = why
	}
	// Room for more Services than the default /24 allows (the benchmark
	// makes 400).
	env.ControlPlane.GetAPIServer().Configure().Set("service-cluster-ip-range", "10.0.0.0/16")
	cfg, err := env.Start()
	if err != nil {
		_ = env.Stop() // a CRD refused after the control plane started
		return nil, nil, fmt.Errorf("start envtest: %w", err)
	}
	cfg.QPS, cfg.Burst = 500, 1000
	return env, cfg, nil
}

// runningManager is a started manager and the means to stop it.
type runningManager struct {
	cancel context.CancelFunc
	done   chan error
	// cached reads from the manager's informer cache: no request to the
	// API server.
	cached client.Reader
}

// stop stops the manager and waits for it.
func (m *runningManager) stop() error {
	m.cancel()
	select {
	case err := <-m.done:
		return err
	case <-time.After(30 * time.Second):
		buf := make([]byte, 1<<20)
		n := runtime.Stack(buf, true)
		path := filepath.Join(os.TempDir(), fmt.Sprintf("repot-manager-stop-%d.txt", time.Now().UnixNano()))
		_ = os.WriteFile(path, buf[:n], 0o644)
		return fmt.Errorf("manager did not stop in 30s (goroutines in %s)", path)
	}
}

// startManager starts the operator's manager the way `repot manager` does
// (same cache options, same setup), with an injected clock.
func startManager(cfg *rest.Config, clk *clocktesting.FakeClock, wrap func(build.Options) build.Options) (*runningManager, error) {
	scheme, err := controllers.NewScheme()
	if err != nil {
		return nil, err
	}
	mgr, err := ctrl.NewManager(cfg, ctrl.Options{
		Scheme:                 scheme,
		Metrics:                metricsserver.Options{BindAddress: "0"},
		HealthProbeBindAddress: "0",
		Cache:                  controllers.CacheOptions("", true),
		Controller:             ctrlConfigSkipNameValidation(),
	})
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(context.Background())
	opts := build.Options{Image: testImage}
	if clk != nil {
		opts.Clock = clk
	}
	if wrap != nil {
		opts = wrap(opts)
	}
	if err := controllers.SetupWithManager(ctx, mgr, opts); err != nil {
		cancel()
		return nil, err
	}
	m := &runningManager{cancel: cancel, done: make(chan error, 1), cached: mgr.GetCache()}
	go func() { m.done <- mgr.Start(ctx) }()
	return m, nil
}

func newClient(cfg *rest.Config) (client.Client, error) {
	scheme, err := controllers.NewScheme()
	if err != nil {
		return nil, err
	}
	return client.New(cfg, client.Options{Scheme: scheme})
}

// zapLevel logs errors only unless REPOT_TEST_VERBOSE is set.
func zapLevel() zapcore.Level {
	if os.Getenv("REPOT_TEST_VERBOSE") != "" {
		return zapcore.DebugLevel
	}
	return zapcore.ErrorLevel
}

// ctrlConfigSkipNameValidation lets a test start a second manager (a
// restart) in the same process: controller names must otherwise be unique.
func ctrlConfigSkipNameValidation() config.Controller {
	return config.Controller{SkipNameValidation: ptr.To(true)}
}
