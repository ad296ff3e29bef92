//go:build e2e

package e2e

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"repot.dev/repot-operator/analysis/report/reporttest"
	repotv1 "repot.dev/repot-operator/api/v1alpha1"
	"repot.dev/repot-operator/cmd/repot/results/exporttest"
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

	e := &repotv1.RepotEvaluation{}
	ctx, cancel := ctxTimeout(30 * time.Second)
	Expect(tc.c.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, e)).To(Succeed())
	cancel()
	Expect(exporttest.MatchesStatus(e, dir)).To(Succeed())

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
