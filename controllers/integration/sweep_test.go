package integration_test

import (
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	repotv1 "repot.dev/repot-operator/api/v1alpha1"
	revtesting "repot.dev/repot-operator/api/v1alpha1/testing"
	"repot.dev/repot-operator/controllers/build"
)

var _ = Describe("a sweep with spec.maxParallelModels", func() {
	It("runs one model at a time in spec order and deletes each server once its runs are recorded", func() {
		ns := createNamespace("sweep")
		ev := revtesting.MakeEvaluation("ev", ns).Shards(1).MaxParallelModels(1).
			Simulated("a", "weak", 1).SimulatedGPUs(1).
			Simulated("b", "strong", 2).SimulatedGPUs(1).Obj()
		Expect(k8s.Create(ctx, ev)).To(Succeed())
		servers := func(g Gomega) []string {
			var ds appsv1.DeploymentList
			g.Expect(k8s.List(ctx, &ds, client.InNamespace(ns))).To(Succeed())
			var out []string
			for _, d := range ds.Items {
				if d.DeletionTimestamp == nil {
					out = append(out, d.Name)
				}
			}
			return out
		}
		Eventually(servers).Should(Equal([]string{build.ServerName("ev", "a")}))
		eventuallyEval(ns, "ev", func(g Gomega, e *repotv1.RepotEvaluation) {
			g.Expect(e.Status.Models).To(HaveLen(2))
			g.Expect(model(g, e, 0).Phase).To(Equal(repotv1.ModelStarting))
			g.Expect(model(g, e, 1).Phase).To(Equal(repotv1.ModelQueued))
		})
		Consistently(servers).Should(Equal([]string{build.ServerName("ev", "a")}), "b waits for a's slot")

		setServerReady(ns, "ev", "a", true)
		Eventually(exists(&appsv1.Deployment{}, ns, build.ServerName("ev", "a"))).Should(BeTrue())
		eventuallyEval(ns, "ev", func(g Gomega, e *repotv1.RepotEvaluation) {
			g.Expect(model(g, e, 0).Phase).To(Equal(repotv1.ModelRunning))
			g.Expect(model(g, e, 0).RunningTime).NotTo(BeNil())
		})
		finishJob(ns, build.RunnerJobName("ev", "a"))
		Eventually(servers).Should(Equal([]string{build.ServerName("ev", "b")}), "a's server goes and b starts")
		eventuallyEval(ns, "ev", func(g Gomega, e *repotv1.RepotEvaluation) {
			a := model(g, e, 0)
			g.Expect(a.Phase).To(Equal(repotv1.ModelDone))
			g.Expect(a.CompletionTime).NotTo(BeNil())
			g.Expect(a.ServerDeletedTime).NotTo(BeNil())
			g.Expect(a.Server.State).To(Equal(repotv1.ServerStopped))
			g.Expect(model(g, e, 1).Phase).To(Equal(repotv1.ModelStarting))
		})
	})
})
