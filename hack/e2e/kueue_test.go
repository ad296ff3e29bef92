//go:build e2e

package e2e

import (
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	kueue "sigs.k8s.io/kueue/apis/kueue/v1beta2"
	"sigs.k8s.io/yaml"

	repotv1 "repot.dev/repot-operator/api/v1alpha1"
	"repot.dev/repot-operator/artifacts"
	"repot.dev/repot-operator/contract"
	"repot.dev/repot-operator/controllers/build"
	"repot.dev/repot-operator/controllers/kueueadapter"
	"repot.dev/repot-operator/controllers/kueueadapter/kueuetesting"
	"repot.dev/repot-operator/hack/localcluster/cluster"
)

// kueueSweepYAML is four simulated models, each server asking for one GPU, in
// the LocalQueue "gpus" whose ClusterQueue has a quota of two GPUs.
const kueueSweepYAML = `apiVersion: repot.dev/v1alpha1
kind: RepotEvaluation
metadata:
  name: sweep
  labels:
    kueue.x-k8s.io/queue-name: gpus
spec:
  suite: open-source-120
  methods: [pot, repot]
  models:
  - {name: sim-a, simulated: {profile: strong, seed: 1, gpus: 1}}
  - {name: sim-b, simulated: {profile: weak, seed: 2, gpus: 1}}
  - {name: sim-c, simulated: {profile: strong, seed: 3, gpus: 1}}
  - {name: sim-d, simulated: {profile: weak, seed: 4, gpus: 1}}
  runner:
    shardsPerModel: 2
    inFlightPerShard: 16
` + smallRunnerYAML

// kueueObjects are what a platform team sets up: a flavor for the GPU
// nodes (their product label and GPU taint), a WorkloadPriorityClass
// "urgent" for work that may preempt, a ClusterQueue with 2 GPUs whose
// workloads of lower priority are preempted for it, and a LocalQueue in the
// evaluation's namespace.
func kueueObjects() []client.Object {
	return []client.Object{
		&kueue.ResourceFlavor{
			ObjectMeta: metav1.ObjectMeta{Name: "h100"},
			Spec: kueue.ResourceFlavorSpec{
				NodeLabels:  map[string]string{"nvidia.com/gpu.product": "NVIDIA-H100-80GB-HBM3"},
				Tolerations: []corev1.Toleration{{Key: "nvidia.com/gpu", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule}},
			},
		},
		&kueue.WorkloadPriorityClass{ObjectMeta: metav1.ObjectMeta{Name: "urgent"}, Value: 1000, Description: "preempts the queue's other work"},
		&kueue.ClusterQueue{
			ObjectMeta: metav1.ObjectMeta{Name: "gpus"},
			Spec: kueue.ClusterQueueSpec{
				NamespaceSelector: &metav1.LabelSelector{},
				Preemption:        &kueue.ClusterQueuePreemption{WithinClusterQueue: kueue.PreemptionPolicyLowerPriority},
				ResourceGroups: []kueue.ResourceGroup{{
					CoveredResources: []corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory, "nvidia.com/gpu"},
					Flavors: []kueue.FlavorQuotas{{Name: "h100", Resources: []kueue.ResourceQuota{
						{Name: corev1.ResourceCPU, NominalQuota: resource.MustParse("64")},
						{Name: corev1.ResourceMemory, NominalQuota: resource.MustParse("256Gi")},
						{Name: "nvidia.com/gpu", NominalQuota: resource.MustParse("2")},
					}}},
				}},
			},
		},
		&kueue.LocalQueue{
			ObjectMeta: metav1.ObjectMeta{Name: "gpus", Namespace: ns},
			Spec:       kueue.LocalQueueSpec{ClusterQueue: "gpus"},
		},
	}
}

