package integration_test

import (
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	repotv1 "repot.dev/repot-operator/api/v1alpha1"
	revtesting "repot.dev/repot-operator/api/v1alpha1/testing"
	"repot.dev/repot-operator/controllers/build"
)

// envtest runs no ReplicaSet or Job controller: the test writes what they
// write when the API server refuses a pod (a ResourceQuota here), the
// Deployment's ReplicaFailure condition and the Job's FailedCreate event,
// and the installed operator must read each into the status.
var _ = Describe("pods the API server refuses", func() {
	const quota = `pods "x" is forbidden: exceeded quota: tenant-a, requested: requests.nvidia.com/gpu=1, used: requests.nvidia.com/gpu=4, limited: requests.nvidia.com/gpu=4`

	It("stalls a model whose server's pods are refused, in the API server's words, and lets it go on once they are created", func() {
		ns := createNamespace("refused-server")
		ev := revtesting.MakeEvaluation("ev", ns).Simulated("m", "strong", 1).Shards(1).Obj()
		Expect(k8s.Create(ctx, ev)).To(Succeed())
		server := build.ServerName("ev", "m")
		Eventually(exists(&appsv1.Deployment{}, ns, server)).Should(BeTrue())
		Eventually(func() error {
			var d appsv1.Deployment
			if err := k8s.Get(ctx, key(ns, server), &d); err != nil {
				return err
			}
			d.Status.Conditions = []appsv1.DeploymentCondition{{Type: appsv1.DeploymentReplicaFailure, Status: corev1.ConditionTrue,
				Reason: "FailedCreate", Message: quota, LastUpdateTime: metav1.Now(), LastTransitionTime: metav1.Now()}}
			return k8s.Status().Update(ctx, &d)
		}).Should(Succeed())
		eventuallyEval(ns, "ev", func(g Gomega, e *repotv1.RepotEvaluation) {
			g.Expect(e.Status.Models).To(HaveLen(1))
			srv := e.Status.Models[0].Server
			g.Expect(srv.State).To(Equal(repotv1.ServerStalled))
			g.Expect(srv.Reason).To(Equal(repotv1.ReasonServerPodsRefused))
			g.Expect(srv.Message).To(ContainSubstring("exceeded quota: tenant-a"))
			g.Expect(condition(e, repotv1.ConditionStalled).Status).To(Equal(metav1.ConditionTrue))
		})
		Eventually(eventReasons(ns, "ev")).Should(ContainElement("Warning/" + repotv1.ReasonServerStalled))

		By("the quota raised, the pod is created and answers: the model goes on")
		Eventually(func() error {
			var d appsv1.Deployment
			if err := k8s.Get(ctx, key(ns, server), &d); err != nil {
				return err
			}
			d.Status.Conditions = nil
			return k8s.Status().Update(ctx, &d)
		}).Should(Succeed())
		setServerReady(ns, "ev", "m", true)
		Eventually(exists(&batchv1.Job{}, ns, build.RunnerJobName("ev", "m"))).Should(BeTrue())
		eventuallyEval(ns, "ev", func(g Gomega, e *repotv1.RepotEvaluation) {
			g.Expect(condition(e, repotv1.ConditionStalled).Status).To(Equal(metav1.ConditionFalse))
		})
	})

	It("stalls a model whose runner Job's pods are refused, reading the Job controller's FailedCreate event", func() {
		ns := createNamespace("refused-runner")
		ev := revtesting.MakeEvaluation("ev", ns).Simulated("m", "strong", 1).Shards(1).Obj()
		Expect(k8s.Create(ctx, ev)).To(Succeed())
		Eventually(exists(&appsv1.Deployment{}, ns, build.ServerName("ev", "m"))).Should(BeTrue())
		setServerReady(ns, "ev", "m", true)
		var job batchv1.Job
		Eventually(func() error { return k8s.Get(ctx, key(ns, build.RunnerJobName("ev", "m")), &job) }).Should(Succeed())

		// The event's time is the operator's clock (the suite's fake clock,
		// which other specs step): the operator counts only events of the
		// last 15 minutes by it.
		now := metav1.NewTime(clk.Now())
		Expect(k8s.Create(ctx, &corev1.Event{
			ObjectMeta:     metav1.ObjectMeta{Namespace: ns, GenerateName: job.Name + "."},
			InvolvedObject: corev1.ObjectReference{Kind: "Job", APIVersion: "batch/v1", Namespace: ns, Name: job.Name, UID: job.UID},
			Reason:         "FailedCreate", Message: "Error creating: " + quota, Type: corev1.EventTypeWarning,
			Source: corev1.EventSource{Component: "job-controller"}, FirstTimestamp: now, LastTimestamp: now, Count: 1,
		})).To(Succeed())
		// Events are not watched: the evaluation's next pass reads it (a
		// pass of a running evaluation comes at least every few seconds
		// here; a write to the evaluation brings one at once).
		Eventually(func() error {
			e := getEval(ns, "ev")
			e.Annotations = map[string]string{"test/poke": "1"}
			return k8s.Update(ctx, e)
		}).Should(Succeed())
		eventuallyEval(ns, "ev", func(g Gomega, e *repotv1.RepotEvaluation) {
			c := condition(e, repotv1.ConditionStalled)
			g.Expect(c.Status).To(Equal(metav1.ConditionTrue))
			g.Expect(c.Message).To(ContainSubstring("exceeded quota: tenant-a"))
			g.Expect(c.Message).To(ContainSubstring("runner pods of model m"))
		})
		var d appsv1.Deployment
		Expect(k8s.Get(ctx, key(ns, build.ServerName("ev", "m")), &d)).To(Succeed())
		Expect(d.Annotations).To(HaveKey(build.AnnotationStalledSince), "the server's release clock did not start")
	})
})
