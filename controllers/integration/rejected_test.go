package integration_test

import (
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	repotv1 "repot.dev/repot-operator/api/v1alpha1"
	revtesting "repot.dev/repot-operator/api/v1alpha1/testing"
	"repot.dev/repot-operator/controllers/build"
)

var _ = Describe("a spec whose objects the API server rejects", func() {
	It("stalls with the API server's reason, keeps the spec editable, and recovers once it is fixed", func() {
		ns := createNamespace("rejected")
		ev := revtesting.MakeEvaluation("ev", ns).VLLM("big", "org/model").NodeLabel("not a label key!", "x").Obj()
		Expect(k8s.Create(ctx, ev)).To(Succeed())

		eventuallyEval(ns, "ev", func(g Gomega, e *repotv1.RepotEvaluation) {
			c := condition(e, repotv1.ConditionStalled)
			g.Expect(c.Status).To(Equal(metav1.ConditionTrue))
			g.Expect(c.Reason).To(Equal(repotv1.ReasonChildRejected))
			g.Expect(c.Message).To(ContainSubstring("nodeSelector"))
			g.Expect(c.Message).To(ContainSubstring("fix the spec"))
			g.Expect(e.Status.Summary.State).To(Equal(repotv1.StateStalled))
			g.Expect(e.Status.StartTime).To(BeNil())
		})
		Expect(exists(&appsv1.Deployment{}, ns, build.ServerName("ev", "big"))()).To(BeFalse())

		By("fixing the spec, which the rejection left editable")
		e := getEval(ns, "ev")
		p := client.MergeFrom(e.DeepCopy())
		e.Spec.Models[0].VLLM.NodeSelector[0].Key = "example.com/pool"
		Expect(k8s.Patch(ctx, e, p)).To(Succeed())

		Eventually(exists(&appsv1.Deployment{}, ns, build.ServerName("ev", "big"))).Should(BeTrue())
		eventuallyEval(ns, "ev", func(g Gomega, e *repotv1.RepotEvaluation) {
			g.Expect(condition(e, repotv1.ConditionStalled).Status).To(Equal(metav1.ConditionFalse))
			g.Expect(e.Status.StartTime).NotTo(BeNil())
		})
	})

	It("fails a started evaluation, whose spec cannot change, and releases its server", func() {
		ns := createNamespace("rejected-started")
		ev := revtesting.MakeEvaluation("ev", ns).Simulated("m", "strong", 1).Shards(1).Obj()
		ev.Spec.Runner.Resources = &repotv1.ResourceRequirements{
			Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("8")},
			Limits:   corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1")},
		}
		Expect(k8s.Create(ctx, ev)).To(Succeed())
		Eventually(exists(&appsv1.Deployment{}, ns, build.ServerName("ev", "m"))).Should(BeTrue())
		setServerReady(ns, "ev", "m", true)

		eventuallyEval(ns, "ev", func(g Gomega, e *repotv1.RepotEvaluation) {
			c := condition(e, repotv1.ConditionFailed)
			g.Expect(c.Status).To(Equal(metav1.ConditionTrue))
			g.Expect(c.Reason).To(Equal(repotv1.ReasonChildRejected))
			g.Expect(c.Message).To(ContainSubstring("resources"))
			g.Expect(e.Status.Summary.State).To(Equal(repotv1.StateFailed))
			g.Expect(e.Status.CompletionTime).NotTo(BeNil())
		})
		Eventually(exists(&appsv1.Deployment{}, ns, build.ServerName("ev", "m"))).Should(BeFalse())
		Expect(exists(&batchv1.Job{}, ns, build.RunnerJobName("ev", "m"))()).To(BeFalse())
	})
})

var _ = Describe("a spec edited before the start", func() {
	It("deletes the children of a removed model and updates the runner Role to the new models", func() {
		ns := createNamespace("respec")
		ev := revtesting.MakeEvaluation("ev", ns).VLLM("big", "org/model").NodeLabel("not a label key!", "x").Shards(1).Obj()
		Expect(k8s.Create(ctx, ev)).To(Succeed())
		eventuallyEval(ns, "ev", func(g Gomega, e *repotv1.RepotEvaluation) {
			g.Expect(condition(e, repotv1.ConditionStalled).Reason).To(Equal(repotv1.ReasonChildRejected))
			g.Expect(e.Status.StartTime).To(BeNil())
		})
		Eventually(exists(&corev1.Service{}, ns, build.ServerName("ev", "big"))).Should(BeTrue())
		Eventually(exists(&rbacv1.Role{}, ns, build.RunnerAccessName("ev"))).Should(BeTrue())

		By("replacing the model while the spec is still editable")
		e := getEval(ns, "ev")
		// A ledger of the model to be removed, as its runner Job would have
		// made before the start was undone: the operator deletes it too
		// (with only the shipped RBAC).
		bigLedger := build.LedgerConfigMaps(e, &e.Spec.Models[0])[0]
		Expect(k8s.Create(ctx, bigLedger)).To(Succeed())
		p := client.MergeFrom(e.DeepCopy())
		e.Spec.Models = revtesting.MakeEvaluation("ev", ns).Simulated("m", "strong", 1).Obj().Spec.Models
		Expect(k8s.Patch(ctx, e, p)).To(Succeed())

		Eventually(exists(&appsv1.Deployment{}, ns, build.ServerName("ev", "m"))).Should(BeTrue())
		Eventually(exists(&corev1.Service{}, ns, build.ServerName("ev", "big"))).Should(BeFalse(), "the removed model's Service stays")
		Eventually(exists(&corev1.ConfigMap{}, ns, bigLedger.Name)).Should(BeFalse(), "the removed model's ledger stays")
		Eventually(func(g Gomega) {
			var r rbacv1.Role
			g.Expect(k8s.Get(ctx, key(ns, build.RunnerAccessName("ev")), &r)).To(Succeed())
			g.Expect(r.Rules[0].ResourceNames).To(Equal([]string{build.LedgerName("ev", "m", 0)}))
		}).Should(Succeed())
	})
})
