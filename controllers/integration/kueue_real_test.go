package integration_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	kueue "sigs.k8s.io/kueue/apis/kueue/v1beta2"

	revtesting "repot.dev/repot-operator/api/v1alpha1/testing"
	"repot.dev/repot-operator/contract"
	"repot.dev/repot-operator/controllers/build"
	"repot.dev/repot-operator/controllers/kueueadapter"
	"repot.dev/repot-operator/controllers/kueueadapter/kueuetesting"
	"repot.dev/repot-operator/hack/localcluster/cluster"
)

// The real Kueue manager (bin/kueue, hack/build-cluster-bins.sh kueue) against the test
// API server: Kueue's scheduler reserves the quota and evicts; the test
// plays only the Deployment and Job controllers (envtest has none).
var _ = Describe("Kueue admission by the real Kueue manager", Ordered, func() {
	models := []string{"m1", "m2", "m3", "m4"}
	var ns string

	BeforeAll(func() {
		startRealKueue("kueue-manager", 0)

		ns = createNamespace("realkueue")
		for _, o := range []client.Object{
			&kueue.ResourceFlavor{ObjectMeta: metav1.ObjectMeta{Name: "real-h100"}, Spec: kueue.ResourceFlavorSpec{
				NodeLabels:  map[string]string{"nvidia.com/gpu.product": "NVIDIA-H100-80GB-HBM3"},
				Tolerations: []corev1.Toleration{{Key: "nvidia.com/gpu", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule}}}},
			&kueue.ClusterQueue{ObjectMeta: metav1.ObjectMeta{Name: "real-gpus"}, Spec: kueue.ClusterQueueSpec{
				NamespaceSelector: &metav1.LabelSelector{},
				ResourceGroups: []kueue.ResourceGroup{{
					CoveredResources: []corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory, "nvidia.com/gpu"},
					Flavors: []kueue.FlavorQuotas{{Name: "real-h100", Resources: []kueue.ResourceQuota{
						{Name: corev1.ResourceCPU, NominalQuota: resource.MustParse("64")},
						{Name: corev1.ResourceMemory, NominalQuota: resource.MustParse("256Gi")},
						{Name: "nvidia.com/gpu", NominalQuota: resource.MustParse("2")},
					}}},
				}}}},
			&kueue.LocalQueue{ObjectMeta: metav1.ObjectMeta{Name: "gpus", Namespace: ns}, Spec: kueue.LocalQueueSpec{ClusterQueue: "real-gpus"}},
		} {
			Expect(k8s.Create(ctx, o)).To(Succeed())
		}
		Eventually(func(g Gomega) {
			var cq kueue.ClusterQueue
			g.Expect(k8s.Get(ctx, key("", "real-gpus"), &cq)).To(Succeed())
			g.Expect(apimeta.IsStatusConditionTrue(cq.Status.Conditions, kueue.ClusterQueueActive)).To(BeTrue(), "%v", cq.Status.Conditions)
		}).WithTimeout(time.Minute).Should(Succeed())
	})

	workloads := func(g Gomega) map[string]*kueue.Workload {
		var list kueue.WorkloadList
		g.Expect(k8s.List(ctx, &list, client.InNamespace(ns))).To(Succeed())
		out := map[string]*kueue.Workload{}
		for i := range list.Items {
			out[list.Items[i].Labels[build.LabelModel]] = &list.Items[i]
		}
		return out
	}
	// check asserts the invariants: at most two models hold quota, and
	// only models that hold quota (or are being evicted) have servers.
	check := func(g Gomega) (held []string) {
		wls := workloads(g)
		var ds appsv1.DeploymentList
		g.Expect(k8s.List(ctx, &ds, client.InNamespace(ns))).To(Succeed())
		for _, d := range ds.Items {
			wl := wls[d.Labels[build.LabelModel]]
			g.Expect(kueuetesting.HoldsQuota(wl) || apimeta.IsStatusConditionTrue(wl.Status.Conditions, kueue.WorkloadEvicted)).To(BeTrue(),
				"server %s exists but its Workload holds no quota: %s", d.Name, kueuetesting.Describe(wl))
		}
		held, err := kueuetesting.CheckQuota(wls, models, 2)
		g.Expect(err).NotTo(HaveOccurred())
		return held
	}
	setActive := func(model string, active bool) {
		Eventually(func(g Gomega) {
			var wl kueue.Workload
			g.Expect(k8s.Get(ctx, key(ns, kueueadapter.WorkloadName("ev", model)), &wl)).To(Succeed())
			wl.Spec.Active = ptr.To(active)
			g.Expect(k8s.Update(ctx, &wl)).To(Succeed())
		}).Should(Succeed())
	}

	It("admits a 4-model sweep two models at a time; an evicted model keeps its ledger and resumes", func() {
		w := revtesting.MakeEvaluation("ev", ns).Shards(1)
		for _, m := range models {
			w = w.Simulated(m, "strong", 1).SimulatedGPUs(1)
		}
		e := w.Obj()
		e.Labels = map[string]string{kueueadapter.QueueNameLabel: "gpus"}
		Expect(k8s.Create(ctx, e)).To(Succeed())

		By("Kueue admits two of the four Workloads; only those get servers")
		var held []string
		Eventually(func(g Gomega) {
			held = check(g)
			g.Expect(held).To(HaveLen(2))
			for _, m := range held {
				g.Expect(exists(&appsv1.Deployment{}, ns, build.ServerName("ev", m))()).To(BeTrue())
			}
		}).WithTimeout(time.Minute).Should(Succeed())
		Consistently(func(g Gomega) { g.Expect(check(g)).To(HaveLen(2)) }).WithTimeout(3 * time.Second).Should(Succeed())

		victim := held[0]
		setServerReady(ns, "ev", victim, true)
		Eventually(exists(&batchv1.Job{}, ns, build.RunnerJobName("ev", victim))).Should(BeTrue())
		ledger := build.LedgerName("ev", victim, 0)
		writeLedger(ns, ledger, rec(victim, "p1", "pot", true, contract.RouteInitialSuccess, 1), rec(victim, "p2", "pot", false, contract.RouteInitialSuccess, 1))

		By(fmt.Sprintf("deactivating %s mid-run: Kueue evicts it, its children go, its quota goes to a waiting model", victim))
		setActive(victim, false)
		Eventually(func(g Gomega) {
			g.Expect(exists(&appsv1.Deployment{}, ns, build.ServerName("ev", victim))()).To(BeFalse())
			g.Expect(exists(&batchv1.Job{}, ns, build.RunnerJobName("ev", victim))()).To(BeFalse())
			now := check(g)
			g.Expect(now).To(HaveLen(2))
			g.Expect(now).NotTo(ContainElement(victim))
		}).WithTimeout(time.Minute).Should(Succeed())
		var cm corev1.ConfigMap
		Expect(k8s.Get(ctx, key(ns, ledger), &cm)).To(Succeed())
		Expect(strings.Count(cm.Data[contract.LedgerRecordsKey], "\n")).To(Equal(2), "the evicted model's ledger lost records")
		setActive(victim, true)

		By("finishing the admitted models one after another until all four are done, never more than two at once")
		done := map[string]bool{}
		Eventually(func(g Gomega) {
			for _, m := range check(g) {
				if exists(&appsv1.Deployment{}, ns, build.ServerName("ev", m))() {
					setServerReady(ns, "ev", m, true)
				}
				var j batchv1.Job
				if k8s.Get(ctx, key(ns, build.RunnerJobName("ev", m)), &j) == nil && j.Status.CompletionTime == nil {
					if m == victim {
						// Re-admitted: its runners start from the ledger kept
						// through the eviction.
						var c corev1.ConfigMap
						g.Expect(k8s.Get(ctx, key(ns, ledger), &c)).To(Succeed())
						g.Expect(strings.Count(c.Data[contract.LedgerRecordsKey], "\n")).To(Equal(2))
					}
					finishJob(ns, build.RunnerJobName("ev", m))
					done[m] = true
				}
			}
			wls := workloads(g)
			for _, m := range models {
				g.Expect(apimeta.IsStatusConditionTrue(wls[m].Status.Conditions, kueue.WorkloadFinished)).To(BeTrue(), "Workload of %s not finished yet", m)
			}
		}).WithTimeout(3 * time.Minute).WithPolling(500 * time.Millisecond).Should(Succeed())
		Expect(done).To(HaveLen(4))
	})

	It("gives a model released for a stall's quota to a waiting model", func() {
		rel := []string{"r1", "r2", "r3"}
		w := revtesting.MakeEvaluation("rel", ns).Shards(1).StalledAfter(60)
		for _, m := range rel {
			w = w.Simulated(m, "strong", 1).SimulatedGPUs(1)
		}
		e := w.Obj()
		e.Labels = map[string]string{kueueadapter.QueueNameLabel: "gpus"}
		Expect(k8s.Create(ctx, e)).To(Succeed())
		// relWorkloads are the evaluation's Workloads by model (the first
		// evaluation's, finished, are left out).
		relWorkloads := func(g Gomega) map[string]*kueue.Workload {
			out := map[string]*kueue.Workload{}
			for m, wl := range workloads(g) {
				if wl.Labels[build.LabelEvaluation] == "rel" {
					out[m] = wl
				}
			}
			return out
		}

		By("Kueue admits two of the three models; the third waits")
		var held []string
		Eventually(func(g Gomega) {
			var err error
			held, err = kueuetesting.CheckQuota(relWorkloads(g), rel, 2)
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(held).To(HaveLen(2))
			for _, m := range held {
				g.Expect(exists(&appsv1.Deployment{}, ns, build.ServerName("rel", m))()).To(BeTrue())
			}
		}).WithTimeout(time.Minute).Should(Succeed())
		stalled, other := held[0], held[1]
		var waiting string
		for _, m := range rel {
			if m != stalled && m != other {
				waiting = m
			}
		}
		setServerReady(ns, "rel", other, true)

		By(fmt.Sprintf("%s's server image cannot be pulled for spec.stalledAfterSeconds: it is released", stalled))
		createServerPod(ns, "rel", stalled, corev1.PodStatus{Phase: corev1.PodPending, ContainerStatuses: []corev1.ContainerStatus{{
			Name: "server", Image: testImage,
			State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "ImagePullBackOff", Message: "Back-off pulling image"}},
		}}})
		server := build.ServerName("rel", stalled)
		Eventually(func(g Gomega) {
			var d appsv1.Deployment
			g.Expect(k8s.Get(ctx, key(ns, server), &d)).To(Succeed())
			g.Expect(d.Annotations).To(HaveKey(build.AnnotationStalledSince))
		}).Should(Succeed())
		clk.Step(61 * time.Second)
		poke(ns, "rel")
		Eventually(func(g Gomega) {
			var d appsv1.Deployment
			g.Expect(k8s.Get(ctx, key(ns, server), &d)).To(Succeed())
			g.Expect(d.Annotations).To(HaveKey(build.AnnotationReleased))
			g.Expect(ptr.Deref(d.Spec.Replicas, 1)).To(BeZero())
		}).Should(Succeed())

		By("its server pod gone, its Workload is deleted and Kueue admits the waiting model")
		var pods corev1.PodList
		Expect(k8s.List(ctx, &pods, client.InNamespace(ns), client.MatchingLabels(build.ServerSelector("rel", stalled)))).To(Succeed())
		for i := range pods.Items {
			Expect(k8s.Delete(ctx, &pods.Items[i])).To(Succeed())
		}
		Eventually(func(g Gomega) {
			wls := relWorkloads(g)
			g.Expect(wls).NotTo(HaveKey(stalled), "the released model's Workload is deleted")
			g.Expect(kueuetesting.HoldsQuota(wls[waiting])).To(BeTrue(), "%s: %s", waiting, kueuetesting.Describe(wls[waiting]))
			g.Expect(exists(&appsv1.Deployment{}, ns, build.ServerName("rel", waiting))()).To(BeTrue())
		}).WithTimeout(time.Minute).Should(Succeed())
		Consistently(func(g Gomega) {
			g.Expect(relWorkloads(g)).NotTo(HaveKey(stalled), "a released model is not queued again")
			var d appsv1.Deployment
			g.Expect(k8s.Get(ctx, key(ns, server), &d)).To(Succeed())
			g.Expect(ptr.Deref(d.Spec.Replicas, 1)).To(BeZero())
		}).WithTimeout(2 * time.Second).Should(Succeed())
	})
})

