package integration_test

import (
	"github.com/google/go-cmp/cmp"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"

	repotv1 "repot.dev/repot-operator/api/v1alpha1"
	revtesting "repot.dev/repot-operator/api/v1alpha1/testing"
	"repot.dev/repot-operator/contract"
	"repot.dev/repot-operator/controllers/build"
)

// rec is a finished run as `repot run` records it.
func rec(model, problem, method string, success bool, route string, calls int) contract.Record {
	return contract.Record{
		Model: model, ProblemID: problem, Environment: "tower_of_hanoi", Complexity: 3, Method: method,
		Success: success, StoppedReason: map[bool]string{true: "goal", false: "invalid_move"}[success],
		Route: route, Calls: calls, PromptTokens: 100 * calls, CompletionTokens: 40 * calls,
		InitialPlanLen: 7, InitialPrefixPermille: map[bool]int{true: 1000, false: 500}[success || route == contract.RouteInitialSuccess],
		InitialSuccess: route == contract.RouteInitialSuccess, RepairUsed: route == contract.RouteSuffixRepair,
	}
}

func methodResult(e *repotv1.RepotEvaluation, model string, m repotv1.Method) repotv1.MethodResult {
	for _, ms := range e.Status.Models {
		if ms.Name != model {
			continue
		}
		for _, r := range ms.Methods {
			if r.Method == m {
				return r
			}
		}
	}
	return repotv1.MethodResult{}
}

var _ = Describe("status from the ledgers", func() {
	It("aggregates the runs a runner wrote, counts a record written twice once, and recomputes the same status after a restart", func() {
		ns := createNamespace("status")
		ev := revtesting.MakeEvaluation("ev", ns).Simulated("m", "strong", 1).Shards(2).
			Methods(repotv1.MethodPoT, repotv1.MethodRePoT).Obj()
		Expect(k8s.Create(ctx, ev)).To(Succeed())
		// The ledgers come with the runner, once the server answers.
		setServerReady(ns, "ev", "m", true)
		Eventually(exists(&corev1.ConfigMap{}, ns, build.LedgerName("ev", "m", 1))).Should(BeTrue())

		potP1 := rec("m", "p1", "pot", true, contract.RouteInitialSuccess, 1)
		// Shard 0 holds pot's runs (with p1 written twice, as a sidecar that
		// restarted before its patch was acknowledged would) ...
		writeLedger(ns, build.LedgerName("ev", "m", 0),
			potP1, potP1,
			rec("m", "p2", "pot", false, contract.RouteNoExtraCall, 1),
			rec("m", "p3", "pot", false, contract.RouteNoExtraCall, 1),
		)
		// ... and shard 1 repot's, plus p1/pot once more and an infra error.
		infra := rec("m", "p4", "repot", false, "", 0)
		infra.InfraError, infra.StoppedReason, infra.InfraRetries = "connection reset", "infra_error", 3
		writeLedger(ns, build.LedgerName("ev", "m", 1),
			rec("m", "p1", "repot", true, contract.RouteInitialSuccess, 1),
			rec("m", "p2", "repot", true, contract.RouteSuffixRepair, 2),
			rec("m", "p3", "repot", false, contract.RouteSuffixRepair, 2),
			potP1, infra,
		)

		eventuallyEval(ns, "ev", func(g Gomega, e *repotv1.RepotEvaluation) {
			g.Expect(e.Status.Progress).NotTo(BeNil())
			g.Expect(e.Status.Progress.RunsDone).To(Equal(int32(6)), "3 pot + 3 repot; duplicates once; the infra error is not finished")
			g.Expect(model(g, e, 0).InfraErrorRuns).To(Equal(int32(1)))
			g.Expect(e.Status.Progress.RunsTotal).To(Equal(int32(120 * 2)))
			g.Expect(e.Status.Progress.Text).To(Equal("6/240"))
			pot := methodResult(e, "m", repotv1.MethodPoT)
			g.Expect(pot.Solved).To(Equal(int32(1)))
			g.Expect(pot.Total).To(Equal(int32(3)))
			g.Expect(pot.Rate).To(Equal("33.3%"))
			g.Expect(pot.Calls).To(Equal(int64(3)))
			g.Expect(pot.PromptTokens).To(Equal(int64(300)))
			repot := methodResult(e, "m", repotv1.MethodRePoT)
			g.Expect(repot.Solved).To(Equal(int32(2)))
			g.Expect(repot.Total).To(Equal(int32(3)))
			g.Expect(repot.Rate).To(Equal("66.7%"))
			g.Expect(repot.Calls).To(Equal(int64(5)))
			g.Expect(repot.CompletionTokens).To(Equal(int64(200)))
			g.Expect(repot.InfraErrors).To(Equal(int32(1)))
			g.Expect(repot.InfraRetries).To(Equal(int64(3)))
			g.Expect(repot.Routes).To(ContainElements(
				repotv1.RouteCount{Name: contract.RouteInitialSuccess, Count: 1, Solved: 1},
				repotv1.RouteCount{Name: contract.RouteSuffixRepair, Count: 2, Solved: 1},
			))
			g.Expect(*repot.CostVsPotPermille).To(Equal(int32(1667)), "repot used 5 calls' tokens where pot used 3")
			g.Expect(e.Status.Summary.PoT).To(Equal("33.3%"))
			g.Expect(e.Status.Summary.RePoT).To(Equal("66.7%"))
		})
		before := getEval(ns, "ev").Status

		By("restarting the manager with the results wiped from the status")
		restartManager(func() {
			e := getEval(ns, "ev")
			e.Status.Models, e.Status.Progress, e.Status.Summary, e.Status.Scaling = nil, nil, nil, nil
			Expect(k8s.Status().Update(ctx, e)).To(Succeed())
		})
		eventuallyEval(ns, "ev", func(g Gomega, e *repotv1.RepotEvaluation) {
			g.Expect(cmp.Diff(before, e.Status)).To(BeEmpty())
		})
	})

	It("reports scaling across models", func() {
		ns := createNamespace("scaling")
		ev := revtesting.MakeEvaluation("ev", ns).Simulated("a", "strong", 1).Simulated("b", "weak", 2).Shards(1).
			Methods(repotv1.MethodPoTRetry, repotv1.MethodRePoT).Obj()
		Expect(k8s.Create(ctx, ev)).To(Succeed())
		setServerReady(ns, "ev", "a", true)
		setServerReady(ns, "ev", "b", true)
		Eventually(exists(&corev1.ConfigMap{}, ns, build.LedgerName("ev", "a", 0))).Should(BeTrue())
		Eventually(exists(&corev1.ConfigMap{}, ns, build.LedgerName("ev", "b", 0))).Should(BeTrue())
		writeLedger(ns, build.LedgerName("ev", "a", 0),
			rec("a", "p1", "pot-retry", false, contract.RouteFreshRetry, 2),
			rec("a", "p1", "repot", true, contract.RouteSuffixRepair, 2))
		writeLedger(ns, build.LedgerName("ev", "b", 0),
			rec("b", "p1", "pot-retry", true, contract.RouteFreshRetry, 2),
			rec("b", "p1", "repot", false, contract.RouteSuffixRepair, 2))
		eventuallyEval(ns, "ev", func(g Gomega, e *repotv1.RepotEvaluation) {
			g.Expect(e.Status.Scaling).NotTo(BeNil())
			g.Expect(e.Status.Scaling.Cells).To(HaveLen(2))
			g.Expect(model(g, e, 0).RepotMinusPotRetryPoints).To(Equal("+100.0"))
			g.Expect(model(g, e, 1).RepotMinusPotRetryPoints).To(Equal("-100.0"))
		})
	})
})

