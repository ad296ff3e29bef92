//go:build e2e

package e2e

import (
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	repotv1 "repot.dev/repot-operator/api/v1alpha1"
	"repot.dev/repot-operator/contract"
	"repot.dev/repot-operator/controllers/build"
)

// sweepYAML is four simulated models of one GPU each, two at a time; one
// method keeps the run short.
const sweepYAML = `apiVersion: repot.dev/v1alpha1
kind: RepotEvaluation
metadata:
  name: sweep
spec:
  suite: open-source-120
  methods: [pot]
  maxParallelModels: 2
  models:
  - {name: sim-weak, simulated: {profile: weak, seed: 1, gpus: 1}}
  - {name: sim-medium, simulated: {profile: medium, seed: 2, gpus: 1}}
  - {name: sim-strong, simulated: {profile: strong, seed: 3, gpus: 1}}
  - {name: sim-frontier, simulated: {profile: frontier, seed: 4, gpus: 1}}
  runner:
    shardsPerModel: 2
    inFlightPerShard: 8
` + smallRunnerYAML

func sweepSpecs(cluster func() *testCluster) {
	Describe("a sweep of four simulated models with maxParallelModels 2 on a node with four GPUs", func() {
		var tc *testCluster

		BeforeAll(func() {
			// More GPUs than maxParallelModels needs: the limit, not the
			// node, keeps the third server out.
			tc = cluster()
			e := &repotv1.RepotEvaluation{}
			Expect(yaml.Unmarshal([]byte(sweepYAML), e)).To(Succeed())
			e.Namespace = ns
			ctx, cancel := ctxTimeout(30 * time.Second)
			defer cancel()
			Expect(tc.c.Create(ctx, e)).To(Succeed())
		})

		It("never has more than two servers, deletes each soon after its model's last run, and reports GPU-seconds", func() {
			maxServers := 0
			seen := map[string]bool{}
			goneAt := map[string]time.Time{}
			var final *repotv1.RepotEvaluation
			deadline := time.Now().Add(12 * time.Minute)
			for final == nil {
				if f := tc.operatorFailure(); f != "" {
					Fail(f)
				}
				Expect(time.Now().Before(deadline)).To(BeTrue(), "the sweep did not complete in 12 minutes")
				ctx, cancel := ctxTimeout(30 * time.Second)
				var ds appsv1.DeploymentList
				err := tc.c.List(ctx, &ds, client.InNamespace(ns), client.MatchingLabels{
					build.LabelEvaluation: "sweep", build.LabelComponent: build.ComponentServer})
				now := time.Now()
				if err == nil {
					live := map[string]bool{}
					for _, d := range ds.Items {
						if d.DeletionTimestamp == nil {
							live[d.Labels[build.LabelModel]] = true
						}
					}
					maxServers = max(maxServers, len(live))
					for m := range live {
						seen[m] = true
					}
					for m := range seen {
						if _, done := goneAt[m]; !done && !live[m] {
							goneAt[m] = now
						}
					}
				}
				e := &repotv1.RepotEvaluation{}
				if tc.c.Get(ctx, client.ObjectKey{Namespace: ns, Name: "sweep"}, e) == nil && e.Status.CompletionTime != nil {
					final = e
				}
				cancel()
				time.Sleep(200 * time.Millisecond)
			}
			Expect(conditionTrue(final, repotv1.ConditionComplete)).To(BeTrue(), "the sweep failed: %+v", final.Status.Conditions)
			Expect(maxServers).To(Equal(2), "servers that existed at once")

			// The end of each model's last run, from its ledgers.
			ctx, cancel := ctxTimeout(30 * time.Second)
			defer cancel()
			var cms corev1.ConfigMapList
			Expect(tc.c.List(ctx, &cms, client.InNamespace(ns), client.MatchingLabels{
				build.LabelEvaluation: "sweep", build.LabelComponent: build.ComponentLedger})).To(Succeed())
			lastEnd := map[string]time.Time{}
			for _, cm := range cms.Items {
				for _, line := range strings.Split(cm.Data[contract.LedgerRecordsKey], "\n") {
					if strings.TrimSpace(line) == "" {
						continue
					}
					r, err := contract.ParseRecord([]byte(line))
					Expect(err).NotTo(HaveOccurred())
					Expect(r.StartedUnixMilli).To(BeNumerically(">", 0), "record without a start time")
					if end := time.UnixMilli(r.StartedUnixMilli + r.WallMillis); end.After(lastEnd[r.Model]) {
						lastEnd[r.Model] = end
					}
				}
			}
			for _, m := range final.Status.Models {
				GinkgoWriter.Printf("%s: %s, runs %d/%d, server created %v ready %v deleted %v (seen gone %v, last run ended %v), GPU-seconds held %d idle %d\n",
					m.Name, m.Phase, m.RunsDone, m.RunsTotal, m.ServerCreatedTime, m.ServerReadyTime, m.ServerDeletedTime,
					goneAt[m.Name].Format(time.RFC3339Nano), lastEnd[m.Name].Format(time.RFC3339Nano), m.GPUSecondsHeld, m.GPUSecondsIdle)
				Expect(m.Phase).To(Equal(repotv1.ModelDone), m.Name)
				Expect(m.RunsDone).To(Equal(m.RunsTotal), m.Name)
				Expect(goneAt).To(HaveKey(m.Name), "the server of %s was never seen gone", m.Name)
				Expect(goneAt[m.Name].Sub(lastEnd[m.Name])).To(BeNumerically("<", 10*time.Second), "server of %s outlived its last run", m.Name)
				Expect(m.ServerDeletedTime).NotTo(BeNil(), m.Name)
				Expect(m.GPUSecondsHeld).To(BeNumerically(">", 0), m.Name)
				Expect(m.GPUSecondsIdle).To(BeNumerically("<=", m.GPUSecondsHeld), m.Name)
			}
		})
	})
}

func conditionTrue(e *repotv1.RepotEvaluation, t string) bool {
	for _, c := range e.Status.Conditions {
		if c.Type == t {
			return c.Status == "True"
		}
	}
	return false
}
