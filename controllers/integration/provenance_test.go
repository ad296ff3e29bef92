package integration_test

import (
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	repotv1 "repot.dev/repot-operator/api/v1alpha1"
	revtesting "repot.dev/repot-operator/api/v1alpha1/testing"
	"repot.dev/repot-operator/contract"
	"repot.dev/repot-operator/controllers/build"
)

var _ = Describe("provenance in status", func() {
	It("records the server pod's image digest, the server args and the runner's report, and keeps the digest after the pod is gone", func() {
		ns := createNamespace("provenance")
		ev := revtesting.MakeEvaluation("ev", ns).Simulated("m", "strong", 1).Methods(repotv1.MethodPoT).Obj()
		Expect(k8s.Create(ctx, ev)).To(Succeed())
		Eventually(exists(&corev1.Service{}, ns, build.ServerName("ev", "m"))).Should(BeTrue())
		// The Deployment is created in the same pass as the Service, not
		// necessarily before it.
		Eventually(exists(&appsv1.Deployment{}, ns, build.ServerName("ev", "m"))).Should(BeTrue())
		const digest = "registry.example/repot@sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
		createServerPod(ns, "ev", "m", corev1.PodStatus{Phase: corev1.PodRunning, ContainerStatuses: []corev1.ContainerStatus{
			{Name: "server", Image: "repot:dev", ImageID: digest, Ready: true},
			{Name: "ready-check", Image: "repot:dev", ImageID: digest, Ready: true},
		}})
		setServerReady(ns, "ev", "m", true)
		ledgerName := build.LedgerName("ev", "m", 0)
		Eventually(exists(&corev1.ConfigMap{}, ns, ledgerName)).Should(BeTrue())

		By("the ledger sidecar copying the runner's provenance onto the ledger")
		var cm corev1.ConfigMap
		Expect(k8s.Get(ctx, key(ns, ledgerName), &cm)).To(Succeed())
		patch := client.MergeFrom(cm.DeepCopy())
		if cm.Annotations == nil {
			cm.Annotations = map[string]string{}
		}
		cm.Annotations[contract.LedgerProvenanceAnnotation] = `{"repot_version":"v9.9.9","repot_commit":"c0ffee",` +
			`"served_models":[{"id":"sim-strong","root":"repot-simulation/strong","max_model_len":131072}],` +
			`"request":{"temperature":0,"max_tokens":16384,"chat_template_kwargs":{"enable_thinking":false}},"system_prefix":"/no_think"}`
		Expect(k8s.Patch(ctx, &cm, patch)).To(Succeed())

		want := func(g Gomega, e *repotv1.RepotEvaluation) {
			g.Expect(e.Status.Models).To(HaveLen(1))
			p := e.Status.Models[0].Provenance
			g.Expect(p).NotTo(BeNil())
			g.Expect(p.Images).To(ConsistOf(
				repotv1.ContainerImage{Pod: "server", Container: "server", Image: "repot:dev", ImageID: digest},
				repotv1.ContainerImage{Pod: "server", Container: "ready-check", Image: "repot:dev", ImageID: digest},
			))
			g.Expect(p.ServerArgs).To(Equal(build.ServerArgs(&e.Spec.Models[0])))
			g.Expect(p.ServedModels).To(Equal([]repotv1.ServedModel{{ID: "sim-strong", Root: "repot-simulation/strong", MaxModelLen: ptr.To[int64](131072)}}))
			g.Expect(p.Sampling).To(Equal([]repotv1.NameValue{
				{Name: "max_tokens", Value: "16384"}, {Name: "system_prefix", Value: "/no_think"}, {Name: "temperature", Value: "0"},
			}))
			g.Expect(p.ChatTemplateKwargs).To(Equal([]repotv1.NameValue{{Name: "enable_thinking", Value: "false"}}))
			g.Expect(p.RepotVersion).To(Equal("v9.9.9"))
			g.Expect(p.RepotCommit).To(Equal("c0ffee"))
		}
		eventuallyEval(ns, "ev", want)

		By("the server pod going away")
		var pods corev1.PodList
		Expect(k8s.List(ctx, &pods, client.InNamespace(ns), client.MatchingLabels(build.ServerSelector("ev", "m")))).To(Succeed())
		Expect(pods.Items).To(HaveLen(1))
		Expect(k8s.Delete(ctx, &pods.Items[0], client.GracePeriodSeconds(0))).To(Succeed())
		Eventually(exists(&corev1.Pod{}, ns, pods.Items[0].Name)).Should(BeFalse())
		poke(ns, "ev")
		Consistently(func(g Gomega) { want(g, getEval(ns, "ev")) }).Should(Succeed())
	})

	It("records the server args and the operator build when the server is created, and an operator upgrade rewrites neither, in flight or finished", func() {
		withBuild := func(version, commit, image string) func(build.Options) build.Options {
			return func(o build.Options) build.Options {
				o.OperatorVersion, o.OperatorCommit = version, commit
				if image != "" {
					o.Image = image
				}
				return o
			}
		}
		restartManagerWith(withBuild("v0.4.0", "aaaa", ""), nil)
		DeferCleanup(func() { restartManagerWith(nil, nil) })
		ns := createNamespace("provenance-upgrade")
		ev := revtesting.MakeEvaluation("ev", ns).Simulated("m", "strong", 1).Methods(repotv1.MethodPoT).Shards(1)
		startRunning(ns, ev)
		var created repotv1.ModelProvenance
		eventuallyEval(ns, "ev", func(g Gomega, e *repotv1.RepotEvaluation) {
			g.Expect(e.Status.Models).To(HaveLen(1))
			p := e.Status.Models[0].Provenance
			g.Expect(p).NotTo(BeNil())
			g.Expect(p.ServerArgs).To(Equal(build.ServerArgs(&e.Spec.Models[0])))
			g.Expect(p.OperatorVersion).To(Equal("v0.4.0"))
			g.Expect(p.OperatorCommit).To(Equal("aaaa"))
			created = *p.DeepCopy()
		})
		unchanged := func(want repotv1.ModelProvenance) func(g Gomega) {
			return func(g Gomega) {
				e := getEval(ns, "ev")
				g.Expect(e.Status.Models).To(HaveLen(1))
				g.Expect(e.Status.Models[0].Provenance).To(Equal(&want))
			}
		}

		By("an upgrade while the evaluation runs")
		restartManagerWith(withBuild("v0.5.0", "bbbb", "repot-operator:next"), nil)
		poke(ns, "ev")
		Consistently(unchanged(created)).Should(Succeed())

		By("the evaluation finishing: the server goes, the record stays")
		writeLedger(ns, build.LedgerName("ev", "m", 0), rec("m", "p1", "pot", true, contract.RouteInitialSuccess, 1))
		finishJob(ns, build.RunnerJobName("ev", "m"))
		eventuallyEval(ns, "ev", func(g Gomega, e *repotv1.RepotEvaluation) {
			g.Expect(condition(e, repotv1.ConditionComplete).Status).To(Equal(metav1.ConditionTrue))
		})
		Eventually(exists(&appsv1.Deployment{}, ns, build.ServerName("ev", "m"))).Should(BeFalse())
		Consistently(unchanged(created)).Should(Succeed())

		By("an upgrade after an earlier operator recorded other args for the finished evaluation")
		earlier := *created.DeepCopy()
		earlier.ServerArgs = []string{"repot", "sim-server", "--profile", "strong"}
		earlier.OperatorVersion, earlier.OperatorCommit = "v0.3.0", "0ld"
		restartManagerWith(withBuild("v0.6.0", "cccc", "repot-operator:later"), func() {
			e := getEval(ns, "ev")
			e.Status.Models[0].Provenance = earlier.DeepCopy()
			Expect(k8s.Status().Update(ctx, e)).To(Succeed())
		})
		poke(ns, "ev")
		Consistently(unchanged(earlier)).Should(Succeed())
	})
})