var _ = Describe("status from spilled ledgers", func() {
	It("creates each shard's spill ConfigMaps before the runner Job and counts the records a full ledger spilled into them, each once", func() {
		ns := createNamespace("spill")
		// puzzlezoo-775 x 4 methods / 2 shards: 1550 runs per shard, more
		// than one ledger ConfigMap holds at the planned record size.
		ev := revtesting.MakeEvaluation("ev", ns).Simulated("m", "strong", 1).Suite(repotv1.SuitePuzzleZoo775).Shards(2).Obj()
		spills := build.LedgerSpills(ev)
		Expect(spills).To(BeNumerically(">", 0))
		Expect(k8s.Create(ctx, ev)).To(Succeed())
		setServerReady(ns, "ev", "m", true)
		spill := contract.LedgerSpillName(build.LedgerName("ev", "m", 1), spills)
		Eventually(exists(&corev1.ConfigMap{}, ns, spill)).Should(BeTrue())
		Eventually(exists(&batchv1.Job{}, ns, build.RunnerJobName("ev", "m"))).Should(BeTrue())

		a, b := rec("m", "p1", "pot", true, contract.RouteInitialSuccess, 1), rec("m", "p2", "pot", false, contract.RouteNoExtraCall, 1)
		infra := rec("m", "p3", "repot", false, "", 0)
		infra.InfraError, infra.StoppedReason = "connection reset", "infra_error"
		fixed := rec("m", "p3", "repot", true, contract.RouteInitialSuccess, 1)
		// The full ledger holds a and an infra error; its spills hold b, a
		// again (written twice) and the finished run that supersedes the
		// infra error.
		writeLedger(ns, build.LedgerName("ev", "m", 1), a, infra)
		writeLedger(ns, contract.LedgerSpillName(build.LedgerName("ev", "m", 1), 1), b, a)
		writeLedger(ns, spill, fixed)
		eventuallyEval(ns, "ev", func(g Gomega, e *repotv1.RepotEvaluation) {
			g.Expect(e.Status.Progress).NotTo(BeNil())
			g.Expect(e.Status.Progress.RunsDone).To(Equal(int32(3)), "p1 and p2 of pot and p3 of repot, each once")
			g.Expect(methodResult(e, "m", repotv1.MethodRePoT).Solved).To(Equal(int32(1)))
			g.Expect(methodResult(e, "m", repotv1.MethodRePoT).InfraErrors).To(Equal(int32(0)))
		})
	})
})