var _ = Describe("Kueue admission on the local cluster", Ordered, Label("kueue"), func() {
	var tc *testCluster
	models := []string{"sim-a", "sim-b", "sim-c", "sim-d"}

	workloads := func(g Gomega) map[string]*kueue.Workload {
		ctx, cancel := ctxTimeout(30 * time.Second)
		defer cancel()
		var list kueue.WorkloadList
		g.Expect(tc.c.List(ctx, &list, client.InNamespace(ns))).To(Succeed())
		out := map[string]*kueue.Workload{}
		for i := range list.Items {
			out[list.Items[i].Labels[build.LabelModel]] = &list.Items[i]
		}
		return out
	}
	// Kueue's quota invariant, as the envtest spec checks it.
	holdsQuota, reservesQuota, describe := kueuetesting.HoldsQuota, kueuetesting.ReservesQuota, kueuetesting.Describe
	finished := func(wl *kueue.Workload) bool {
		return wl != nil && meta.IsStatusConditionTrue(wl.Status.Conditions, kueue.WorkloadFinished)
	}
	// children counts, per model, the server Deployments, runner Jobs and
	// server pods not terminated (terminating ones included), and of those
	// the ones that hold a GPU: bound to a node. The cluster has two nodes
	// with one GPU each, so a third model's server pod waits, unbound, until
	// a GPU is free.
	type childCount struct{ deployments, jobs, serverPods, boundServerPods int }
	children := func(g Gomega) map[string]*childCount {
		ctx, cancel := ctxTimeout(30 * time.Second)
		defer cancel()
		out := map[string]*childCount{}
		at := func(m string) *childCount {
			if out[m] == nil {
				out[m] = &childCount{}
			}
			return out[m]
		}
		sel := client.MatchingLabels{build.LabelEvaluation: "sweep"}
		var ds appsv1.DeploymentList
		g.Expect(tc.c.List(ctx, &ds, client.InNamespace(ns), sel)).To(Succeed())
		for _, d := range ds.Items {
			at(d.Labels[build.LabelModel]).deployments++
		}
		var js batchv1.JobList
		g.Expect(tc.c.List(ctx, &js, client.InNamespace(ns), sel)).To(Succeed())
		for _, j := range js.Items {
			at(j.Labels[build.LabelModel]).jobs++
		}
		var ps corev1.PodList
		g.Expect(tc.c.List(ctx, &ps, client.InNamespace(ns), client.MatchingLabels{
			build.LabelEvaluation: "sweep", build.LabelComponent: build.ComponentServer})).To(Succeed())
		for _, p := range ps.Items {
			if p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed {
				continue
			}
			k := at(p.Labels[build.LabelModel])
			k.serverPods++
			if p.Spec.NodeName != "" {
				k.boundServerPods++
			}
		}
		return out
	}

	// The watcher checks, every second while the sweep runs, that Kueue
	// never holds quota for more than two models, that no more than two
	// models have server pods on a node, and that no model has children while its
	// Workload is not admitted (pending, or requeued after eviction).
	var (
		mu         sync.Mutex
		violations []string
		maxHeld    int
		stopWatch  = make(chan struct{})
		watchDone  = make(chan struct{})
	)
	watch := func() {
		defer GinkgoRecover()
		defer close(watchDone)
		tick := time.NewTicker(time.Second)
		defer tick.Stop()
		for {
			select {
			case <-stopWatch:
				return
			case <-tick.C:
			}
			// Children first, then Workloads: a model admitted between the
			// two lists then shows quota with its new children, where the
			// other order showed the children beside the Workload as it was
			// before its admission (a false violation, seen once). An
			// eviction between them shows the Evicted condition, let pass.
			var wls map[string]*kueue.Workload
			var kids map[string]*childCount
			ok := InterceptGomegaFailure(func() { kids = children(Default); wls = workloads(Default) }) == nil
			if !ok {
				continue // a slow API server: look again
			}
			held := 0
			var withServers []string
			var holders []string
			for _, m := range models {
				if holdsQuota(wls[m]) {
					held++
					holders = append(holders, m+" ("+describe(wls[m])+")")
				}
				if k := kids[m]; k != nil && k.boundServerPods > 0 {
					withServers = append(withServers, fmt.Sprintf("%s %+v", m, *k))
				}
				// waitForPodsReady is on: an evaluation whose pods start
				// must keep its Workload's PodsReady, so that Kueue never
				// evicts it for the timeout.
				if wl := wls[m]; wl != nil {
					if c := meta.FindStatusCondition(wl.Status.Conditions, kueue.WorkloadEvicted); c != nil && c.Status == metav1.ConditionTrue && c.Reason == kueue.WorkloadEvictedByPodsReadyTimeout {
						mu.Lock()
						violations = append(violations, fmt.Sprintf("%s: model %s was evicted for waitForPodsReady's timeout: %s", time.Now().Format(time.TimeOnly), m, c.Message))
						mu.Unlock()
					}
				}
				k := kids[m]
				if k != nil && k.deployments+k.jobs > 0 && wls[m] != nil && !reservesQuota(wls[m]) && !finished(wls[m]) &&
					!meta.IsStatusConditionTrue(wls[m].Status.Conditions, kueue.WorkloadEvicted) {
					mu.Lock()
					violations = append(violations, fmt.Sprintf("%s: model %s has children %+v while its Workload holds no quota: %s", time.Now().Format(time.TimeOnly), m, *k, describe(wls[m])))
					mu.Unlock()
				}
			}
			mu.Lock()
			maxHeld = max(maxHeld, held)
			if held > 2 {
				violations = append(violations, fmt.Sprintf("%s: %d Workloads hold quota: %s", time.Now().Format(time.TimeOnly), held, strings.Join(holders, "; ")))
			}
			if len(withServers) > 2 {
				violations = append(violations, fmt.Sprintf("%s: %d models have server pods on a node: %s", time.Now().Format(time.TimeOnly), len(withServers), strings.Join(withServers, "; ")))
			}
			mu.Unlock()
		}
	}

	BeforeAll(func() {
		// A node with two SIMULATED GPUs: the ClusterQueue's 2 GPUs are
		// also all the cluster has.
		// Kueue as GPU pools configure it: waitForPodsReady on, with a
		// short timeout (every model here starts in well under it), and a
		// ClusterQueue that lets a workload of higher priority preempt.
		tc = startRealCluster("kueue", "--kueue", "--kueue-wait-for-pods-ready", "3m", "--gpus", "2")
		DeferCleanup(func() { tc.stop() })
		ctx, cancel := ctxTimeout(time.Minute)
		defer cancel()
		for _, o := range kueueObjects() {
			Expect(tc.c.Create(ctx, o)).To(Succeed(), "creating %T %s", o, o.GetName())
		}
		Eventually(func(g Gomega) {
			var cq kueue.ClusterQueue
			g.Expect(tc.c.Get(ctx, client.ObjectKey{Name: "gpus"}, &cq)).To(Succeed())
			g.Expect(meta.IsStatusConditionTrue(cq.Status.Conditions, kueue.ClusterQueueActive)).To(BeTrue(), "ClusterQueue gpus is not active: %v", cq.Status.Conditions)
		}).WithTimeout(time.Minute).WithPolling(time.Second).Should(Succeed())
		e := &repotv1.RepotEvaluation{}
		Expect(yaml.Unmarshal([]byte(kueueSweepYAML), e)).To(Succeed())
		e.Namespace = ns
		Expect(tc.c.Create(ctx, e)).To(Succeed())
		go watch()
	})

	It("creates one Workload per model, admits two, and creates nothing of the others", func() {
		Eventually(func(g Gomega) {
			tc.operatorAlive()
			wls := workloads(g)
			g.Expect(wls).To(HaveLen(4))
			held := 0
			for _, m := range models {
				wl := wls[m]
				g.Expect(wl).NotTo(BeNil(), "no Workload for model %s", m)
				g.Expect(wl.Spec.PodSets).To(HaveLen(2))
				if holdsQuota(wl) {
					held++
				}
			}
			g.Expect(held).To(Equal(2), "Workloads holding quota")
		}).WithTimeout(3 * time.Minute).WithPolling(time.Second).Should(Succeed())
		// The admitted flavor's placement is on the children.
		Eventually(func(g Gomega) {
			tc.operatorAlive()
			ctx, cancel := ctxTimeout(30 * time.Second)
			defer cancel()
			var ds appsv1.DeploymentList
			g.Expect(tc.c.List(ctx, &ds, client.InNamespace(ns), client.MatchingLabels{build.LabelEvaluation: "sweep"})).To(Succeed())
			g.Expect(ds.Items).NotTo(BeEmpty())
			for _, d := range ds.Items {
				spec := d.Spec.Template.Spec
				g.Expect(spec.NodeSelector).To(HaveKeyWithValue("nvidia.com/gpu.product", "NVIDIA-H100-80GB-HBM3"))
				g.Expect(spec.Tolerations).To(ContainElement(HaveField("Key", "nvidia.com/gpu")))
			}
		}).WithTimeout(2 * time.Minute).WithPolling(time.Second).Should(Succeed())
	})

	It("evicts a model mid-run, removes its children, keeps its ledger, and re-admission repeats no finished run", func() {
		// A model whose shards have recorded runs and still run.
		var victim string
		ledgered := map[string]int{} // ledger ConfigMap -> records at the eviction
		Eventually(func(g Gomega) {
			tc.operatorAlive()
			wls := workloads(g)
			ctx, cancel := ctxTimeout(30 * time.Second)
			defer cancel()
			for _, m := range models {
				if !holdsQuota(wls[m]) {
					continue
				}
				counts := map[string]int{}
				total := 0
				for shard := range 2 {
					var cm corev1.ConfigMap
					name := build.LedgerName("sweep", m, shard)
					if err := tc.c.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, &cm); err != nil {
						continue
					}
					counts[name] = finishedRuns(cm.Data[contract.LedgerRecordsKey])
					total += counts[name]
				}
				if total >= 20 && total < 200 {
					victim, ledgered = m, counts
					return
				}
			}
			g.Expect(victim).NotTo(BeEmpty(), "no admitted model with 20 to 200 recorded runs yet")
		}).WithTimeout(10 * time.Minute).WithPolling(time.Second).Should(Succeed())
		By(fmt.Sprintf("deactivating the Workload of %s (ledgers: %v)", victim, ledgered))
		setActive := func(active bool) {
			Eventually(func(g Gomega) {
				ctx, cancel := ctxTimeout(30 * time.Second)
				defer cancel()
				var wl kueue.Workload
				g.Expect(tc.c.Get(ctx, client.ObjectKey{Namespace: ns, Name: kueueadapter.WorkloadName("sweep", victim)}, &wl)).To(Succeed())
				wl.Spec.Active = ptr.To(active)
				g.Expect(tc.c.Update(ctx, &wl)).To(Succeed())
			}).WithTimeout(time.Minute).Should(Succeed())
		}
		setActive(false)
		// Its children go; its ledgers stay; once they are gone the operator
		// hands the reservation back, as Kueue's job integrations do.
		Eventually(func(g Gomega) {
			tc.operatorAlive()
			k := children(g)[victim]
			g.Expect(k == nil || k.deployments+k.jobs+k.serverPods == 0).To(BeTrue(), "children of %s left: %+v", victim, k)
			wl := workloads(g)[victim]
			g.Expect(wl).NotTo(BeNil())
			g.Expect(wl.Status.Admission).To(BeNil(), "the evicted Workload keeps its admission: %s", describe(wl))
			g.Expect(meta.IsStatusConditionTrue(wl.Status.Conditions, kueue.WorkloadQuotaReserved)).To(BeFalse(), "the evicted Workload keeps its reservation: %s", describe(wl))
			g.Expect(meta.FindStatusCondition(wl.Status.Conditions, kueue.WorkloadRequeued)).To(HaveField("Reason", kueue.WorkloadDeactivated), describe(wl))
		}).WithTimeout(3 * time.Minute).WithPolling(time.Second).Should(Succeed())
		ctx, cancel := ctxTimeout(30 * time.Second)
		for name, n := range ledgered {
			var cm corev1.ConfigMap
			Expect(tc.c.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, &cm)).To(Succeed(), "ledger %s was removed", name)
			got := finishedRuns(cm.Data[contract.LedgerRecordsKey])
			Expect(got).To(BeNumerically(">=", n), "ledger %s lost records", name)
			ledgered[name] = got // what the shard had finished when its pods stopped
		}
		cancel()
		By("reactivating it")
		evictedAt := time.Now()
		setActive(true)
		e := &repotv1.RepotEvaluation{}
		resumed := map[string]resumedShard{} // shard index -> what its newest pod found at its start
		Eventually(func(g Gomega) {
			tc.operatorAlive()
			readResumed(tc, victim, evictedAt, resumed)
			ctx, cancel := ctxTimeout(30 * time.Second)
			defer cancel()
			g.Expect(tc.c.Get(ctx, client.ObjectKey{Namespace: ns, Name: "sweep"}, e)).To(Succeed())
			g.Expect(meta.IsStatusConditionTrue(e.Status.Conditions, repotv1.ConditionComplete)).To(BeTrue(), "progress %v", e.Status.Progress)
			g.Expect(e.Status.Progress.RunsDone).To(Equal(e.Status.Progress.RunsTotal))
		}).WithTimeout(40 * time.Minute).WithPolling(5 * time.Second).Should(Succeed())
		// The victim's GPU time: its first server until the eviction, then
		// the server it got on re-admission; the time in between held none.
		for _, m := range e.Status.Models {
			if m.Name != victim {
				continue
			}
			Expect(m.EarlierServers).NotTo(BeNil(), "%s was evicted, but its status shows one server", victim)
			Expect(m.EarlierServers.Count).To(Equal(int32(1)))
			Expect(m.EarlierServers.GPUSecondsHeld).To(BeNumerically(">", 0))
			Expect(m.ServerCreatedTime.Time).To(BeTemporally(">=", evictedAt.Add(-time.Second)), "the re-admitted server's time")
			total := m.ServerDeletedTime.Sub(m.ServerCreatedTime.Time)/time.Second + time.Duration(m.EarlierServers.GPUSecondsHeld)
			Expect(m.GPUSecondsHeld).To(BeNumerically("~", int64(total), 1), "gpuSecondsHeld is not the two servers' sum")
			GinkgoWriter.Printf("%s: GPU-seconds held %d (earlier server %d), idle %d (earlier %d)\n", victim,
				m.GPUSecondsHeld, m.EarlierServers.GPUSecondsHeld, m.GPUSecondsIdle, m.EarlierServers.GPUSecondsIdle)
		}
		close(stopWatch)
		<-watchDone
		mu.Lock()
		Expect(violations).To(BeEmpty())
		Expect(maxHeld).To(Equal(2), "Kueue never admitted two models at once")
		mu.Unlock()
		// Each shard of the re-admitted model started from its ledger: the
		// runner found every run that had finished before the eviction and
		// skipped it.
		for shard := range 2 {
			name := build.LedgerName("sweep", victim, shard)
			r, ok := resumed[strconv.Itoa(shard)]
			Expect(ok).To(BeTrue(), "no log of a re-admitted runner pod of shard %d of %s said how many finished runs it found", shard, victim)
			already := r.finished
			Expect(already).To(BeNumerically(">=", ledgered[name]),
				"shard %d of %s resumed with %d finished runs, but %d were recorded before the eviction", shard, victim, already, ledgered[name])
		}
		wls := workloads(Default)
		for _, m := range models {
			Expect(finished(wls[m])).To(BeTrue(), "the Workload of %s is not finished", m)
		}
	})

	// evalWorkloads are the Workloads of one evaluation, by model.
	evalWorkloads := func(g Gomega, eval string) map[string]*kueue.Workload {
		ctx, cancel := ctxTimeout(30 * time.Second)
		defer cancel()
		var list kueue.WorkloadList
		g.Expect(tc.c.List(ctx, &list, client.InNamespace(ns), client.MatchingLabels{build.LabelEvaluation: eval})).To(Succeed())
		out := map[string]*kueue.Workload{}
		for i := range list.Items {
			out[list.Items[i].Labels[build.LabelModel]] = &list.Items[i]
		}
		return out
	}
	It("releases the quota of an evaluation that fails while its runner runs", func() {
		tc.createEvaluation(`apiVersion: repot.dev/v1alpha1
kind: RepotEvaluation
metadata:
  name: deadline
  labels:
    kueue.x-k8s.io/queue-name: gpus
spec:
  suite: open-source-120
  methods: [pot]
  activeDeadlineSeconds: 60
  models:
  - {name: sim, simulated: {profile: weak, seed: 5, gpus: 1}}
  # The runner pods wait for a node that does not exist: the Job runs
  # (active, not suspended) when the deadline passes.
  placement:
    runner:
      nodeSelector:
      - {key: example.com/no-such-pool, value: "true"}
  runner:
    shardsPerModel: 1
` + smallRunnerYAML)
		Eventually(func(g Gomega) {
			tc.operatorAlive()
			e := tc.evaluation(g, "deadline")
			g.Expect(meta.IsStatusConditionTrue(e.Status.Conditions, repotv1.ConditionFailed)).To(BeTrue(), "%v", e.Status.Conditions)
		}).WithTimeout(5 * time.Minute).WithPolling(2 * time.Second).Should(Succeed())
		Eventually(func(g Gomega) {
			tc.operatorAlive()
			wl := evalWorkloads(g, "deadline")["sim"]
			g.Expect(wl).NotTo(BeNil())
			// Finished, not just between an eviction and a requeue (the
			// runner never starts, so waitForPodsReady evicts it too).
			g.Expect(finished(wl)).To(BeTrue(), "the failed evaluation's Workload is not finished: %s", describe(wl))
		}).WithTimeout(3 * time.Minute).WithPolling(2 * time.Second).Should(Succeed())
	})

	It("does not fail an evaluation for its time queued behind a full ClusterQueue", func() {
		// hog takes both GPUs of the ClusterQueue for longer than the
		// queued evaluation's deadline.
		tc.createEvaluation(`apiVersion: repot.dev/v1alpha1
kind: RepotEvaluation
metadata:
  name: hog
  labels:
    kueue.x-k8s.io/queue-name: gpus
spec:
  suite: open-source-120
  methods: [pot]
  models:
  - {name: sim, simulated: {profile: weak, seed: 6, gpus: 2}}
  # Its runner never gets a node, so its server holds both GPUs until
  # the spec deletes it.
  placement:
    runner:
      nodeSelector:
      - {key: example.com/no-such-pool, value: "true"}
  runner:
    shardsPerModel: 1
` + smallRunnerYAML)
		Eventually(func(g Gomega) {
			tc.operatorAlive()
			g.Expect(holdsQuota(evalWorkloads(g, "hog")["sim"])).To(BeTrue())
		}).WithTimeout(3 * time.Minute).WithPolling(2 * time.Second).Should(Succeed())
		tc.createEvaluation(`apiVersion: repot.dev/v1alpha1
kind: RepotEvaluation
metadata:
  name: queued
  labels:
    kueue.x-k8s.io/queue-name: gpus
spec:
  suite: open-source-120
  methods: [pot]
  activeDeadlineSeconds: 60
  models:
  - {name: sim, simulated: {profile: strong, seed: 7, gpus: 1}}
  runner:
    shardsPerModel: 1
` + smallRunnerYAML)
		By("waiting past its activeDeadlineSeconds in the queue")
		Consistently(func(g Gomega) {
			tc.operatorAlive()
			e := tc.evaluation(g, "queued")
			g.Expect(meta.IsStatusConditionTrue(e.Status.Conditions, repotv1.ConditionFailed)).To(BeFalse(), "failed while queued: %v", e.Status.Conditions)
			g.Expect(e.Status.StartTime).To(BeNil(), "started before Kueue admitted it")
		}).WithTimeout(90 * time.Second).WithPolling(3 * time.Second).Should(Succeed())
		By("deleting hog: the queued evaluation is admitted, starts and completes")
		ctx, cancel := ctxTimeout(30 * time.Second)
		Expect(tc.c.Delete(ctx, &repotv1.RepotEvaluation{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "hog"}})).To(Succeed())
		cancel()
		Eventually(func(g Gomega) {
			tc.operatorAlive()
			e := tc.evaluation(g, "queued")
			g.Expect(meta.IsStatusConditionTrue(e.Status.Conditions, repotv1.ConditionComplete)).To(BeTrue(), "%v", e.Status.Conditions)
		}).WithTimeout(5 * time.Minute).WithPolling(2 * time.Second).Should(Succeed())
	})

	It("resumes an evaluation a workload of higher priority preempted, and completes it with every run once and its deadline counted afresh", func() {
		tc.createEvaluation(`apiVersion: repot.dev/v1alpha1
kind: RepotEvaluation
metadata:
  name: low
  labels:
    kueue.x-k8s.io/queue-name: gpus
spec:
  suite: open-source-120
  methods: [pot]
  activeDeadlineSeconds: 1800
  models:
  - {name: sim, simulated: {profile: strong, seed: 8, gpus: 2}}
  runner:
    shardsPerModel: 1
    inFlightPerShard: 2
` + smallRunnerYAML)
		ledger := build.LedgerName("low", "sim", 0)
		recorded := func(g Gomega) int {
			ctx, cancel := ctxTimeout(30 * time.Second)
			defer cancel()
			var cm corev1.ConfigMap
			g.Expect(tc.c.Get(ctx, client.ObjectKey{Namespace: ns, Name: ledger}, &cm)).To(Succeed())
			return finishedRuns(cm.Data[contract.LedgerRecordsKey])
		}
		By("letting it record some runs")
		Eventually(func(g Gomega) {
			tc.operatorAlive()
			g.Expect(recorded(g)).To(BeNumerically(">=", 5))
		}).WithTimeout(10 * time.Minute).WithPolling(time.Second).Should(Succeed())
		preemptedAt := time.Now()
		tc.createEvaluation(`apiVersion: repot.dev/v1alpha1
kind: RepotEvaluation
metadata:
  name: urgent
  labels:
    kueue.x-k8s.io/queue-name: gpus
    kueue.x-k8s.io/priority-class: urgent
spec:
  suite: open-source-120
  methods: [pot]
  models:
  - {name: sim, simulated: {profile: weak, seed: 9, gpus: 1}}
  runner:
    shardsPerModel: 1
` + smallRunnerYAML)
		By("Kueue preempts it for the urgent evaluation")
		Eventually(func(g Gomega) {
			tc.operatorAlive()
			wl := evalWorkloads(g, "low")["sim"]
			g.Expect(wl).NotTo(BeNil())
			c := meta.FindStatusCondition(wl.Status.Conditions, kueue.WorkloadEvicted)
			g.Expect(c).NotTo(BeNil(), "not evicted: %s", describe(wl))
			g.Expect(c.Reason).To(Equal(kueue.WorkloadEvictedByPreemption), "evicted for another reason: %s", describe(wl))
		}).WithTimeout(3 * time.Minute).WithPolling(time.Second).Should(Succeed())
		Eventually(func(g Gomega) {
			tc.operatorAlive()
			e := tc.evaluation(g, "urgent")
			g.Expect(meta.IsStatusConditionTrue(e.Status.Conditions, repotv1.ConditionComplete)).To(BeTrue(), "%v", e.Status.Conditions)
		}).WithTimeout(10 * time.Minute).WithPolling(2 * time.Second).Should(Succeed())
		By("it is admitted again, resumes from its ledger and completes")
		var e *repotv1.RepotEvaluation
		Eventually(func(g Gomega) {
			tc.operatorAlive()
			e = tc.evaluation(g, "low")
			g.Expect(meta.IsStatusConditionTrue(e.Status.Conditions, repotv1.ConditionFailed)).To(BeFalse(), "failed: %v", e.Status.Conditions)
			g.Expect(meta.IsStatusConditionTrue(e.Status.Conditions, repotv1.ConditionComplete)).To(BeTrue(), "%v", e.Status.Conditions)
		}).WithTimeout(15 * time.Minute).WithPolling(2 * time.Second).Should(Succeed())
		Expect(e.Status.Progress.RunsDone).To(Equal(e.Status.Progress.RunsTotal), "a run was lost")
		Expect(recorded(Default)).To(Equal(int(e.Status.Progress.RunsTotal)), "the ledger's finished runs are not the evaluation's runs, once each")
		Expect(e.Status.DeadlineStartTime).NotTo(BeNil())
		Expect(e.Status.DeadlineStartTime.Time).To(BeTemporally(">", preemptedAt), "the deadline counted the time in the queue after the preemption")
		Expect(e.Status.StartTime.Time).To(BeTemporally("<", preemptedAt))
	})

	It("hands back the Kueue quota of an evaluation deleted while its store is down, and finishes the deletion once the store is back", func() {
		// One context for the spec's few direct calls (its Eventuallys
		// bound themselves).
		ctx, cancel := ctxTimeout(30 * time.Minute)
		defer cancel()
		store, err := cluster.LocalArtifactStore(ctx, tc.cs)
		Expect(err).NotTo(HaveOccurred())
		Expect(store.ShareCredentials(ctx, tc.cs, ns)).To(Succeed())
		const name = "storedown"
		tc.createEvaluation(fmt.Sprintf(`apiVersion: repot.dev/v1alpha1
kind: RepotEvaluation
metadata:
  name: %s
  labels:
    kueue.x-k8s.io/queue-name: gpus
spec:
  suite: open-source-120
  methods: [pot]
  models:
  - {name: sim, simulated: {profile: strong, seed: 11, gpus: 1}}
%s  runner:
    shardsPerModel: 1
    inFlightPerShard: 2
%s`, name, notRetainedInLocalStoreYAML(), smallRunnerYAML))
		By("letting it store traces while admitted")
		var e *repotv1.RepotEvaluation
		Eventually(func(g Gomega) {
			tc.operatorAlive()
			e = tc.evaluation(g, name)
			g.Expect(e.Finalizers).To(ContainElement(build.FinalizerArtifactsCleanup))
			g.Expect(e.Status.Artifacts).NotTo(BeNil())
			g.Expect(e.Status.Artifacts.Objects).To(BeNumerically(">", 0))
			g.Expect(holdsQuota(evalWorkloads(g, name)["sim"])).To(BeTrue())
			g.Expect(meta.IsStatusConditionTrue(e.Status.Conditions, repotv1.ConditionComplete)).To(BeFalse(), "it completed before the spec could delete it mid-run")
		}).WithTimeout(10 * time.Minute).WithPolling(time.Second).Should(Succeed())
		prefix := artifacts.Layout{Namespace: ns, Evaluation: name, UID: string(e.UID)}.EvaluationPrefix()

		By("taking the store down (its Deployment scaled to zero) and deleting the evaluation")
		scaleStore := func(replicas string) {
			tc.kubectl("scale", "deployment", "--namespace", cluster.ArtifactStoreNamespace, cluster.ArtifactStoreName, "--replicas="+replicas)
		}
		scaleStore("0")
		// Back up even when the spec fails first (a no-op otherwise).
		DeferCleanup(scaleStore, "1")
		Eventually(func(g Gomega) {
			var pods corev1.PodList
			g.Expect(tc.c.List(ctx, &pods, client.InNamespace(cluster.ArtifactStoreNamespace))).To(Succeed())
			g.Expect(pods.Items).To(BeEmpty())
		}).WithTimeout(2 * time.Minute).WithPolling(time.Second).Should(Succeed())
		Expect(tc.c.Delete(ctx, e)).To(Succeed())

		By("the Workload goes once the pods are gone, while the cleanup fails and says so")
		Eventually(func(g Gomega) {
			tc.operatorAlive()
			// Never handed back while a pod of the model (its server's,
			// its runner's) has not ended: it would hold what Kueue counts
			// free. The cleanup Job's pod belongs to no model and runs
			// after the hand-back by design.
			var pods corev1.PodList
			g.Expect(tc.c.List(ctx, &pods, client.InNamespace(ns), client.MatchingLabels{build.LabelEvaluation: name, build.LabelModel: "sim"})).To(Succeed())
			wl := evalWorkloads(g, name)["sim"]
			var live []string
			for _, p := range pods.Items {
				if p.Status.Phase != corev1.PodSucceeded && p.Status.Phase != corev1.PodFailed {
					live = append(live, fmt.Sprintf("%s (%s, %s)", p.Name, p.Labels[build.LabelComponent], p.Status.Phase))
				}
			}
			if !holdsQuota(wl) && len(live) > 0 {
				StopTrying(fmt.Sprintf("the quota was handed back while pods of the model have not ended: %v; Workload %s", live, describe(wl))).Now()
			}
			g.Expect(holdsQuota(wl)).To(BeFalse(), "the deleted evaluation still holds quota: %s", describe(wl))
			// Deleted by the operator (Kueue may hold it a moment with its
			// finalizer), not evicted or deactivated for another reason.
			g.Expect(wl == nil || wl.DeletionTimestamp != nil).To(BeTrue(), "the deleted evaluation's Workload is not being deleted: %s", describe(wl))
			got := tc.evaluation(g, name)
			g.Expect(got.UID).To(Equal(e.UID))
			g.Expect(got.DeletionTimestamp).NotTo(BeNil())
			c := meta.FindStatusCondition(got.Status.Conditions, repotv1.ConditionArtifactsCleanupFailed)
			g.Expect(c).NotTo(BeNil(), "%v", got.Status.Conditions)
			g.Expect(c.Status).To(Equal(metav1.ConditionTrue))
			g.Expect(c.Message).To(ContainSubstring("retainAfterDeletion"))
			GinkgoWriter.Printf("%s: %s\n", c.Type, c.Message)
		}).WithTimeout(4 * time.Minute).WithPolling(2 * time.Second).Should(Succeed())

		By("bringing the store back: the cleanup's retry deletes the traces and the evaluation goes")
		scaleStore("1")
		tc.awaitGone(e, 6*time.Minute)
		// Gone because its traces were deleted, not for another reason.
		Eventually(func(g Gomega) {
			st, err := cluster.LocalArtifactStore(ctx, tc.cs) // the store pod's new address
			g.Expect(err).NotTo(HaveOccurred())
			hostStore, err := st.HostStore()
			g.Expect(err).NotTo(HaveOccurred())
			objs, err := hostStore.List(ctx, prefix)
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(objs).To(BeEmpty(), "stored traces left after the evaluation went")
		}).WithTimeout(2 * time.Minute).WithPolling(2 * time.Second).Should(Succeed())
		tc.expectEvent(ns, e.UID, repotv1.ReasonArtifactsDeleted)
	})
})

