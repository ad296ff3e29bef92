//go:build e2e

package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	repotv1 "repot.dev/repot-operator/api/v1alpha1"
	"repot.dev/repot-operator/contract"
)

// Focus with: make e2e E2E_FLAGS='-ginkgo.label-filter=paper'
func paperSpecs(cluster func() *testCluster) {
	Describe("the paper's comparison on the local cluster", Label("paper"), func() {
		var tc *testCluster
		const name = "paper-comparison"

		BeforeAll(func() {
			tc = cluster()
			tc.kubectl("apply", "-n", ns, "-f", filepath.Join(rootDir, "config/samples/paper-comparison.yaml"))
		})

		It("completes config/samples/paper-comparison.yaml with all seven methods in status, export and report", func() {
			e := tc.awaitComplete(name, 40*time.Minute)
			Expect(e.Status.Progress.RunsDone).To(Equal(e.Status.Progress.RunsTotal))
			Expect(e.Status.Models).To(HaveLen(len(e.Spec.Models)))
			for _, ms := range e.Status.Models {
				var got []string
				for _, mr := range ms.Methods {
					got = append(got, string(mr.Method))
					Expect(mr.Total).To(BeNumerically(">", 0), "model %s method %s", ms.Name, mr.Method)
					Expect(mr.CallsPerProblem).NotTo(BeEmpty(), "model %s method %s", ms.Name, mr.Method)
					if mr.Method != repotv1.MethodPoT {
						Expect(mr.CostVsPot).NotTo(BeEmpty(), "model %s method %s: no cost vs pot", ms.Name, mr.Method)
					}
				}
				Expect(got).To(ConsistOf(contract.PaperMethods), "model %s", ms.Name)
				// Each method has its paired statistic against pot.
				against := map[string]bool{}
				for _, c := range ms.Comparisons {
					if c.Baseline == repotv1.MethodPoT {
						against[string(c.Method)] = true
					}
				}
				for _, m := range contract.PaperMethods {
					if m != contract.MethodPoT {
						Expect(against).To(HaveKey(m), "model %s: no McNemar comparison of %s against pot", ms.Name, m)
					}
				}
			}
			expectExportMatchesStatus(tc, name)
			page, err := os.ReadFile(filepath.Join(tc.logs, "report-"+name+".html"))
			Expect(err).NotTo(HaveOccurred())
			cost := string(page)[strings.Index(string(page), `-cost"`):]
			for _, m := range contract.PaperMethods {
				Expect(cost).To(ContainSubstring(" / "+m+"<"), "the cost chart and table do not show %s", m)
			}
		})
	})
}
