package integration_test

import (
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	kueue "sigs.k8s.io/kueue/apis/kueue/v1beta2"

	repotv1 "repot.dev/repot-operator/api/v1alpha1"
	revtesting "repot.dev/repot-operator/api/v1alpha1/testing"
	"repot.dev/repot-operator/contract"
	"repot.dev/repot-operator/controllers/build"
	"repot.dev/repot-operator/controllers/kueueadapter"
)

// setBudget patches spec.budget, as a person raising it would.
func setBudget(ns, name string, b *repotv1.BudgetSpec) {
	e := getEval(ns, name)
	p := client.MergeFrom(e.DeepCopy())
	e.Spec.Budget = b
	ExpectWithOffset(1, k8s.Patch(ctx, e, p)).To(Succeed())
}

// expectStoppedByBudget waits until the runner Job and the server are gone
// and the evaluation reads BudgetExhausted with runsDone runs kept.
func expectStoppedByBudget(ns string, runsDone int32, limit string) {
	EventuallyWithOffset(1, exists(&batchv1.Job{}, ns, build.RunnerJobName("ev", "m"))).Should(BeFalse(), "the runner Job is deleted")
	EventuallyWithOffset(1, exists(&appsv1.Deployment{}, ns, build.ServerName("ev", "m"))).Should(BeFalse(), "the server is deleted")
	eventuallyEval(ns, "ev", func(g Gomega, e *repotv1.RepotEvaluation) {
		g.Expect(e.Status.Summary.State).To(Equal(repotv1.StateBudgetExhausted))
		for _, t := range []string{repotv1.ConditionRunning, repotv1.ConditionComplete, repotv1.ConditionFailed, repotv1.ConditionReady} {
			g.Expect(condition(e, t).Status).To(Equal(metav1.ConditionFalse), t)
			g.Expect(condition(e, t).Reason).To(Equal(repotv1.ReasonBudgetExhausted), t)
		}
		st := condition(e, repotv1.ConditionStalled)
		g.Expect(st.Status).To(Equal(metav1.ConditionTrue))
		g.Expect(st.Reason).To(Equal(repotv1.ReasonBudgetExhausted))
		g.Expect(st.Message).To(ContainSubstring(limit))
		g.Expect(st.Message).To(HavePrefix("stopped by spec.budget, and resumable: "), "the message says plainly that raising the budget resumes")
		g.Expect(st.ObservedGeneration).To(Equal(e.Generation))
		g.Expect(e.Status.CompletionTime).To(BeNil(), "a budget stop is not the end: raising the budget resumes")
		g.Expect(e.Status.Progress.RunsDone).To(Equal(runsDone), "every recorded run stays")
		g.Expect(e.Status.Budget).NotTo(BeNil())
		g.Expect(e.Status.Budget.Exhausted).To(BeTrue())
		g.Expect(e.Status.Budget.Partial).To(BeTrue())
		g.Expect(e.Status.Budget.RunsNotStarted).To(Equal(e.Status.Progress.RunsTotal - runsDone))
		g.Expect(e.Status.Budget.Models).To(HaveLen(1))
		g.Expect(e.Status.Budget.Models[0].Stopped).To(BeTrue())
		g.Expect(model(g, e, 0).Server.State).To(Equal(repotv1.ServerStopped))
	})
	ExpectWithOffset(1, exists(&corev1.ConfigMap{}, ns, build.LedgerName("ev", "m", 0))()).To(BeTrue(), "the ledger stays")
}

// expectResumed waits until a raised budget brought the server and the
// runner back, with the recorded runs kept.
func expectResumed(ns string, runsDone int32) {
	EventuallyWithOffset(1, exists(&appsv1.Deployment{}, ns, build.ServerName("ev", "m"))).Should(BeTrue(), "a raised budget starts the server again")
	setServerReady(ns, "ev", "m", true)
	EventuallyWithOffset(1, exists(&batchv1.Job{}, ns, build.RunnerJobName("ev", "m"))).Should(BeTrue(), "and the runner, which resumes from the ledger")
	eventuallyEval(ns, "ev", func(g Gomega, e *repotv1.RepotEvaluation) {
		g.Expect(e.Status.Summary.State).To(Equal(repotv1.StateRunning))
		g.Expect(condition(e, repotv1.ConditionStalled).Status).To(Equal(metav1.ConditionFalse))
		g.Expect(e.Status.Budget).NotTo(BeNil(), "no status.budget")
		g.Expect(e.Status.Budget.Exhausted).To(BeFalse())
		g.Expect(e.Status.Budget.Partial).To(BeFalse())
		g.Expect(e.Status.Progress.RunsDone).To(Equal(runsDone))
	})
}

