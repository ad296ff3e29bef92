package integration_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"

	"repot.dev/repot-operator/analysis/report"
	"repot.dev/repot-operator/analysis/report/reporttest"
	"repot.dev/repot-operator/analysis/summary"
	repotv1 "repot.dev/repot-operator/api/v1alpha1"
	revtesting "repot.dev/repot-operator/api/v1alpha1/testing"
	"repot.dev/repot-operator/cmd/repot/results"
	"repot.dev/repot-operator/cmd/repot/results/exporttest"
	"repot.dev/repot-operator/contract"
	"repot.dev/repot-operator/controllers/build"
)

// sweepRecords are the runs of one model over four environments and three
// complexities with the four default methods; solved depends on the model,
// the problem and the method so that every figure differs between cells.
func sweepRecords(model string, skill int) []contract.Record {
	var out []contract.Record
	envs := []string{"tower_of_hanoi", "checker_jumping", "river_crossing", "blocksworld"}
	for i := range 24 {
		env, cx := envs[i%4], 3+i%3
		p := fmt.Sprintf("%s_n%02d_%d", env, cx, i)
		first := (i*7+skill)%10 < skill
		prefix := (i * 137) % 1000
		add := func(method string, success bool, route string, calls int) {
			r := rec(model, p, method, success, route, calls)
			r.Environment, r.Complexity, r.InitialPrefixPermille = env, cx, prefix
			if first {
				r.InitialPrefixPermille = 1000
			}
			out = append(out, r)
		}
		if first {
			for _, m := range []string{"pot", "pot-retry", "repot", "repot-adaptive"} {
				add(m, true, contract.RouteInitialSuccess, 1)
			}
			continue
		}
		add("pot", false, contract.RouteNoExtraCall, 1)
		add("pot-retry", i%3 == 0, contract.RouteFreshRetry, 2)
		add("repot", prefix > 400 && i%2 == 0, contract.RouteSuffixRepair, 2)
		route := contract.RouteSuffixRepair
		if prefix < 150 {
			route = contract.RouteFreshShortPrefix
		}
		add("repot-adaptive", i%4 == 1, route, 2)
	}
	return out
}

var _ = Describe("repot results export", func() {
	It("exports the records the status counts: the exported summary gives the status's figures byte for byte", func() {
		ns := createNamespace("export")
		ev := revtesting.MakeEvaluation("ev", ns).Simulated("strong", "strong", 1).Simulated("weak", "weak", 2).Shards(2).Obj()
		Expect(k8s.Create(ctx, ev)).To(Succeed())
		for _, m := range []string{"strong", "weak"} {
			setServerReady(ns, "ev", m, true)
			Eventually(exists(&corev1.ConfigMap{}, ns, build.LedgerName("ev", m, 1))).Should(BeTrue())
		}
		strong, weak := sweepRecords("strong", 6), sweepRecords("weak", 2)
		infra := strong[len(strong)-1]
		infra.Success, infra.InfraError, infra.InfraRetries = false, "connection reset", 2
		// Shard 0 of each model holds the first half, shard 1 the rest, a
		// record written twice, an infra error a later run replaced, and a
		// stray record of a model the evaluation does not have.
		stray := weak[0]
		stray.Model = "other"
		writeLedger(ns, build.LedgerName("ev", "strong", 0), append([]contract.Record{infra}, strong[:48]...)...)
		writeLedger(ns, build.LedgerName("ev", "strong", 1), append(strong[48:], strong[50])...)
		writeLedger(ns, build.LedgerName("ev", "weak", 0), weak[:40]...)
		writeLedger(ns, build.LedgerName("ev", "weak", 1), append(weak[40:], stray)...)
		eventuallyEval(ns, "ev", func(g Gomega, e *repotv1.RepotEvaluation) {
			g.Expect(e.Status.Progress).NotTo(BeNil())
			g.Expect(e.Status.Progress.RunsDone).To(BeEquivalentTo(len(strong) + len(weak)))
			g.Expect(e.Status.Scaling).NotTo(BeNil())
		})
		e := getEval(ns, "ev")

		res, err := results.ReadEvaluationResults(ctx, k8s, ns, "ev")
		Expect(err).NotTo(HaveOccurred())
		Expect(res.Records).To(HaveLen(len(strong) + len(weak)))
		dir := GinkgoT().TempDir()
		Expect(results.ExportEvaluation(dir, res)).To(Succeed())

		Expect(exporttest.MatchesStatus(e, dir)).To(Succeed())

		By("reporting the live evaluation and the export, and opening the page in chromium")
		out := os.Getenv("REPORT_ARTIFACTS")
		if out == "" {
			out = GinkgoT().TempDir()
		}
		page := filepath.Join(out, "evaluation.html")
		fh, err := os.Create(page)
		Expect(err).NotTo(HaveOccurred())
		Expect(report.Render(fh, report.Report{Title: "envtest evaluation", Sources: []report.Source{res.Source(report.OriginEvaluation)}})).To(Succeed())
		Expect(fh.Close()).To(Succeed())
		srcs, _, err := report.LoadDir(dir, nil)
		Expect(err).NotTo(HaveOccurred())
		Expect(srcs).To(HaveLen(1))
		var sum summary.Summary
		b, err := os.ReadFile(filepath.Join(dir, contract.SummaryFile))
		Expect(err).NotTo(HaveOccurred())
		Expect(json.Unmarshal(b, &sum)).To(Succeed())
		Expect(srcs[0].Summary).To(Equal(sum))
		// success, routes, cost, scaling, two heat maps
		r := reporttest.Check(GinkgoT(), page, filepath.Join(out, "evaluation.png"), 6)
		GinkgoWriter.Println(r)
	})
})
