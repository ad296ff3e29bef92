package integration_test

import (
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	revtesting "repot.dev/repot-operator/api/v1alpha1/testing"
	"repot.dev/repot-operator/controllers/build"
)

// podMonitorCRDDir holds the minimal PodMonitor CRD written for these tests
// (testdata/crds): envtest has no Prometheus Operator.
const podMonitorCRDDir = "controllers/integration/testdata/crds"

// The operator applies a vLLM model's PodMonitor (server-side apply of an
// unstructured object, controllers/podmonitor.go) with the permissions it
// ships with: the suite's manager runs as the shipped ClusterRole.
var _ = Describe("PodMonitors", func() {
	getPodMonitor := func(g Gomega, ns, name string) *unstructured.Unstructured {
		u := &unstructured.Unstructured{}
		u.SetAPIVersion("monitoring.coreos.com/v1")
		u.SetKind("PodMonitor")
		g.ExpectWithOffset(1, k8s.Get(ctx, key(ns, name), u)).To(Succeed())
		return u
	}
	// wantSpec is the spec the operator applies for a model's server.
	wantSpec := func(model string) map[string]any {
		return map[string]any{
			"selector": map[string]any{"matchLabels": map[string]any{
				build.LabelEvaluation: "ev", build.LabelModel: model, build.LabelComponent: build.ComponentServer}},
			"podMetricsEndpoints": []any{
				map[string]any{"port": "http", "path": "/metrics", "interval": "30s"},
				map[string]any{"port": "telemetry", "path": "/metrics", "interval": "30s"},
			},
		}
	}
	// bump changes spec.stalledAfterSeconds, a field that may change at any
	// time: the evaluation's generation changes and the PodMonitor
	// controller reconciles it.
	bump := func(ns string, s int32) {
		e := getEval(ns, "ev")
		p := client.MergeFrom(e.DeepCopy())
		e.Spec.StalledAfterSeconds = ptr.To(s)
		ExpectWithOffset(1, k8s.Patch(ctx, e, p)).To(Succeed())
	}

	It("creates a model's PodMonitor, restores it when it was changed, applies it again without writing, and deletes it when no longer asked for", func() {
		ns := createNamespace("podmonitor")
		// Suspended and not started, so that its spec (spec.models) may
		// still change; the PodMonitors do not wait for the start.
		ev := revtesting.MakeEvaluation("ev", ns).VLLM("a", "org/a").PodMonitor(true).VLLM("b", "org/b").PodMonitor(true).Suspend(true).Obj()
		Expect(k8s.Create(ctx, ev)).To(Succeed())
		ev = getEval(ns, "ev")
		a, b := build.ServerName("ev", "a"), build.ServerName("ev", "b")

		By("creating each model's PodMonitor, owned by the evaluation and applied by the operator")
		var aVersion string
		Eventually(func(g Gomega) {
			for model, name := range map[string]string{"a": a, "b": b} {
				pm := getPodMonitor(g, ns, name)
				g.Expect(pm.Object["spec"]).To(Equal(wantSpec(model)), name)
				g.Expect(pm.GetOwnerReferences()).To(ConsistOf(HaveField("UID", ev.UID)), name)
				g.Expect(pm.GetLabels()).To(HaveKeyWithValue(build.LabelModel, model), name)
				g.Expect(pm.GetManagedFields()).To(ContainElement(And(
					HaveField("Manager", build.ManagerName), HaveField("Operation", metav1.ManagedFieldsOperationApply))), name)
			}
			aVersion = getPodMonitor(g, ns, a).GetResourceVersion()
		}).Should(Succeed())

		By("restoring a PodMonitor someone else changed, on the evaluation's next change")
		Eventually(func() error {
			pm := getPodMonitor(Default, ns, b)
			eps := pm.Object["spec"].(map[string]any)["podMetricsEndpoints"].([]any)
			eps[0].(map[string]any)["interval"] = "5s"
			pm.Object["spec"].(map[string]any)["selector"].(map[string]any)["matchLabels"].(map[string]any)[build.LabelModel] = "other"
			return k8s.Update(ctx, pm, client.FieldOwner("someone-else"))
		}).Should(Succeed())
		Expect(getPodMonitor(Default, ns, b).Object["spec"]).NotTo(Equal(wantSpec("b")))
		bump(ns, 900)
		Eventually(func(g Gomega) {
			g.Expect(getPodMonitor(g, ns, b).Object["spec"]).To(Equal(wantSpec("b")))
		}).Should(Succeed())

		By("applying an unchanged PodMonitor without writing it")
		// The pass that restored b applied a before it (models in order):
		// a's resourceVersion is the one it was created with.
		Expect(getPodMonitor(Default, ns, a).GetResourceVersion()).To(Equal(aVersion))
		bump(ns, 901)
		Consistently(func(g Gomega) {
			g.Expect(getPodMonitor(g, ns, a).GetResourceVersion()).To(Equal(aVersion))
		}).Should(Succeed())

		By("deleting the PodMonitor of a model that no longer asks for one")
		e := getEval(ns, "ev")
		p := client.MergeFrom(e.DeepCopy())
		e.Spec.Models[1].VLLM.PodMonitor = false
		Expect(k8s.Patch(ctx, e, p)).To(Succeed())
		Eventually(func() bool {
			pm := &unstructured.Unstructured{}
			pm.SetAPIVersion("monitoring.coreos.com/v1")
			pm.SetKind("PodMonitor")
			return exists(pm, ns, b)()
		}).Should(BeFalse())
		Expect(getPodMonitor(Default, ns, a).GetResourceVersion()).To(Equal(aVersion))
	})
})
