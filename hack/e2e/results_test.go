//go:build e2e

package e2e

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"sigs.k8s.io/controller-runtime/pkg/client"

	repotv1 "repot.dev/repot-operator/api/v1alpha1"
	"repot.dev/repot-operator/controllers"
	"repot.dev/repot-operator/runner"
	"repot.dev/repot-operator/runner/report/reporttest"
	"repot.dev/repot-operator/runner/summary"
)

// repotCmd runs bin/repot against the test cluster and returns its output.
func (tc *testCluster) repotCmd(args ...string) string {
	cmd := exec.Command(filepath.Join(binDir, "repot"), args...)
	cmd.Env = append(os.Environ(), "KUBECONFIG="+tc.kubeconfig)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	Expect(cmd.Run()).To(Succeed(), "repot %v:\n%s", args, out.String())
	return out.String()
}

// expectExportMatchesStatus exports a finished evaluation with `repot results
// export` and checks that the exported summary.json, mapped to status
// figures, marshals to the very bytes of the live status's figures; then it
// reports the evaluation with `repot report` and opens the page in chromium.
func expectExportMatchesStatus(tc *testCluster, name string) {
	dir := filepath.Join(tc.logs, "export-"+name)
	Expect(os.RemoveAll(dir)).To(Succeed())
	tc.repotCmd("results", "export", "--evaluation", name, "-n", ns, "--out", dir)

	b, err := os.ReadFile(filepath.Join(dir, runner.SummaryFile))
	Expect(err).NotTo(HaveOccurred())
	var sum summary.Summary
	Expect(json.Unmarshal(b, &sum)).To(Succeed())
	f, err := os.Open(filepath.Join(dir, runner.RecordsFile))
	Expect(err).NotTo(HaveOccurred())
	recs, partial, err := runner.ReadRecords(f)
	f.Close()
	Expect(err).NotTo(HaveOccurred())
	Expect(partial).To(BeZero())
	Expect(summary.Aggregate(recs)).To(Equal(sum), "summary.json is not the aggregate of records.jsonl")

	e := &repotv1.RepotEvaluation{}
	ctx, cancel := ctxTimeout(30 * time.Second)
	Expect(tc.c.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, e)).To(Succeed())
	cancel()
	var scaling *summary.ScalingReport
	if len(sum.Models) >= 2 {
		s := summary.Scaling(recs)
		scaling = &s
	}
	figs, sc := controllers.FiguresFromSummary(e, sum, scaling)
	want, err := json.Marshal(controllers.FiguresFromStatus(&e.Status))
	Expect(err).NotTo(HaveOccurred())
	got, err := json.Marshal(figs)
	Expect(err).NotTo(HaveOccurred())
	Expect(string(got)).To(Equal(string(want)), "exported figures differ from the status")
	wantSc, _ := json.Marshal(e.Status.Scaling)
	gotSc, _ := json.Marshal(sc)
	Expect(string(gotSc)).To(Equal(string(wantSc)), "exported scaling differs from the status")
	var runs int32
	for _, m := range e.Status.Models {
		runs += m.RunsDone
	}
	Expect(len(recs)).To(BeEquivalentTo(runs), "exported records vs the status's runsDone")

	page := filepath.Join(tc.logs, "report-"+name+".html")
	out := tc.repotCmd("report", "--evaluation", name, "-n", ns, "-o", page)
	Expect(out).To(ContainSubstring(page))
	fromExport := filepath.Join(tc.logs, "report-"+name+"-export.html")
	tc.repotCmd("report", dir, "-o", fromExport)
	pageBytes, _ := os.ReadFile(page)
	exportBytes, _ := os.ReadFile(fromExport)
	Expect(bytes.Count(exportBytes, []byte("<svg "))).To(Equal(bytes.Count(pageBytes, []byte("<svg "))), "the export and the live evaluation report different charts")
	res := reporttest.Check(GinkgoT(), page, page+".png", 6)
	GinkgoWriter.Println("report of", name, ":", res)
}

var _ = Describe("repot results export and repot report", func() {
	It("needs an evaluation or a schedule", func() {
		cmd := exec.Command(filepath.Join(binDir, "repot"), "results", "export", "--out", GinkgoT().TempDir())
		out, err := cmd.CombinedOutput()
		Expect(err).To(HaveOccurred())
		Expect(string(out)).To(ContainSubstring("exactly one of --evaluation NAME and --schedule NAME"))
	})
})