var _ = Describe("budgets", func() {
	It("stops at maxCompletionTokens with BudgetExhausted, keeps every recorded run, and resumes when the budget is raised", func() {
		ns := createNamespace("budget-tokens")
		budget := &repotv1.BudgetSpec{BudgetLimits: repotv1.BudgetLimits{MaxCompletionTokens: ptr.To[int64](100)}}
		w := revtesting.MakeEvaluation("ev", ns).Simulated("m", "strong", 1).Shards(1)
		w.Spec.Budget = budget
		startRunning(ns, w)
		Eventually(func(g Gomega) {
			var cm corev1.ConfigMap
			g.Expect(k8s.Get(ctx, key(ns, build.LedgerName("ev", "m", 0)), &cm)).To(Succeed())
			g.Expect(cm.Annotations).To(HaveKeyWithValue(contract.LedgerBudgetCapAnnotation, `{"completionTokens":100}`))
		}).Should(Succeed(), "the running shard gets its budget cap on its ledger, for its runner")

		// rec spends 40 completion tokens per call.
		writeLedger(ns, build.LedgerName("ev", "m", 0), rec("m", "p1", "pot", true, contract.RouteInitialSuccess, 1))
		eventuallyEval(ns, "ev", func(g Gomega, e *repotv1.RepotEvaluation) {
			g.Expect(e.Status.Budget).NotTo(BeNil(), "no status.budget yet")
			g.Expect(e.Status.Budget.Used.CompletionTokens).To(Equal(int64(40)))
		})
		Consistently(exists(&batchv1.Job{}, ns, build.RunnerJobName("ev", "m")), "500ms").Should(BeTrue(), "below the limit the runner runs")

		writeLedger(ns, build.LedgerName("ev", "m", 0),
			rec("m", "p1", "pot", true, contract.RouteInitialSuccess, 1),
			rec("m", "p2", "pot-retry", false, contract.RouteFreshRetry, 2))
		expectStoppedByBudget(ns, 2, "spec.budget.maxCompletionTokens 100 reached (120 used)")
		Eventually(func(g Gomega) { assessEval(g, ns, "ev", "BudgetExhausted", "Degraded", "Failed") }).Should(Succeed(), "GitOps tools see a stop that needs a person")
		e := getEval(ns, "ev")
		Expect(e.Status.Budget.Used).To(Equal(repotv1.BudgetUsage{CompletionTokens: 120, ModelCalls: 3}))
		Expect(methodResult(e, "m", repotv1.MethodPoT).Total).To(Equal(int32(1)), "the results so far stay")
		Expect(methodResult(e, "m", repotv1.MethodPoTRetry).Total).To(Equal(int32(1)))

		setBudget(ns, "ev", &repotv1.BudgetSpec{BudgetLimits: repotv1.BudgetLimits{MaxCompletionTokens: ptr.To[int64](1000)}})
		expectResumed(ns, 2)
	})

	It("stops at maxGPUHours counted with the injected clock, and resumes when the budget is raised", func() {
		ns := createNamespace("budget-gpu")
		w := revtesting.MakeEvaluation("ev", ns).Simulated("m", "strong", 1).Shards(1)
		w.Spec.Models[0].Simulated.GPUs = ptr.To[int32](1)
		w.Spec.Budget = &repotv1.BudgetSpec{BudgetLimits: repotv1.BudgetLimits{MaxGPUHours: "0.1"}} // 360 GPU-seconds
		Expect(k8s.Create(ctx, w.Obj())).To(Succeed())
		Eventually(exists(&appsv1.Deployment{}, ns, build.ServerName("ev", "m"))).Should(BeTrue())
		createServerPod(ns, "ev", "m", corev1.PodStatus{Phase: corev1.PodRunning, Conditions: []corev1.PodCondition{{
			Type: corev1.PodScheduled, Status: corev1.ConditionTrue, LastTransitionTime: metav1.NewTime(clk.Now()),
		}}})
		setServerReady(ns, "ev", "m", true)
		Eventually(exists(&batchv1.Job{}, ns, build.RunnerJobName("ev", "m"))).Should(BeTrue())
		writeLedger(ns, build.LedgerName("ev", "m", 0), rec("m", "p1", "pot", true, contract.RouteInitialSuccess, 1))
		eventuallyEval(ns, "ev", func(g Gomega, e *repotv1.RepotEvaluation) {
			g.Expect(model(g, e, 0).ServerCreatedTime).NotTo(BeNil())
			g.Expect(e.Status.Progress.RunsDone).To(Equal(int32(1)))
		})

		clk.Step(5 * time.Minute) // 300 GPU-seconds
		poke(ns, "ev")
		eventuallyEval(ns, "ev", func(g Gomega, e *repotv1.RepotEvaluation) {
			g.Expect(e.Status.Budget).NotTo(BeNil(), "no status.budget yet")
			g.Expect(e.Status.Budget.Used.GPUSeconds).To(Equal(int64(300)))
		})
		Consistently(exists(&batchv1.Job{}, ns, build.RunnerJobName("ev", "m")), "500ms").Should(BeTrue(), "below the limit the runner runs")

		clk.Step(2 * time.Minute) // 420 GPU-seconds
		poke(ns, "ev")
		expectStoppedByBudget(ns, 1, "spec.budget.maxGPUHours 0.1 reached (420 GPU-seconds held)")
		Expect(getEval(ns, "ev").Status.Models[0].GPUSecondsHeld).To(Equal(int64(420)))

		clk.Step(time.Hour) // no server: no GPU held
		poke(ns, "ev")
		Consistently(func(g Gomega) {
			g.Expect(getEval(ns, "ev").Status.Budget.Used.GPUSeconds).To(Equal(int64(420)))
		}, "500ms").Should(Succeed())

		setBudget(ns, "ev", &repotv1.BudgetSpec{BudgetLimits: repotv1.BudgetLimits{MaxGPUHours: "1"}})
		expectResumed(ns, 1)
	})

	It("deletes a stopped model's Kueue Workload once its children are gone, and submits a new one when the budget is raised", func() {
		if kueueMissing != "" {
			Skip("Kueue's CRDs are not installed in the test API server: " + kueueMissing)
		}
		ns := createNamespace("budget-kueue")
		w := revtesting.MakeEvaluation("ev", ns).Simulated("m", "strong", 1).Shards(1)
		w.Labels = map[string]string{kueueadapter.QueueNameLabel: "gpus"}
		w.Spec.Budget = &repotv1.BudgetSpec{BudgetLimits: repotv1.BudgetLimits{MaxModelCalls: ptr.To[int64](2)}}
		Expect(k8s.Create(ctx, w.Obj())).To(Succeed())
		wlKey := key(ns, kueueadapter.WorkloadName("ev", "m"))
		// admit plays Kueue's scheduler for the model's current Workload.
		admit := func() {
			Eventually(func(g Gomega) {
				var wl kueue.Workload
				g.Expect(k8s.Get(ctx, wlKey, &wl)).To(Succeed())
				var psas []kueue.PodSetAssignment
				for _, ps := range wl.Spec.PodSets {
					psas = append(psas, kueue.PodSetAssignment{Name: ps.Name, Count: &ps.Count})
				}
				wl.Status.Admission = &kueue.Admission{ClusterQueue: "gpus", PodSetAssignments: psas}
				apimeta.SetStatusCondition(&wl.Status.Conditions, metav1.Condition{Type: kueue.WorkloadQuotaReserved, Status: metav1.ConditionTrue, Reason: "QuotaReserved", Message: "reserved"})
				apimeta.SetStatusCondition(&wl.Status.Conditions, metav1.Condition{Type: kueue.WorkloadAdmitted, Status: metav1.ConditionTrue, Reason: "Admitted", Message: "admitted"})
				g.Expect(k8s.Status().Update(ctx, &wl)).To(Succeed())
			}).Should(Succeed())
		}
		admit()
		Eventually(exists(&appsv1.Deployment{}, ns, build.ServerName("ev", "m"))).Should(BeTrue())
		setServerReady(ns, "ev", "m", true)
		Eventually(exists(&batchv1.Job{}, ns, build.RunnerJobName("ev", "m"))).Should(BeTrue())
		var first kueue.Workload
		Expect(k8s.Get(ctx, wlKey, &first)).To(Succeed())

		writeLedger(ns, build.LedgerName("ev", "m", 0), rec("m", "p1", "pot-retry", false, contract.RouteFreshRetry, 2))
		expectStoppedByBudget(ns, 1, "spec.budget.maxModelCalls 2 reached (2 made)")
		Eventually(exists(&kueue.Workload{}, ns, wlKey.Name)).Should(BeFalse(), "the Workload is deleted, releasing the quota")

		setBudget(ns, "ev", &repotv1.BudgetSpec{BudgetLimits: repotv1.BudgetLimits{MaxModelCalls: ptr.To[int64](100)}})
		Eventually(func(g Gomega) {
			var wl kueue.Workload
			g.Expect(k8s.Get(ctx, wlKey, &wl)).To(Succeed())
			g.Expect(wl.UID).NotTo(Equal(first.UID))
		}).Should(Succeed(), "a new Workload is submitted")
		Consistently(exists(&appsv1.Deployment{}, ns, build.ServerName("ev", "m")), "500ms").Should(BeFalse(), "nothing runs before Kueue admits it")
		admit()
		expectResumed(ns, 1)
	})
})
