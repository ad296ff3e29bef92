//go:build e2e

package e2e

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	repotv1 "repot.dev/repot-operator/api/v1alpha1"
)

// upgradeYAML is the evaluation that runs while the chart is upgraded.
const upgradeYAML = `apiVersion: repot.dev/v1alpha1
kind: RepotEvaluation
metadata:
  name: upgrade
spec:
  suite: open-source-120
  methods: [pot, pot-retry, repot]
  models:
  - name: sim-strong
    simulated: {profile: strong, seed: 5}
  runner:
    shardsPerModel: 2
    inFlightPerShard: 8
` + smallRunnerYAML

// chartPaths are the chart's files that make its objects (not crds/, which
// helm installs once and never upgrades, nor its README).
var chartPaths = []string{"Chart.yaml", "values.yaml", "values.schema.json", "templates", "files"}

// previousChart extracts the operator's previous chart from git into a
// temporary directory and returns the commit it was taken at and the
// directory. The previous chart is the one before the last change of
// Chart.yaml's version; while the version was never raised (one change:
// the chart's first commit), the one before the last commit that changed
// what the chart renders (chartPaths). REPOT_E2E_PREVIOUS_CHART (a git
// revision) overrides both.
func previousChart() (rev, dir string) {
	git := func(args ...string) string {
		out, err := exec.Command("git", append([]string{"-C", rootDir}, args...)...).Output()
		Expect(err).NotTo(HaveOccurred(), "git %s (the helm upgrade spec takes the previous chart from the repository's history; set REPOT_E2E_PREVIOUS_CHART to a revision that has it)", strings.Join(args, " "))
		return strings.TrimSpace(string(out))
	}
	const chart = "charts/repot-operator"
	rev = os.Getenv("REPOT_E2E_PREVIOUS_CHART")
	if rev == "" {
		bumps := strings.Fields(git("log", "--format=%H", "-G^version:", "--", chart+"/Chart.yaml"))
		if len(bumps) > 1 {
			rev = bumps[0] + "^"
		} else {
			args := []string{"log", "-1", "--format=%H", "--"}
			for _, p := range chartPaths {
				args = append(args, chart+"/"+p)
			}
			last := git(args...)
			Expect(last).NotTo(BeEmpty(), "no commit changed %s", chart)
			rev = last + "^"
		}
	}
	rev = git("rev-parse", "--short", rev)
	dir = GinkgoT().TempDir()
	out, err := exec.Command("bash", "-c", `set -o pipefail; git -C "$1" archive "$2" "$3" | tar -x -C "$4"`, "-", rootDir, rev, chart, dir).CombinedOutput()
	Expect(err).NotTo(HaveOccurred(), "git archive %s %s: %s", rev, chart, out)
	return rev, filepath.Join(dir, chart)
}

