package integration_test

import (
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	repotv1 "repot.dev/repot-operator/api/v1alpha1"
	revtesting "repot.dev/repot-operator/api/v1alpha1/testing"
	"repot.dev/repot-operator/contract"
	"repot.dev/repot-operator/controllers/build"
)

// controlledBy says whether obj's controller owner reference names uid.
func controlledBy(obj client.Object, uid types.UID) bool {
	ref := metav1.GetControllerOf(obj)
	return ref != nil && ref.UID == uid
}

var _ = Describe("the identity of children", func() {
	// envtest runs no garbage collector: the children of an evaluation
	// deleted and created again under the same name stay. Here they are made
	// directly, controlled by an earlier evaluation of the same name (another
	// UID), as a lagging collector or a finalizer leaves them.
	It("reads, adopts and counts nothing of an earlier evaluation of the same name, and says whose objects are in the way", func() {
		ns := createNamespace("identity")
		ev := revtesting.MakeEvaluation("ev", ns).Simulated("m", "strong", 1).Shards(1).Obj()
		old := ev.DeepCopy()
		old.UID = "0ld-0000-0000-0000-earlier"
		m := &old.Spec.Models[0]
		oldLedger := build.LedgerConfigMaps(old, m)[0]
		Expect(k8s.Create(ctx, oldLedger)).To(Succeed())
		writeLedger(ns, oldLedger.Name, rec("m", "p1", "pot", true, contract.RouteInitialSuccess, 1))
		oldJob := build.RunnerJob(old, m, build.Options{}.WithDefaults(), false)
		Expect(k8s.Create(ctx, oldJob)).To(Succeed())
		finishJob(ns, oldJob.Name)

		Expect(k8s.Create(ctx, ev)).To(Succeed())
		Eventually(exists(&appsv1.Deployment{}, ns, build.ServerName("ev", "m"))).Should(BeTrue())
		setServerReady(ns, "ev", "m", true)

		eventuallyEval(ns, "ev", func(g Gomega, e *repotv1.RepotEvaluation) {
			c := condition(e, repotv1.ConditionStalled)
			g.Expect(c.Reason).To(Equal(repotv1.ReasonChildNameTaken))
			g.Expect(c.Status).To(Equal(metav1.ConditionTrue))
			g.Expect(c.Message).To(ContainSubstring("ConfigMap " + oldLedger.Name))
			g.Expect(c.Message).To(ContainSubstring(string(old.UID)))
			// The decision knew the runner path blocked (the snapshot looks
			// its names up): the server, which can serve no runner, started
			// its release clock.
			var d appsv1.Deployment
			g.Expect(k8s.Get(ctx, key(ns, build.ServerName("ev", "m")), &d)).To(Succeed())
			g.Expect(d.Annotations).To(HaveKey(build.AnnotationStalledSince))
		})
		Consistently(func(g Gomega) {
			e := getEval(ns, "ev")
			g.Expect(e.Status.Progress).NotTo(BeNil())
			g.Expect(e.Status.Progress.RunsDone).To(BeZero(), "the earlier evaluation's runs are counted")
			g.Expect(condition(e, repotv1.ConditionComplete).Status).NotTo(Equal(metav1.ConditionTrue))
		}, "1s").Should(Succeed())
		var cm corev1.ConfigMap
		Expect(k8s.Get(ctx, key(ns, oldLedger.Name), &cm)).To(Succeed())
		Expect(controlledBy(&cm, old.UID)).To(BeTrue(), "the earlier ledger was adopted")

		// The collector catches up: the evaluation makes its own children.
		Expect(k8s.Delete(ctx, &cm)).To(Succeed())
		Expect(k8s.Delete(ctx, &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: oldJob.Name}}, client.PropagationPolicy(metav1.DeletePropagationBackground))).To(Succeed())
		e := getEval(ns, "ev")
		Eventually(func(g Gomega) {
			var j batchv1.Job
			g.Expect(k8s.Get(ctx, key(ns, oldJob.Name), &j)).To(Succeed())
			g.Expect(controlledBy(&j, e.UID)).To(BeTrue())
			var l corev1.ConfigMap
			g.Expect(k8s.Get(ctx, key(ns, oldLedger.Name), &l)).To(Succeed())
			g.Expect(controlledBy(&l, e.UID)).To(BeTrue())
		}).Should(Succeed())
		eventuallyEval(ns, "ev", func(g Gomega, e *repotv1.RepotEvaluation) {
			g.Expect(condition(e, repotv1.ConditionStalled).Reason).NotTo(Equal(repotv1.ReasonChildNameTaken))
			g.Expect(e.Status.Progress.RunsDone).To(BeZero())
		})
	})

	It("shows a blocked state, with an event, while an object it does not control holds its server's name", func() {
		ns := createNamespace("name-taken")
		ev := revtesting.MakeEvaluation("ev", ns).Simulated("m", "strong", 1).Shards(1).Obj()
		// Someone else's Deployment (no controller) with the server's name,
		// made before the evaluation.
		theirs := build.ServerDeployment(ev, &ev.Spec.Models[0], build.Options{}.WithDefaults(), 0)
		theirs.Namespace, theirs.OwnerReferences, theirs.Labels = ns, nil, map[string]string{"app": "theirs"}
		Expect(k8s.Create(ctx, theirs)).To(Succeed())
		Expect(k8s.Create(ctx, ev)).To(Succeed())

		server := build.ServerName("ev", "m")
		eventuallyEval(ns, "ev", func(g Gomega, e *repotv1.RepotEvaluation) {
			g.Expect(e.Status.Summary).NotTo(BeNil())
			g.Expect(e.Status.Summary.State).To(Equal(repotv1.StateStalled))
			st := condition(e, repotv1.ConditionStalled)
			g.Expect(st.Status).To(Equal(metav1.ConditionTrue))
			g.Expect(st.Reason).To(Equal(repotv1.ReasonChildNameTaken))
			g.Expect(st.Message).To(ContainSubstring("Deployment " + server + " exists and has no controller"))
			rc := condition(e, repotv1.ConditionReconciling)
			g.Expect(rc.Status).To(Equal(metav1.ConditionFalse))
			g.Expect(rc.Reason).To(Equal(repotv1.ReasonChildNameTaken))
			g.Expect(rc.Message).To(Equal(st.Message))
			g.Expect(rc.ObservedGeneration).To(Equal(e.Generation))
			// Its server was never created: the evaluation has not started.
			g.Expect(e.Status.StartTime).To(BeNil())
		})
		Eventually(eventReasons(ns, "ev")).Should(ContainElement("Warning/" + repotv1.ReasonChildNameTaken))
		var d appsv1.Deployment
		Expect(k8s.Get(ctx, key(ns, server), &d)).To(Succeed())
		Expect(metav1.GetControllerOf(&d)).To(BeNil(), "their Deployment was adopted")

		By("once their Deployment is gone, the evaluation creates its own and goes on")
		Expect(k8s.Delete(ctx, theirs)).To(Succeed())
		e := getEval(ns, "ev")
		// Their Deployment bears none of the operator's labels, so its
		// deletion brings no watch event: the evaluation sees the name free
		// on its next recheck, 10s (nameTakenRecheck) after its last pass.
		// The default 20s left too little margin for a pass on a loaded CI
		// machine (it failed once there); an evaluation that never creates
		// its own still fails the test, a minute on.
		Eventually(func(g Gomega) {
			var d appsv1.Deployment
			g.Expect(k8s.Get(ctx, key(ns, server), &d)).To(Succeed())
			g.Expect(controlledBy(&d, e.UID)).To(BeTrue())
		}).WithTimeout(time.Minute).Should(Succeed())
		eventuallyEval(ns, "ev", func(g Gomega, e *repotv1.RepotEvaluation) {
			g.Expect(e.Status.Summary.State).To(Equal(repotv1.StatePending))
			g.Expect(condition(e, repotv1.ConditionReconciling).Status).To(Equal(metav1.ConditionTrue))
			g.Expect(condition(e, repotv1.ConditionStalled).Status).To(Equal(metav1.ConditionFalse))
			g.Expect(e.Status.StartTime).NotTo(BeNil())
		})
	})

	It("does not count the pods of an earlier evaluation of the same name", func() {
		ns := createNamespace("identity-pods")
		ev := revtesting.MakeEvaluation("ev", ns).Simulated("m", "strong", 1).Shards(1).Obj()
		Expect(k8s.Create(ctx, ev)).To(Succeed())
		Eventually(exists(&appsv1.Deployment{}, ns, build.ServerName("ev", "m"))).Should(BeTrue())
		// The status of the pass that created it (written after the
		// children) comes with the next watch event.
		eventuallyEval(ns, "ev", func(g Gomega, e *repotv1.RepotEvaluation) { g.Expect(e.Status.Models).To(HaveLen(1)) })
		// A server pod of an earlier "ev" (another UID), with the same
		// labels otherwise, that cannot pull its image.
		old := getEval(ns, "ev")
		old.UID = "0ld-0000-0000-0000-earlier"
		d := build.ServerDeployment(old, &old.Spec.Models[0], build.Options{}.WithDefaults(), 1)
		pod := &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: d.Name + "-0ld-x2k4", Namespace: ns, Labels: d.Spec.Template.Labels},
			Spec:       *d.Spec.Template.Spec.DeepCopy(),
		}
		Expect(k8s.Create(ctx, pod)).To(Succeed())
		pod.Status = corev1.PodStatus{Phase: corev1.PodPending, ContainerStatuses: []corev1.ContainerStatus{{
			Name: pod.Spec.Containers[0].Name, Image: pod.Spec.Containers[0].Image,
			State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "ImagePullBackOff", Message: "the earlier evaluation's image"}},
		}}}
		Expect(k8s.Status().Update(ctx, pod)).To(Succeed())
		poke(ns, "ev")
		Consistently(func(g Gomega) {
			e := getEval(ns, "ev")
			g.Expect(e.Status.Models).To(HaveLen(1))
			g.Expect(model(g, e, 0).Server.Reason).NotTo(Equal(repotv1.ReasonImagePullFailed), "the earlier evaluation's pod is diagnosed")
		}, "1s").Should(Succeed())
	})

	It("gives evaluation a-b with model c and evaluation a with model b-c children of their own", func() {
		ns := createNamespace("names")
		Expect(k8s.Create(ctx, revtesting.MakeEvaluation("a-b", ns).Simulated("c", "strong", 1).Shards(1).Obj())).To(Succeed())
		Expect(k8s.Create(ctx, revtesting.MakeEvaluation("a", ns).Simulated("b-c", "strong", 1).Shards(1).Obj())).To(Succeed())
		ab, a := getEval(ns, "a-b"), getEval(ns, "a")
		for _, tc := range []struct {
			e     *repotv1.RepotEvaluation
			model string
		}{{ab, "c"}, {a, "b-c"}} {
			Eventually(func(g Gomega) {
				var d appsv1.Deployment
				g.Expect(k8s.Get(ctx, key(ns, build.ServerName(tc.e.Name, tc.model)), &d)).To(Succeed())
				g.Expect(controlledBy(&d, tc.e.UID)).To(BeTrue(), "%s is not %s's", d.Name, tc.e.Name)
				var s corev1.Service
				g.Expect(k8s.Get(ctx, key(ns, build.ServerName(tc.e.Name, tc.model)), &s)).To(Succeed())
				g.Expect(controlledBy(&s, tc.e.UID)).To(BeTrue(), "%s is not %s's", s.Name, tc.e.Name)
			}).Should(Succeed())
			setServerReady(ns, tc.e.Name, tc.model, true)
		}
		for _, tc := range []struct {
			e     *repotv1.RepotEvaluation
			model string
		}{{ab, "c"}, {a, "b-c"}} {
			Eventually(func(g Gomega) {
				var j batchv1.Job
				g.Expect(k8s.Get(ctx, key(ns, build.RunnerJobName(tc.e.Name, tc.model)), &j)).To(Succeed())
				g.Expect(controlledBy(&j, tc.e.UID)).To(BeTrue(), "%s is not %s's", j.Name, tc.e.Name)
				var l corev1.ConfigMap
				g.Expect(k8s.Get(ctx, key(ns, build.LedgerName(tc.e.Name, tc.model, 0)), &l)).To(Succeed())
				g.Expect(controlledBy(&l, tc.e.UID)).To(BeTrue(), "%s is not %s's", l.Name, tc.e.Name)
			}).Should(Succeed())
			eventuallyEval(ns, tc.e.Name, func(g Gomega, e *repotv1.RepotEvaluation) {
				g.Expect(condition(e, repotv1.ConditionStalled).Status).To(Equal(metav1.ConditionFalse))
			})
		}
	})
})
