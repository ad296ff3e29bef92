package integration_test

import (
	"context"
	"sync"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"

	repotv1 "repot.dev/repot-operator/api/v1alpha1"
	revtesting "repot.dev/repot-operator/api/v1alpha1/testing"
	"repot.dev/repot-operator/contract"
	"repot.dev/repot-operator/controllers/build"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// laggingLedgers is a manager client whose lists of one namespace's
// ConfigMaps return them as they were when freeze was called: an informer
// cache that lags the API server, as one may by the difference of two
// watches, held still so that the test is deterministic.
type laggingLedgers struct {
	client.Client
	mu     sync.Mutex
	ns     string
	frozen map[string]corev1.ConfigMap
}

// freeze makes the ConfigMaps of ns read as the API server holds them now.
func (l *laggingLedgers) freeze(ns string) {
	var cms corev1.ConfigMapList
	Expect(k8s.List(ctx, &cms, client.InNamespace(ns))).To(Succeed())
	l.mu.Lock()
	defer l.mu.Unlock()
	l.ns, l.frozen = ns, map[string]corev1.ConfigMap{}
	for _, cm := range cms.Items {
		l.frozen[cm.Name] = cm
	}
}

func (l *laggingLedgers) List(ctx context.Context, list client.ObjectList, opts ...client.ListOption) error {
	if err := l.Client.List(ctx, list, opts...); err != nil {
		return err
	}
	cms, ok := list.(*corev1.ConfigMapList)
	l.mu.Lock()
	defer l.mu.Unlock()
	if !ok || l.frozen == nil {
		return nil
	}
	for i := range cms.Items {
		if f, ok := l.frozen[cms.Items[i].Name]; ok && cms.Items[i].Namespace == l.ns {
			cms.Items[i] = *f.DeepCopy()
		}
	}
	return nil
}

// These specs drive the paths by which an evaluation on a shared GPU pool
// gives back what it holds, on the manager with the shipped RBAC.
var _ = Describe("a good tenant of a shared GPU pool", func() {
	It("runs a Job that completed with an infrastructure error again, with only the shipped RBAC", func() {
		ns := createNamespace("infra-retry")
		startRunning(ns, revtesting.MakeEvaluation("ev", ns).Simulated("m", "strong", 1).Shards(1).Methods(repotv1.MethodPoT))
		var first batchv1.Job
		Expect(k8s.Get(ctx, key(ns, build.RunnerJobName("ev", "m")), &first)).To(Succeed())
		infra := rec("m", "p1", "pot", false, "", 0)
		infra.InfraError, infra.StoppedReason = "connection reset", contract.StopInfraError
		writeLedger(ns, build.LedgerName("ev", "m", 0), infra)
		finishJob(ns, build.RunnerJobName("ev", "m"))

		By("counting the retry in the status, which the runner cannot write")
		eventuallyEval(ns, "ev", func(g Gomega, e *repotv1.RepotEvaluation) {
			g.Expect(model(g, e, 0).InfraRetries).To(Equal(int32(1)))
			g.Expect(model(g, e, 0).InfraRetryJobUID).To(Equal(string(first.UID)))
		})
		By("replacing the completed Job with a new one")
		Eventually(func(g Gomega) {
			var j batchv1.Job
			g.Expect(k8s.Get(ctx, key(ns, build.RunnerJobName("ev", "m")), &j)).To(Succeed())
			g.Expect(j.UID).NotTo(Equal(first.UID))
		}).Should(Succeed())
		eventuallyEval(ns, "ev", func(g Gomega, e *repotv1.RepotEvaluation) {
			g.Expect(model(g, e, 0).InfraRetries).To(Equal(int32(1)))
			g.Expect(e.Status.Summary.State).To(Equal(repotv1.StateRunning))
		})
	})

	It("confirms Complete on the ledgers as stored, so an infrastructure error the cache has not seen yet is retried", func() {
		lag := &laggingLedgers{}
		Expect(mgr.Stop()).To(Succeed())
		var err error
		mgr, err = startManagerWithClient(managerCfg, clk, nil, func(c client.Client) client.Client { lag.Client = c; return lag })
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(func() { restartManager(nil) })

		ns := createNamespace("confirm")
		startRunning(ns, revtesting.MakeEvaluation("ev", ns).Simulated("m", "strong", 1).Shards(1).Methods(repotv1.MethodPoT))
		Eventually(exists(&corev1.ConfigMap{}, ns, build.LedgerName("ev", "m", 0))).Should(BeTrue())
		lag.freeze(ns)
		// The runner's last record, an infrastructure error, reaches the
		// ledger before its Job completes; the operator's cache shows the
		// completion but not the record.
		infra := rec("m", "p1", "pot", false, "", 0)
		infra.InfraError, infra.StoppedReason = "connection reset", contract.StopInfraError
		writeLedger(ns, build.LedgerName("ev", "m", 0), infra)
		finishJob(ns, build.RunnerJobName("ev", "m"))

		Eventually(func(g Gomega) {
			g.Expect(model(g, getEval(ns, "ev"), 0).InfraRetries).To(Equal(int32(1)))
		}).Should(Succeed(), "the infrastructure error was never retried")
		Expect(getEval(ns, "ev").Status.Summary.State).NotTo(Equal(repotv1.StateComplete))
	})
})
