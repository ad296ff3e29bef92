package integration_test

import (
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"

	repotv1 "repot.dev/repot-operator/api/v1alpha1"
	revtesting "repot.dev/repot-operator/api/v1alpha1/testing"
	"repot.dev/repot-operator/contract"
	"repot.dev/repot-operator/controllers/build"
)

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

		By("counting the retry on the first ledger, by a patch the shipped role allows")
		Eventually(func(g Gomega) {
			var cm corev1.ConfigMap
			g.Expect(k8s.Get(ctx, key(ns, build.LedgerName("ev", "m", 0)), &cm)).To(Succeed())
			g.Expect(cm.Annotations).To(HaveKeyWithValue(build.AnnotationInfraRetries, "1"))
			g.Expect(cm.Annotations).To(HaveKeyWithValue(build.AnnotationInfraRetryOf, string(first.UID)))
			g.Expect(cm.Data[contract.LedgerRecordsKey]).NotTo(BeEmpty(), "the patch kept the records")
		}).Should(Succeed())
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
})
