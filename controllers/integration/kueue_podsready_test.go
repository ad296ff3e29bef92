package integration_test

import (
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	kueue "sigs.k8s.io/kueue/apis/kueue/v1beta2"

	revtesting "repot.dev/repot-operator/api/v1alpha1/testing"
	"repot.dev/repot-operator/controllers/build"
	"repot.dev/repot-operator/controllers/kueueadapter"
	"repot.dev/repot-operator/controllers/kueueadapter/kueuetesting"
)

// podsReadyTimeout is the waitForPodsReady timeout of this container's
// Kueue manager: short, so that a Workload whose PodsReady is never True
// is evicted while the spec watches.
const podsReadyTimeout = 8 * time.Second

// The real Kueue manager configured as GPU pools run it, with
// waitForPodsReady: an admitted Workload whose PodsReady condition is not
// True within the timeout is evicted (PodsReadyTimeout). The operator keeps
// the condition as Kueue's own job integrations do. The test plays the
// Deployment and Job controllers (envtest has none).
var _ = Describe("Kueue with waitForPodsReady (the real Kueue manager)", Ordered, func() {
	var ns string

	BeforeAll(func() {
		startRealKueue("kueue-manager-podsready", podsReadyTimeout)

		// Kueue measures the PodsReady timeouts from the condition's
		// lastTransitionTime by its own (wall) clock; the operator writes it
		// by its injected one, which in production is the wall clock too.
		// Bring the test's fake clock up to now (forward only, as a long
		// Step), or the condition reads a week old and Kueue evicts at once.
		wallClock()
		ns = createNamespace("podsready")
		for _, o := range []client.Object{
			&kueue.ResourceFlavor{ObjectMeta: metav1.ObjectMeta{Name: "ready-h100"}, Spec: kueue.ResourceFlavorSpec{
				NodeLabels: map[string]string{"nvidia.com/gpu.product": "NVIDIA-H100-80GB-HBM3"}}},
			&kueue.ClusterQueue{ObjectMeta: metav1.ObjectMeta{Name: "ready-gpus"}, Spec: kueue.ClusterQueueSpec{
				NamespaceSelector: &metav1.LabelSelector{MatchLabels: map[string]string{corev1.LabelMetadataName: ns}},
				ResourceGroups: []kueue.ResourceGroup{{
					CoveredResources: []corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory, "nvidia.com/gpu"},
					Flavors: []kueue.FlavorQuotas{{Name: "ready-h100", Resources: []kueue.ResourceQuota{
						{Name: corev1.ResourceCPU, NominalQuota: resource.MustParse("64")},
						{Name: corev1.ResourceMemory, NominalQuota: resource.MustParse("256Gi")},
						{Name: "nvidia.com/gpu", NominalQuota: resource.MustParse("1")},
					}}},
				}}}},
			&kueue.LocalQueue{ObjectMeta: metav1.ObjectMeta{Name: "gpus", Namespace: ns}, Spec: kueue.LocalQueueSpec{ClusterQueue: "ready-gpus"}},
		} {
			if err := k8s.Create(ctx, o); err != nil && !apierrors.IsAlreadyExists(err) {
				Expect(err).NotTo(HaveOccurred())
			}
		}
		Eventually(func(g Gomega) {
			var cq kueue.ClusterQueue
			g.Expect(k8s.Get(ctx, key("", "ready-gpus"), &cq)).To(Succeed())
			g.Expect(apimeta.IsStatusConditionTrue(cq.Status.Conditions, kueue.ClusterQueueActive)).To(BeTrue(), "%v", cq.Status.Conditions)
		}).WithTimeout(time.Minute).Should(Succeed())
	})

	getWorkload := func(g Gomega) *kueue.Workload {
		var wl kueue.Workload
		g.Expect(k8s.Get(ctx, key(ns, kueueadapter.WorkloadName("ev", "m")), &wl)).To(Succeed())
		return &wl
	}
	podsReady := func(g Gomega) *metav1.Condition {
		c := apimeta.FindStatusCondition(getWorkload(g).Status.Conditions, kueue.WorkloadPodsReady)
		g.Expect(c).NotTo(BeNil(), "no PodsReady condition")
		return c
	}
	// runnersReady plays the Job controller: n runner pods active and ready.
	runnersReady := func(n int32) {
		Eventually(func(g Gomega) {
			var j batchv1.Job
			g.Expect(k8s.Get(ctx, key(ns, build.RunnerJobName("ev", "m")), &j)).To(Succeed(), "events: %s\nworkload: %+v", eventsIn(ns), getWorkload(g).Status.Conditions)
			if j.Status.StartTime == nil {
				start := metav1.NewTime(time.Now().Add(-time.Minute))
				j.Status.StartTime = &start
			}
			j.Status.Active, j.Status.Ready = n, ptr.To(n)
			g.Expect(k8s.Status().Update(ctx, &j)).To(Succeed())
		}).Should(Succeed())
	}
	notEvicted := func(g Gomega) {
		wl := getWorkload(g)
		g.Expect(apimeta.IsStatusConditionTrue(wl.Status.Conditions, kueue.WorkloadEvicted)).To(BeFalse(), "evicted: %s", kueuetesting.Describe(wl))
		g.Expect(kueuetesting.HoldsQuota(wl)).To(BeTrue(), "%s", kueuetesting.Describe(wl))
		g.Expect(exists(&appsv1.Deployment{}, ns, build.ServerName("ev", "m"))()).To(BeTrue(), "the server was removed")
	}

	It("keeps PodsReady on the model's Workload, so that a running evaluation is not evicted at the timeout, and completes", func() {
		e := revtesting.MakeEvaluation("ev", ns).Shards(1).Simulated("m", "strong", 1).SimulatedGPUs(1).Obj()
		e.Labels = map[string]string{kueueadapter.QueueNameLabel: "gpus"}
		Expect(k8s.Create(ctx, e)).To(Succeed())

		By("admitted: PodsReady False (WaitForStart) while the server loads")
		Eventually(exists(&appsv1.Deployment{}, ns, build.ServerName("ev", "m"))).WithTimeout(time.Minute).Should(BeTrue())
		Eventually(func(g Gomega) {
			c := podsReady(g)
			g.Expect(c.Status).To(Equal(metav1.ConditionFalse))
			g.Expect(c.Reason).To(Equal(kueue.WorkloadWaitForStart))
		}).Should(Succeed())

		By("server Ready, runner pod ready: PodsReady True (Started), and no eviction past the timeout")
		setServerReady(ns, "ev", "m", true)
		Eventually(exists(&batchv1.Job{}, ns, build.RunnerJobName("ev", "m"))).Should(BeTrue())
		runnersReady(1)
		Eventually(func(g Gomega) {
			c := podsReady(g)
			g.Expect(c.Status).To(Equal(metav1.ConditionTrue))
			g.Expect(c.Reason).To(Equal(kueue.WorkloadStarted))
		}).Should(Succeed())
		Consistently(notEvicted).WithTimeout(podsReadyTimeout + 4*time.Second).WithPolling(time.Second).Should(Succeed())

		By("a runner pod lost: WaitForRecovery; replaced: Recovered")
		wallClock() // the operator stamps WaitForRecovery, which Kueue times
		runnersReady(0)
		Eventually(func(g Gomega) { g.Expect(podsReady(g).Reason).To(Equal(kueue.WorkloadWaitForRecovery)) }).Should(Succeed())
		runnersReady(1)
		Eventually(func(g Gomega) {
			c := podsReady(g)
			g.Expect(c.Status).To(Equal(metav1.ConditionTrue))
			g.Expect(c.Reason).To(Equal(kueue.WorkloadRecovered))
		}).Should(Succeed())
		notEvicted(Default)

		By("the runs done: the Workload is finished")
		finishJob(ns, build.RunnerJobName("ev", "m"))
		Eventually(func(g Gomega) bool {
			return apimeta.IsStatusConditionTrue(getWorkload(g).Status.Conditions, kueue.WorkloadFinished)
		}).WithTimeout(time.Minute).Should(BeTrue())
		var wl kueue.Workload
		Expect(k8s.Get(ctx, key(ns, kueueadapter.WorkloadName("ev", "m")), &wl)).To(Succeed())
		Expect(apimeta.FindStatusCondition(wl.Status.Conditions, kueue.WorkloadEvicted)).To(Or(BeNil(), HaveField("Status", metav1.ConditionFalse)),
			"the Workload was evicted on the way: %s", kueuetesting.Describe(&wl))
	})
})

// eventsIn lists the reasons and messages of a namespace's events.
func eventsIn(ns string) string {
	var evs corev1.EventList
	if err := k8s.List(ctx, &evs, client.InNamespace(ns)); err != nil {
		return err.Error()
	}
	out := ""
	for _, ev := range evs.Items {
		out += ev.InvolvedObject.Kind + "/" + ev.InvolvedObject.Name + " " + ev.Reason + ": " + ev.Message + "\n"
	}
	return out
}

// wallClock steps the test's fake clock up to the wall clock (forward
// only): a condition the operator stamps by it and Kueue times by its own
// must not read as old.
func wallClock() {
	if d := time.Since(clk.Now()); d > 0 {
		clk.Step(d)
	}
}
