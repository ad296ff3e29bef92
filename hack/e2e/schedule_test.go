//go:build e2e

package e2e

import (
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	repotv1 "repot.dev/repot-operator/api/v1alpha1"
	"repot.dev/repot-operator/controllers/schedule"
)

// everyMinuteYAML runs a small simulated evaluation every minute; Forbid
// skips the minutes while a run is active.
const everyMinuteYAML = `apiVersion: repot.dev/v1alpha1
kind: RepotSchedule
metadata:
  name: minutely
spec:
  schedule: "* * * * *"
  concurrencyPolicy: Forbid
  successfulHistoryLimit: 2
  evaluationTemplate:
    labels: [{key: e2e, value: schedule}]
    spec:
      suite: open-source-120
      methods: [pot, repot]
      models:
      - name: sim
        simulated: {profile: strong, seed: 3}
      runner:
        shardsPerModel: 2
        inFlightPerShard: 16
        resources: {requests: {cpu: 250m, memory: 512Mi}, limits: {memory: 2Gi}}
`

// This spec starts its own local cluster; run it alone with
// E2E_FLAGS='-ginkgo.focus=RepotSchedule'.
func scheduleSpecs(cluster func() *testCluster) {
	Describe("RepotSchedule on the local cluster", Label("schedule"), func() {
		var tc *testCluster

		BeforeAll(func() {
			tc = cluster()
			s := &repotv1.RepotSchedule{}
			Expect(yaml.Unmarshal([]byte(everyMinuteYAML), s)).To(Succeed())
			s.Namespace = ns
			ctx, cancel := ctxTimeout(30 * time.Second)
			defer cancel()
			Expect(tc.c.Create(ctx, s)).To(Succeed())
			// The cluster is shared: the schedule, which starts a run every
			// minute, goes with its runs before the next suite starts.
			DeferCleanup(func() {
				ctx, cancel := ctxTimeout(5 * time.Minute)
				defer cancel()
				Expect(client.IgnoreNotFound(tc.c.Delete(ctx, s, client.PropagationPolicy(metav1.DeletePropagationForeground)))).To(Succeed())
				Eventually(func(g Gomega) {
					var runs repotv1.RepotEvaluationList
					g.Expect(tc.c.List(ctx, &runs, client.InNamespace(ns))).To(Succeed())
					for _, r := range runs.Items {
						g.Expect(metav1.IsControlledBy(&r, s)).To(BeFalse(), "run %s of the deleted schedule is still there", r.Name)
					}
					g.Expect(apierrors.IsNotFound(tc.c.Get(ctx, client.ObjectKeyFromObject(s), &repotv1.RepotSchedule{}))).To(BeTrue())
				}).WithTimeout(4 * time.Minute).WithPolling(2 * time.Second).Should(Succeed())
			})
		})

		It("runs two real evaluations end to end and compares the second with the first", func() {
			var sched repotv1.RepotSchedule
			Eventually(func(g Gomega) {
				tc.operatorAlive()
				ctx, cancel := ctxTimeout(30 * time.Second)
				defer cancel()
				g.Expect(tc.c.Get(ctx, client.ObjectKey{Namespace: ns, Name: "minutely"}, &sched)).To(Succeed())
				var done int
				for _, h := range sched.Status.History {
					if h.Result == repotv1.RunComplete {
						done++
					}
				}
				g.Expect(done).To(BeNumerically(">=", 2), "completed runs in the history: %+v, active: %+v", sched.Status.History, sched.Status.Active)
			}).WithTimeout(20 * time.Minute).WithPolling(5 * time.Second).Should(Succeed())

			second, first := sched.Status.History[0], sched.Status.History[1]
			By("run " + first.Name + " then run " + second.Name)
			Expect(second.ComparedWith).To(Equal(first.Name))
			Expect(second.Comparisons).To(HaveLen(2), "one comparison per method of the one model")
			Expect(second.Differences).To(BeEmpty(), "two runs of one template on one cluster differ only in time")
			for _, c := range second.Comparisons {
				Expect(c.Model).To(Equal("sim"))
				Expect(c.Problems).To(Equal(int32(120)))
				Expect(c.PValue).NotTo(BeEmpty())
				GinkgoWriter.Printf("%s/%s: %d/%d solved, was %d (%s points, %s p=%s)\n", c.Model, c.Method, c.Solved, c.Problems, c.BaselineSolved, c.DiffPoints, c.Test, c.PValue)
			}
			for _, h := range []repotv1.ScheduledRun{first, second} {
				Expect(h.Models).To(HaveLen(1))
				Expect(h.Models[0].Methods).To(HaveLen(2))
				for _, m := range h.Models[0].Methods {
					Expect(m.Rate).NotTo(BeEmpty())
					Expect(m.Interval).NotTo(BeEmpty())
				}
				// The run itself is a real evaluation the operator completed.
				var e repotv1.RepotEvaluation
				ctx, cancel := ctxTimeout(30 * time.Second)
				Expect(tc.c.Get(ctx, client.ObjectKey{Namespace: ns, Name: h.Name}, &e)).To(Succeed())
				cancel()
				Expect(e.Labels).To(HaveKeyWithValue(schedule.LabelSchedule, "minutely"))
				Expect(meta.IsStatusConditionTrue(e.Status.Conditions, repotv1.ConditionComplete)).To(BeTrue())
				Expect(e.Status.Progress.RunsDone).To(Equal(int32(240)))
			}
			c := meta.FindStatusCondition(sched.Status.Conditions, repotv1.ConditionRegressed)
			Expect(c).NotTo(BeNil())
			Expect(c.Status).To(Equal(metav1.ConditionFalse), "the same model and seed twice: %s", c.Message)
			Expect(c.Reason).To(Equal(repotv1.ReasonNoSignificantDrop))
		})
	})
}
