package integration_test

import (
	"encoding/json"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	repotv1 "repot.dev/repot-operator/api/v1alpha1"
	revtesting "repot.dev/repot-operator/api/v1alpha1/testing"
	"repot.dev/repot-operator/contract"
	"repot.dev/repot-operator/controllers/build"
	"repot.dev/repot-operator/controllers/integration/framework"
)

// runningEval creates an evaluation of one model and brings it to its
// runner Job, with its ledgers and its runner's RoleBinding in place.
func runningEval(ns string, w *revtesting.EvaluationWrapper) *repotv1.RepotEvaluation {
	e := w.Obj()
	ExpectWithOffset(1, k8s.Create(ctx, e)).To(Succeed())
	m := e.Spec.Models[0].Name
	EventuallyWithOffset(1, exists(&appsv1.Deployment{}, ns, build.ServerName(e.Name, m))).Should(BeTrue())
	setServerReady(ns, e.Name, m, true)
	EventuallyWithOffset(1, exists(&batchv1.Job{}, ns, build.RunnerJobName(e.Name, m))).Should(BeTrue())
	for s := range int(e.Spec.ShardsPerModelOrDefault()) {
		EventuallyWithOffset(1, exists(&corev1.ConfigMap{}, ns, build.LedgerName(e.Name, m, s))).Should(BeTrue())
	}
	EventuallyWithOffset(1, exists(&rbacv1.RoleBinding{}, ns, build.RunnerAccessName(e.Name))).Should(BeTrue())
	return getEval(ns, e.Name)
}

// countedResults are the parts of a status that the ledgers' records make.
type countedResults struct {
	Progress *repotv1.Progress
	RunsDone []int32
	Methods  [][]repotv1.MethodResult
}

func resultsOf(e *repotv1.RepotEvaluation) countedResults {
	r := countedResults{Progress: e.Status.Progress}
	for _, m := range e.Status.Models {
		r.RunsDone = append(r.RunsDone, m.RunsDone)
		r.Methods = append(r.Methods, m.Methods)
	}
	return r
}

// The runner identity may patch its evaluation's ledgers, metadata
// included (build.RunnerRole). These specs patch as that identity, with the
// Role the operator made for it, what a compromised ledger container could.
var _ = Describe("a runner identity that patches its ledgers' metadata", func() {
	It("cannot forge another evaluation's results, nor reset its own retry count", func() {
		ns := createNamespace("forgery")
		a := runningEval(ns, revtesting.MakeEvaluation("a", ns).Simulated("m", "strong", 1).Shards(2).Methods(repotv1.MethodPoT))
		b := runningEval(ns, revtesting.MakeEvaluation("b", ns).Simulated("k", "strong", 1).Shards(1).Methods(repotv1.MethodPoT))

		By("a's runner Job completing with an infrastructure error, which a retries once")
		var first batchv1.Job
		Expect(k8s.Get(ctx, key(ns, build.RunnerJobName("a", "m")), &first)).To(Succeed())
		infra := rec("m", "p1", "pot", false, "", 0)
		infra.InfraError, infra.StoppedReason = "connection reset", contract.StopInfraError
		writeLedger(ns, build.LedgerName("a", "m", 0), infra)
		finishJob(ns, build.RunnerJobName("a", "m"))
		var retry batchv1.Job
		Eventually(func(g Gomega) {
			g.Expect(k8s.Get(ctx, key(ns, build.RunnerJobName("a", "m")), &retry)).To(Succeed())
			g.Expect(retry.UID).NotTo(Equal(first.UID))
		}).Should(Succeed())
		eventuallyEval(ns, "a", func(g Gomega, e *repotv1.RepotEvaluation) {
			g.Expect(model(g, e, 0).InfraRetries).To(Equal(int32(1)))
		})

		By("b's runner recording one run")
		writeLedger(ns, build.LedgerName("b", "k", 0), rec("k", "p1", "pot", true, contract.RouteInitialSuccess, 1))
		eventuallyEval(ns, "b", func(g Gomega, e *repotv1.RepotEvaluation) {
			g.Expect(model(g, e, 0).RunsDone).To(Equal(int32(1)))
		})
		bBefore := resultsOf(getEval(ns, "b"))

		By("patching as a's runner: a's second ledger moved to b, with runs of b's model; a's first ledger's annotations reset")
		cfg, err := testEnv.ConfigAs(ctx, framework.Identity{ServiceAccountNamespace: ns, ServiceAccount: build.RunnerAccessName("a"), Impersonate: true})
		Expect(err).NotTo(HaveOccurred())
		runner, err := newClient(cfg)
		Expect(err).NotTo(HaveOccurred())
		// patch patches as a's runner and returns the ConfigMap as the
		// patch left it.
		patch := func(name string, body map[string]any) *corev1.ConfigMap {
			raw, err := json.Marshal(body)
			Expect(err).NotTo(HaveOccurred())
			cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}
			Expect(runner.Patch(ctx, cm, client.RawPatch(types.MergePatchType, raw))).To(Succeed(), "patch %s as a's runner", name)
			return cm
		}
		toB := *metav1.NewControllerRef(b, repotv1.GroupVersion.WithKind("RepotEvaluation"))
		toB.BlockOwnerDeletion = nil
		labels := build.ChildLabels("b", "k", build.ComponentLedger)
		labels[build.LabelShard] = "0"
		var lines []string
		for _, p := range []string{"p2", "p3"} {
			line, err := json.Marshal(rec("k", p, "pot", true, contract.RouteInitialSuccess, 1))
			Expect(err).NotTo(HaveOccurred())
			lines = append(lines, string(line))
		}
		moved := build.LedgerName("a", "m", 1)
		patched := patch(moved, map[string]any{
			"metadata": map[string]any{"ownerReferences": []metav1.OwnerReference{toB}, "labels": labels},
			"data":     map[string]string{contract.LedgerRecordsKey: strings.Join(lines, "\n") + "\n"},
		})
		patch(build.LedgerName("a", "m", 0), map[string]any{"metadata": map[string]any{"annotations": map[string]string{
			"repot.dev/infra-retries": "0", "repot.dev/infra-retry-of": "",
		}}})
		Expect(controlledBy(patched, b.UID)).To(BeTrue(), "the runner could not move the ledger")

		By("b's results and a's retry count staying as they were")
		Consistently(func(g Gomega) {
			g.Expect(resultsOf(getEval(ns, "b"))).To(Equal(bBefore), "b counts runs a's runner wrote")
			e := getEval(ns, "a")
			g.Expect(model(g, e, 0).InfraRetries).To(Equal(int32(1)), "a's retry count was reset")
			var j batchv1.Job
			g.Expect(k8s.Get(ctx, key(ns, build.RunnerJobName("a", "m")), &j)).To(Succeed())
			g.Expect(j.UID).To(Equal(retry.UID), "a's runner Job was replaced again")
		}, "2s").Should(Succeed())
		Expect(model(Default, getEval(ns, "a"), 0).InfraRetryJobUID).To(Equal(string(first.UID)))

		By("b deleting the stray ledger, which a then makes again as its own")
		Eventually(func(g Gomega) {
			var cm corev1.ConfigMap
			g.Expect(k8s.Get(ctx, key(ns, moved), &cm)).To(Succeed())
			g.Expect(controlledBy(&cm, a.UID)).To(BeTrue())
		}).Should(Succeed())
		Expect(resultsOf(getEval(ns, "b"))).To(Equal(bBefore))
	})
})
