package integration_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	repotv1 "repot.dev/repot-operator/api/v1alpha1"
	revtesting "repot.dev/repot-operator/api/v1alpha1/testing"
	"repot.dev/repot-operator/config/argocd"
	"repot.dev/repot-operator/contract"
	"repot.dev/repot-operator/controllers/build"
)

// assessEval reads an evaluation as the API server serves it and checks its
// Argo CD health (health.lua run by gopher-lua) and its kstatus status. With
// REPOT_CAPTURE_HEALTH set it stores the object for config/argocd's table
// test.
func assessEval(g Gomega, ns, name, state, wantArgo, wantKstatus string) {
	u := &unstructured.Unstructured{}
	u.SetAPIVersion(repotv1.GroupVersion.String())
	u.SetKind("RepotEvaluation")
	g.Expect(k8s.Get(ctx, key(ns, name), u)).To(Succeed())
	u.SetManagedFields(nil)
	h, ks, ksMsg, err := argocd.Assess(u.Object)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect([]string{h.Status, ks}).To(Equal([]string{wantArgo, wantKstatus}), "%s: Argo CD %q, kstatus %q", state, h.Message, ksMsg)
	if os.Getenv("REPOT_CAPTURE_HEALTH") != "" {
		root, err := repoRoot()
		g.Expect(err).NotTo(HaveOccurred())
		b, err := json.MarshalIndent(u.Object, "", "  ")
		g.Expect(err).NotTo(HaveOccurred())
		dir := filepath.Join(root, "config", "argocd", "testdata")
		g.Expect(os.MkdirAll(dir, 0o755)).To(Succeed())
		g.Expect(os.WriteFile(filepath.Join(dir, "RepotEvaluation-"+state+".json"), append(b, '\n'), 0o644)).To(Succeed())
	}
}

func stateIs(ns, name string, want repotv1.EvaluationState) func(g Gomega) {
	return func(g Gomega) {
		e := getEval(ns, name)
		g.Expect(e.Status.Summary).NotTo(BeNil())
		g.Expect(e.Status.Summary.State).To(Equal(want))
	}
}

var _ = Describe("GitOps", func() {
	sim := func(ns string) *revtesting.EvaluationWrapper {
		return revtesting.MakeEvaluation("ev", ns).Simulated("m", "strong", 1).Shards(1)
	}

	It("maps every evaluation state to an Argo CD health and a kstatus status", func() {
		ns := createNamespace("health")
		Expect(k8s.Create(ctx, sim(ns).Obj())).To(Succeed())
		Eventually(stateIs(ns, "ev", repotv1.StatePending)).Should(Succeed())
		Eventually(func(g Gomega) { assessEval(g, ns, "ev", "Pending", "Progressing", "InProgress") }).Should(Succeed())

		setServerReady(ns, "ev", "m", true)
		Eventually(stateIs(ns, "ev", repotv1.StateRunning)).Should(Succeed())
		Eventually(func(g Gomega) { assessEval(g, ns, "ev", "Running", "Progressing", "InProgress") }).Should(Succeed())

		var recs []contract.Record
		for _, p := range []string{"p1", "p2", "p3", "p4"} {
			recs = append(recs, rec("m", p, "pot", p == "p1", map[bool]string{true: contract.RouteInitialSuccess, false: contract.RouteNoExtraCall}[p == "p1"], 1))
			recs = append(recs, rec("m", p, "repot", p != "p4", map[bool]string{true: contract.RouteInitialSuccess, false: contract.RouteSuffixRepair}[p == "p1"], 2))
		}
		writeLedger(ns, build.LedgerName("ev", "m", 0), recs...)
		finishJob(ns, build.RunnerJobName("ev", "m"))
		Eventually(stateIs(ns, "ev", repotv1.StateComplete)).Should(Succeed())
		Eventually(func(g Gomega) { assessEval(g, ns, "ev", "Complete", "Healthy", "Current") }).Should(Succeed())
		// The paired comparison of the methods is in the status.
		e := getEval(ns, "ev")
		var found *repotv1.MethodComparison
		for i, c := range e.Status.Models[0].Comparisons {
			if c.Method == repotv1.MethodRePoT && c.Baseline == repotv1.MethodPoT {
				found = &e.Status.Models[0].Comparisons[i]
			}
		}
		Expect(found).NotTo(BeNil(), "comparisons: %+v", e.Status.Models[0].Comparisons)
		Expect(found.McNemarComparison).To(Equal(repotv1.McNemarComparison{Problems: 4, Solved: 3, BaselineSolved: 1,
			OnlySolved: 2, DiffPermille: 500, DiffPoints: "+50.0", Test: "mcnemar-exact", PValue: "0.5000"}))

		ns = createNamespace("health")
		Expect(k8s.Create(ctx, sim(ns).Suspend(true).Obj())).To(Succeed())
		Eventually(stateIs(ns, "ev", repotv1.StateSuspended)).Should(Succeed())
		Eventually(func(g Gomega) { assessEval(g, ns, "ev", "Suspended", "Suspended", "InProgress") }).Should(Succeed())

		ns = createNamespace("health")
		Expect(k8s.Create(ctx, sim(ns).ProblemsConfigMap("missing", "").Obj())).To(Succeed())
		Eventually(stateIs(ns, "ev", repotv1.StateStalled)).Should(Succeed())
		Eventually(func(g Gomega) { assessEval(g, ns, "ev", "Stalled", "Degraded", "Failed") }).Should(Succeed())

		ns = createNamespace("health")
		startRunning(ns, sim(ns).ActiveDeadline(60))
		clk.Step(61 * time.Second)
		poke(ns, "ev")
		Eventually(stateIs(ns, "ev", repotv1.StateFailed)).Should(Succeed())
		Eventually(func(g Gomega) { assessEval(g, ns, "ev", "Failed", "Degraded", "Failed") }).Should(Succeed())
	})

	It("fails a started evaluation whose problems ConfigMap changed, instead of mixing two problem sets", func() {
		ns := createNamespace("problems")
		line := `{"id":"p1","environment":"tower_of_hanoi","complexity":3}`
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "problems", Namespace: ns},
			Data: map[string]string{"problems.jsonl": line + "\n"}}
		Expect(k8s.Create(ctx, cm)).To(Succeed())
		startRunning(ns, sim(ns).ProblemsConfigMap("problems", ""))
		Eventually(func(g Gomega) {
			g.Expect(getEval(ns, "ev").Status.ProblemsHash).To(HavePrefix("sha256:"))
		}).Should(Succeed())
		before := getEval(ns, "ev").Status.ProblemsHash

		cm.Data["problems.jsonl"] = line + "\n" + `{"id":"p2","environment":"tower_of_hanoi","complexity":4}` + "\n"
		Expect(k8s.Update(ctx, cm)).To(Succeed())
		poke(ns, "ev")
		Eventually(func(g Gomega) {
			e := getEval(ns, "ev")
			c := condition(e, repotv1.ConditionFailed)
			g.Expect(c.Status).To(Equal(metav1.ConditionTrue))
			g.Expect(c.Reason).To(Equal(repotv1.ReasonProblemsChanged))
			g.Expect(c.Message).To(ContainSubstring(`ConfigMap "problems" changed after the evaluation started`))
			g.Expect(e.Status.ProblemsHash).To(Equal(before), "the hash of the problems the evaluation started with is kept")
		}).Should(Succeed())
	})
})
