package integration_test

import (
	"github.com/google/go-cmp/cmp"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	repotv1 "repot.dev/repot-operator/api/v1alpha1"
	revtesting "repot.dev/repot-operator/api/v1alpha1/testing"
	"repot.dev/repot-operator/contract"
	"repot.dev/repot-operator/controllers/build"
)

// ledgersSealed says whether every ledger of the evaluation carries the
// sealed annotation as the API server stores it, with its records.
func ledgersSealed(ns string, n int) func(g Gomega) {
	return func(g Gomega) {
		var cms corev1.ConfigMapList
		g.Expect(k8s.List(ctx, &cms, client.InNamespace(ns),
			client.MatchingLabels{build.LabelEvaluation: "ev", build.LabelComponent: build.ComponentLedger})).To(Succeed())
		g.Expect(cms.Items).To(HaveLen(n))
		for _, cm := range cms.Items {
			g.Expect(cm.Annotations).To(HaveKeyWithValue(build.AnnotationSealed, build.SealedValue), cm.Name)
			g.Expect(cm.Data[contract.LedgerRecordsKey]).NotTo(BeEmpty(), "the API server keeps %s's records", cm.Name)
		}
	}
}

// cachedWithoutData says whether the manager's cache holds the ledgers
// without their data.
func cachedWithoutData(ns string, n int) func(g Gomega) {
	return func(g Gomega) {
		var cms corev1.ConfigMapList
		g.Expect(mgr.GetCache().List(ctx, &cms, client.InNamespace(ns),
			client.MatchingLabels{build.LabelEvaluation: "ev", build.LabelComponent: build.ComponentLedger})).To(Succeed())
		g.Expect(cms.Items).To(HaveLen(n))
		for _, cm := range cms.Items {
			g.Expect(cm.Data).To(BeNil(), "the cache holds %s's data", cm.Name)
		}
	}
}

var _ = Describe("sealed ledgers", func() {
	It("seals a finished evaluation's ledgers, drops their data from the cache, and keeps the status, also after a restart", func() {
		ns := createNamespace("seal")
		startRunning(ns, revtesting.MakeEvaluation("ev", ns).Simulated("m", "strong", 1).Shards(2).
			Methods(repotv1.MethodPoT, repotv1.MethodRePoT))
		writeLedger(ns, build.LedgerName("ev", "m", 0),
			rec("m", "p1", "pot", true, contract.RouteInitialSuccess, 1),
			rec("m", "p2", "pot", false, contract.RouteNoExtraCall, 1),
		)
		writeLedger(ns, build.LedgerName("ev", "m", 1),
			rec("m", "p1", "repot", true, contract.RouteInitialSuccess, 1),
			rec("m", "p2", "repot", true, contract.RouteSuffixRepair, 2),
		)
		Consistently(ledgersSealed(ns, 2), "300ms").ShouldNot(Succeed(), "a running evaluation's ledgers are not sealed")
		finishJob(ns, build.RunnerJobName("ev", "m"))
		eventuallyEval(ns, "ev", func(g Gomega, e *repotv1.RepotEvaluation) {
			g.Expect(e.Status.Summary.State).To(Equal(repotv1.StateComplete))
			g.Expect(e.Status.CompletionTime).NotTo(BeNil())
			g.Expect(e.Status.Progress.RunsDone).To(Equal(int32(4)))
		})
		before := getEval(ns, "ev").Status

		By("sealing the ledgers once the completion is stored")
		Eventually(ledgersSealed(ns, 2)).Should(Succeed())
		Eventually(cachedWithoutData(ns, 2)).Should(Succeed())
		poke(ns, "ev")
		Consistently(func(g Gomega) {
			g.Expect(cmp.Diff(before, getEval(ns, "ev").Status)).To(BeEmpty())
		}).Should(Succeed(), "the sealed evaluation's passes read the ledgers from the API server")

		By("restarting the manager with the results wiped from the status")
		restartManager(func() {
			e := getEval(ns, "ev")
			e.Status.Progress, e.Status.Summary, e.Status.Scaling = nil, nil, nil
			for i := range e.Status.Models {
				e.Status.Models[i].Methods, e.Status.Models[i].RunsDone = nil, 0
			}
			Expect(k8s.Status().Update(ctx, e)).To(Succeed())
		})
		eventuallyEval(ns, "ev", func(g Gomega, e *repotv1.RepotEvaluation) {
			g.Expect(cmp.Diff(before, e.Status)).To(BeEmpty())
		})
		Eventually(cachedWithoutData(ns, 2)).Should(Succeed())
		ledgersSealed(ns, 2)(Default)
	})
})