// startRealKueue runs the real Kueue manager (bin/kueue) against the test
// API server for the rest of the container, as the user name (a member of
// system:masters), with waitForPodsReady at that timeout (0: off). It
// skips the container when Kueue's CRDs or bin/kueue are missing. The
// manager's config and log stay in a temporary directory after the test.
func startRealKueue(name string, waitForPodsReady time.Duration) {
	GinkgoHelper()
	if kueueMissing != "" {
		Skip("Kueue's CRDs are not installed in the test API server: " + kueueMissing)
	}
	root, err := repoRoot()
	Expect(err).NotTo(HaveOccurred())
	bin := filepath.Join(root, "bin", "kueue")
	if _, err := os.Stat(bin); err != nil {
		Skip("bin/kueue is missing (build it with hack/build-cluster-bins.sh kueue or make kueue-bin): " + err.Error())
	}
	user, err := testEnv.AddUser(envtest.User{Name: name, Groups: []string{"system:masters"}})
	Expect(err).NotTo(HaveOccurred())
	kc, err := user.KubeConfig()
	Expect(err).NotTo(HaveOccurred())
	dir, err := os.MkdirTemp("", "repot-"+name+"-")
	Expect(err).NotTo(HaveOccurred())
	GinkgoWriter.Printf("Kueue manager's config and log: %s\n", dir)
	Expect(os.WriteFile(filepath.Join(dir, "kubeconfig"), kc, 0o600)).To(Succeed())
	k, err := cluster.StartKueue(ctx, cluster.KueueOptions{Bin: bin, Log: GinkgoWriter, WaitForPodsReady: waitForPodsReady}, cluster.KueueTarget{
		Admin: cfg, Kubeconfig: filepath.Join(dir, "kubeconfig"), Dir: dir, LogPath: filepath.Join(dir, "kueue.log")})
	Expect(err).NotTo(HaveOccurred())
	DeferCleanup(k.Stop)
}