// resumedShard is what the newest runner pod of a shard logged at its
// start: how many finished runs `repot run` found in its output.
type resumedShard struct {
	created  time.Time
	finished int
}

// readResumed reads, through the API server, the logs of the model's
// runner pods created since `since`, and keeps per shard what the newest
// one found at its start. It runs while the pods exist: the kubelet's logs
// go with them.
func readResumed(tc *testCluster, model string, since time.Time, resumed map[string]resumedShard) {
	ctx, cancel := ctxTimeout(30 * time.Second)
	defer cancel()
	var pods corev1.PodList
	if tc.c.List(ctx, &pods, client.InNamespace(ns), client.MatchingLabels{
		build.LabelEvaluation: "sweep", build.LabelModel: model, build.LabelComponent: build.ComponentRunner}) != nil {
		return // a slow API server: look again
	}
	for _, p := range pods.Items {
		created := p.CreationTimestamp.Time
		shard := p.Annotations[batchv1.JobCompletionIndexAnnotation]
		if created.Before(since.Truncate(time.Second)) || shard == "" || created.Before(resumed[shard].created) {
			continue
		}
		if n, ok := resumeCount(tc.podLog(ns, p.Name, "run")); ok {
			resumed[shard] = resumedShard{created: created, finished: n}
		}
	}
}

// resumeCount parses `repot run`'s "N finished runs already in DIR" line.
func resumeCount(log string) (int, bool) {
	i := strings.Index(log, " finished runs already in ")
	if i < 0 {
		return 0, false
	}
	j := strings.LastIndex(log[:i], " ")
	n, err := strconv.Atoi(log[j+1 : i])
	return n, err == nil
}

// finishedRuns counts the runs a ledger's records finished, as a resuming
// runner counts them (contract.DoneKeys): neither an infrastructure error
// nor an aborted attempt (a stopped runner records those too).
func finishedRuns(records string) int {
	recs, _, err := contract.ReadRecords(strings.NewReader(records))
	Expect(err).NotTo(HaveOccurred())
	return len(contract.DoneKeys(recs))
}