var _ = Describe("helm upgrade of the operator from the previous chart with an evaluation running", Ordered, Label("helm"), func() {
	var (
		tc          *testCluster
		current     = filepath.Join(rootDir, "charts/repot-operator")
		rev, before string
	)
	// clusterWide: the evaluation is in its own namespace (the chart's
	// default install watches only the operator's).
	image := []string{"--set-string", "image.repository=localhost/repot-operator", "--set-string", "image.tag=dev", "--set", "clusterWide=true"}

	progress := func(g Gomega) *repotv1.RepotEvaluation {
		tc.operatorAlive()
		ctx, cancel := ctxTimeout(30 * time.Second)
		defer cancel()
		e := &repotv1.RepotEvaluation{}
		g.Expect(tc.c.Get(ctx, client.ObjectKey{Namespace: ns, Name: "upgrade"}, e)).To(Succeed())
		return e
	}

	BeforeAll(func() {
		var prev string
		rev, prev = previousChart()
		tc = bootRealCluster("helm", "--gpus", "1")
		DeferCleanup(func() { tc.stop() })
		// The CRDs are the current ones from the start, as the upgrade
		// procedure applies them before `helm upgrade` (helm leaves crds/
		// alone on upgrade): the image is today's, whose status needs them.
		tc.kubectl("apply", "--server-side", "-f", filepath.Join(current, "crds"))
		By("installing the chart as it was at " + rev)
		tc.installOperator(prev, "--skip-crds")
		before = tc.helm("get", "manifest", operatorRelease, "-n", operatorNamespace)
		f := filepath.Join(tc.logs, "upgrade.yaml")
		Expect(os.WriteFile(f, []byte(upgradeYAML), 0o644)).To(Succeed())
		tc.kubectl("apply", "-n", ns, "-f", f)
	})

	It("upgrades the release to the current chart mid-run; the evaluation completes", func() {
		var done int32
		Eventually(func(g Gomega) {
			e := progress(g)
			g.Expect(e.Status.Progress).NotTo(BeNil())
			g.Expect(e.Status.Progress.RunsDone).To(BeNumerically(">", 0), "no run done yet")
			g.Expect(e.Status.Progress.RunsDone).To(BeNumerically("<", e.Status.Progress.RunsTotal), "the evaluation finished before the upgrade")
			done = e.Status.Progress.RunsDone
		}).WithTimeout(8 * time.Minute).WithPolling(time.Second).Should(Succeed())

		By(fmt.Sprintf("upgrading the release to the current chart at %d runs done", done))
		tc.kubectl("apply", "--server-side", "-f", filepath.Join(current, "crds"))
		tc.helm(append([]string{"upgrade", operatorRelease, current, "--namespace", operatorNamespace}, image...)...)

		var history []struct {
			Revision int    `json:"revision"`
			Status   string `json:"status"`
			Chart    string `json:"chart"`
		}
		Expect(json.Unmarshal([]byte(tc.helm("history", operatorRelease, "-n", operatorNamespace, "-o", "json")), &history)).To(Succeed())
		Expect(history).To(HaveLen(2))
		Expect(history[0].Status).To(Equal("superseded"))
		Expect(history[1].Revision).To(Equal(2))
		Expect(history[1].Status).To(Equal("deployed"))
		after := tc.helm("get", "manifest", operatorRelease, "-n", operatorNamespace)
		Expect(after).NotTo(Equal(before), "the chart at %s renders what the current one does: the upgrade changed nothing", rev)

		Eventually(func(g Gomega) {
			e := progress(g)
			for _, c := range e.Status.Conditions {
				if c.Type == repotv1.ConditionFailed && c.Status == "True" {
					StopTrying("the evaluation failed after the upgrade: " + c.Message).Now()
				}
			}
			g.Expect(e.Status.Progress).NotTo(BeNil())
			g.Expect(e.Status.Progress.RunsDone).To(BeNumerically(">", done), "no run done since the upgrade")
			g.Expect(e.Status.Progress.RunsDone).To(Equal(e.Status.Progress.RunsTotal))
			complete := false
			for _, c := range e.Status.Conditions {
				complete = complete || (c.Type == repotv1.ConditionComplete && c.Status == "True")
			}
			g.Expect(complete).To(BeTrue(), "not Complete yet")
		}).WithTimeout(15 * time.Minute).WithPolling(2 * time.Second).Should(Succeed())
		GinkgoWriter.Println(tc.kubectl("get", "reval", "upgrade", "-n", ns))
	})

	It("helm uninstall removes the operator and keeps the CRDs and the evaluation", func() {
		tc.helm("uninstall", operatorRelease, "-n", operatorNamespace, "--wait", "--timeout", "2m")
		Eventually(func() bool {
			ctx, cancel := ctxTimeout(30 * time.Second)
			defer cancel()
			var ds appsv1.DeploymentList
			err := tc.c.List(ctx, &ds, client.InNamespace(operatorNamespace))
			return err == nil && len(ds.Items) == 0
		}).WithTimeout(2 * time.Minute).WithPolling(time.Second).Should(BeTrue())
		ctx, cancel := ctxTimeout(30 * time.Second)
		defer cancel()
		err := tc.c.Get(ctx, client.ObjectKey{Namespace: ns, Name: "upgrade"}, &repotv1.RepotEvaluation{})
		Expect(err).NotTo(HaveOccurred(), "helm uninstall leaves the CRDs and so the evaluations")
		Expect(tc.helm("list", "-n", operatorNamespace, "-q")).To(BeEmpty())
	})
})
