package integration_test

import (
	"context"
	"testing"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"k8s.io/client-go/rest"
	clocktesting "k8s.io/utils/clock/testing"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"repot.dev/repot-operator/controllers/build"
	"repot.dev/repot-operator/controllers/integration/framework"
)

// The controller tests run the operator's manager against a real
// kube-apiserver and etcd (envtest). There is no controller-manager, no
// scheduler and no kubelet: the tests play those parts, marking Deployments
// ready, creating server pods and finishing Jobs, and writing ledgers as a
// runner's ledger sidecar would.
var (
	testEnv *framework.Framework
	// cfg is the admin's config: the tests' own client (k8s) acts as the
	// cluster's users and the parts that do not run here.
	cfg *rest.Config
	// managerCfg impersonates the operator's ServiceAccount bound to the
	// ClusterRole the project ships (config/rbac/role.yaml), and nothing
	// else: every spec runs the manager with the permissions a user's
	// cluster gives it, so a verb the markers lack fails here first.
	managerCfg *rest.Config
	k8s        client.Client
	clk        *clocktesting.FakeClock
	mgr        *framework.Manager
	ctx        = context.Background()
)

func TestControllers(t *testing.T) {
	RegisterFailHandler(Fail)
	RunSpecs(t, "controllers (envtest)")
}

var _ = BeforeSuite(func() {
	root, err := repoRoot()
	Expect(err).NotTo(HaveOccurred())
	if why := framework.BinariesMissing(root); why != "" {
		Skip(why)
	}
	testEnv, cfg, err = startControlPlane(root)
	Expect(err).NotTo(HaveOccurred())
	k8s, err = newClient(cfg)
	Expect(err).NotTo(HaveOccurred())
	managerCfg, err = testEnv.ConfigAsShippedManager(ctx, "repot-operator-manager")
	Expect(err).NotTo(HaveOccurred())
	// The admission policies the installs ship (config/admission), so that
	// every spec's manager writes under them as on a user's cluster.
	id := framework.ManagerServiceAccount
	Expect(testEnv.InstallShippedAdmissionPolicies(ctx, "system:serviceaccount:"+id.ServiceAccountNamespace+":"+id.ServiceAccount)).To(Succeed())
	waitForAdmissionPolicies()
	clk = clocktesting.NewFakeClock(time.Date(2026, 11, 30, 8, 0, 0, 0, time.UTC))
	mgr, err = startManager(managerCfg, clk, nil)
	Expect(err).NotTo(HaveOccurred())
})

var _ = AfterSuite(func() {
	// Stop the control plane even when the manager does not stop, so no
	// etcd or kube-apiserver outlives the tests.
	var stopErr error
	if mgr != nil {
		stopErr = mgr.Stop()
	}
	if testEnv != nil {
		Expect(testEnv.Teardown()).To(Succeed())
	}
	Expect(stopErr).NotTo(HaveOccurred())
})

// restartManager stops the running manager, runs meanwhile (if any) while
// no manager runs, and starts a fresh one (empty caches, nothing
// remembered).
func restartManager(meanwhile func()) { restartManagerWith(nil, meanwhile) }

// restartManagerWith is restartManager with the new manager's options
// changed by wrap (nil: the suite's options), as an operator upgrade
// changes them. A spec that restarts with other options restarts with nil
// when it ends, so that the next spec finds the suite's manager.
func restartManagerWith(wrap func(build.Options) build.Options, meanwhile func()) {
	ExpectWithOffset(1, mgr.Stop()).To(Succeed())
	if meanwhile != nil {
		meanwhile()
	}
	var err error
	mgr, err = startManager(managerCfg, clk, wrap)
	ExpectWithOffset(1, err).NotTo(HaveOccurred())
}

func init() {
	SetDefaultEventuallyTimeout(20 * time.Second)
	SetDefaultEventuallyPollingInterval(50 * time.Millisecond)
	SetDefaultConsistentlyDuration(time.Second)
	SetDefaultConsistentlyPollingInterval(100 * time.Millisecond)
}
