//go:build e2e

package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	repotv1 "repot.dev/repot-operator/api/v1alpha1"
)

// derailCases is how many published Derail-550 cases the local-cluster run
// takes (every condition runs on each): enough for every environment and
// both injection types to appear, small enough for two busy cores.
const derailCases = 35

// Focus with: make e2e E2E_FLAGS='-ginkgo.focus=derail-550'
func derailSpecs(cluster func() *testCluster) {
	Describe("a derail-550 evaluation on the local cluster", Label("derail"), func() {
		var tc *testCluster
		const name = "derail"

		BeforeAll(func() {
			data := filepath.Join(rootDir, "..", "shared", "data", "derail_550.jsonl")
			b, err := os.ReadFile(data)
			if err != nil {
				Skip("the published Derail-550 data is not here (" + data + "): " + err.Error())
			}
			lines := strings.SplitAfter(string(b), "\n")
			// Every (environment, complexity) level holds 25 cases in a row:
			// take every sixteenth case so that all environments appear.
			var sub []string
			for i := 0; i < len(lines) && len(sub) < derailCases; i += 16 {
				sub = append(sub, lines[i])
			}
			tc = cluster()
			ctx, cancel := ctxTimeout(30 * time.Second)
			defer cancel()
			Expect(tc.c.Create(ctx, &corev1.ConfigMap{
				ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "derail-550"},
				Data:       map[string]string{"problems.jsonl": strings.Join(sub, "")},
			})).To(Succeed())
			Expect(tc.c.Create(ctx, &repotv1.RepotEvaluation{
				ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
				Spec: repotv1.RepotEvaluationSpec{
					Suite:    repotv1.SuiteDerail550,
					Problems: &repotv1.ProblemSource{ConfigMap: &repotv1.ConfigMapKey{Name: "derail-550"}},
					// All eleven conditions (4 shards: the CRD bounds a shard to
					// 2000 of the 550 x 11 runs), VEX with the call budget of the
					// paper's Derail runs.
					Derail: &repotv1.DerailSpec{Conditions: repotv1.AllDerailConditions()},
					VEX:    &repotv1.VEXSpec{MaxLLMCalls: ptr.To[int32](4)},
					Models: []repotv1.ModelSpec{{Name: "sim-strong", Simulated: &repotv1.SimulatedModel{Profile: "strong", Seed: ptr.To[int64](3)}}},
					Runner: &repotv1.RunnerSpec{ShardsPerModel: ptr.To[int32](4), InFlightPerShard: ptr.To[int32](16), Resources: smallRunner()},
				},
			})).To(Succeed())
		})

		It("completes every condition on every case and reports them per condition", func() {
			e := tc.awaitComplete(name, 30*time.Minute)
			conditions := repotv1.AllDerailConditions()
			Expect(e.Status.Progress.RunsDone).To(BeEquivalentTo(derailCases * len(conditions)))
			Expect(e.Status.Progress.RunsTotal).To(BeEquivalentTo(derailCases * len(conditions)))
			Expect(e.Status.Models).To(HaveLen(1))
			ms := e.Status.Models[0]
			Expect(ms.Methods).To(BeEmpty())
			Expect(ms.Derail).To(HaveLen(len(conditions)))
			for i, r := range ms.Derail {
				Expect(r.Condition).To(Equal(conditions[i]))
				Expect(r.Total+r.InfraErrors).To(BeEquivalentTo(derailCases), "condition %s", r.Condition)
				Expect(r.Rate).NotTo(BeEmpty())
				Expect(r.ByInjectionType).NotTo(BeEmpty())
				Expect(r.ByEnvironment).To(HaveLen(3))
				if r.Condition != repotv1.DerailErrorOnly {
					Expect(r.VsErrorOnly).NotTo(BeNil(), "condition %s", r.Condition)
				}
			}
			Expect(e.Status.Summary.Derail).To(HavePrefix("nf "))

			get := tc.kubectl("get", "reval", name, "-n", ns)
			GinkgoWriter.Println(get)
			Expect(get).To(ContainSubstring("RECOVERY"))
			Expect(get).To(ContainSubstring("sla "))
			report := tc.localcluster("report", name, "-n", ns)
			GinkgoWriter.Println(report)
			Expect(report).To(ContainSubstring("Derail-550 (checkpoint statement paper)"))
			for _, c := range conditions {
				Expect(report).To(ContainSubstring(string(c)))
			}
		})
	})
}
