//go:build e2e

package e2e

import (
	"os/exec"
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

	repotv1 "repot.dev/repot-operator/api/v1alpha1"
	"repot.dev/repot-operator/controllers/build"
)

// laterImage is a runner image the node does not have until the spec tags
// it (a typo fixed, a push that came late): pulling it fails, since
// localhost is no registry. A simulated model's server runs it too.
const laterImage = "localhost/repot-operator:later"

// badImageYAML is an evaluation whose runner image cannot be pulled, with a
// short stalledAfterSeconds so that its server is released within the spec.
const badImageYAML = `apiVersion: repot.dev/v1alpha1
kind: RepotEvaluation
metadata:
  name: badimage
spec:
  suite: open-source-120
  methods: [pot]
  stalledAfterSeconds: 20
  models:
  - name: sim
    simulated: {profile: strong, seed: 1}
  runner:
    shardsPerModel: 1
    image: ` + laterImage + `
` + smallRunnerYAML

// cleanedYAML is a small evaluation whose finished Job a cleanup deletes.
const cleanedYAML = `apiVersion: repot.dev/v1alpha1
kind: RepotEvaluation
metadata:
  name: cleaned
spec:
  suite: open-source-120
  methods: [pot]
  models:
  - name: sim
    simulated: {profile: strong, seed: 1}
  runner:
    shardsPerModel: 1
` + smallRunnerYAML

// preemptedYAML is an evaluation whose server pod is taken away mid-run
// and cannot come back for a few minutes (the node cordoned, as when
// another team's pod took the GPU): long enough for the runner's calls to
// spend their retries and end runs in infrastructure errors.
const preemptedYAML = `apiVersion: repot.dev/v1alpha1
kind: RepotEvaluation
metadata:
  name: preempted
spec:
  suite: open-source-120
  methods: [pot]
  models:
  - name: sim
    simulated: {profile: strong, seed: 1}
  runner:
    shardsPerModel: 1
    inFlightPerShard: 8
` + smallRunnerYAML

// tenantNamespace creates a team's namespace as a shared GPU pool gives
// it: Pod Security restricted enforced, and tenantLimits.
func (tc *testCluster) tenantNamespace(name string, gpus int) {
	ctx, cancel := ctxTimeout(30 * time.Second)
	defer cancel()
	Expect(tc.c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}})).To(Succeed())
	tc.kubectl(append([]string{"label", "namespace", name}, restrictedLabels()...)...)
	tc.tenantLimits(name, gpus)
}

// restrictedLabels enforce (and warn of) the restricted Pod Security
// Standard in a namespace, as `kubectl label` arguments.
func restrictedLabels() []string {
	return []string{"pod-security.kubernetes.io/enforce=restricted", "pod-security.kubernetes.io/warn=restricted"}
}

// updateQuota replaces the spec of q's ResourceQuota (by namespace and
// name) with q's, retrying on a conflict.
func (tc *testCluster) updateQuota(q *corev1.ResourceQuota) {
	Eventually(func(g Gomega) {
		ctx, cancel := ctxTimeout(30 * time.Second)
		defer cancel()
		var cur corev1.ResourceQuota
		g.Expect(tc.c.Get(ctx, client.ObjectKeyFromObject(q), &cur)).To(Succeed())
		cur.Spec = q.Spec
		g.Expect(tc.c.Update(ctx, &cur)).To(Succeed())
	}).Should(Succeed())
}

// tenantLimits gives namespace a LimitRange with defaults for containers
// that set no resources, and a ResourceQuota on GPUs, CPU, memory and pods
// (gpus nvidia.com/gpu).
func (tc *testCluster) tenantLimits(namespace string, gpus int) {
	ctx, cancel := ctxTimeout(30 * time.Second)
	defer cancel()
	Expect(tc.c.Create(ctx, &corev1.LimitRange{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: "defaults"},
		Spec: corev1.LimitRangeSpec{Limits: []corev1.LimitRangeItem{{Type: corev1.LimitTypeContainer,
			DefaultRequest: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("100m"), corev1.ResourceMemory: resource.MustParse("128Mi")},
			Default:        corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("4"), corev1.ResourceMemory: resource.MustParse("8Gi")}}}}})).To(Succeed())
	Expect(tc.c.Create(ctx, tenantQuota(namespace, gpus))).To(Succeed())
}

// tenantQuota is the team's ResourceQuota with gpus nvidia.com/gpu.
func tenantQuota(namespace string, gpus int) *corev1.ResourceQuota {
	return &corev1.ResourceQuota{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: "team"},
		Spec: corev1.ResourceQuotaSpec{Hard: corev1.ResourceList{
			"requests.nvidia.com/gpu":  *resource.NewQuantity(int64(gpus), resource.DecimalSI),
			corev1.ResourceRequestsCPU: resource.MustParse("16"), corev1.ResourceRequestsMemory: resource.MustParse("128Gi"),
			corev1.ResourceLimitsMemory: resource.MustParse("256Gi"), corev1.ResourcePods: resource.MustParse("50"),
		}}}
}

// These specs drive, on the real node with the operator installed from the
// chart, the failures after which an evaluation on a shared GPU pool must
// give back what it holds or still finish. The good-tenant invariant
// (tenancy_test.go) watches them too.
func tenantSpecs(cluster func() *testCluster) {
	Describe("a good tenant of a shared GPU pool", Label("tenant"), func() {
		var tc *testCluster
		serverReplicas := func(g Gomega, namespace, eval string) int32 {
			ctx, cancel := ctxTimeout(30 * time.Second)
			defer cancel()
			var d appsv1.Deployment
			g.Expect(tc.c.Get(ctx, client.ObjectKey{Namespace: namespace, Name: build.ServerName(eval, "sim")}, &d)).To(Succeed())
			return ptr.Deref(d.Spec.Replicas, 1)
		}
		complete := func(namespace, name string, within time.Duration) {
			Eventually(func(g Gomega) {
				tc.operatorAlive()
				e := tc.evaluationIn(g, namespace, name)
				g.Expect(e.Status.Summary).NotTo(BeNil())
				g.Expect(e.Status.Summary.State).To(Equal(repotv1.StateComplete), "%s: %s", name, state(e))
				g.Expect(e.Status.Progress.RunsDone).To(Equal(e.Status.Progress.RunsTotal))
			}).WithTimeout(within).WithPolling(2 * time.Second).Should(Succeed())
		}
		// deleted: the cluster is shared, so a spec's evaluation goes with
		// it (a DeferCleanup, failed or not), and the next spec meets the
		// namespace's quota as it set it.
		deleted := func(namespace, name string) {
			e := &repotv1.RepotEvaluation{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name}}
			ctx, cancel := ctxTimeout(30 * time.Second)
			defer cancel()
			Expect(client.IgnoreNotFound(tc.c.Delete(ctx, e))).To(Succeed())
			tc.awaitGone(e, 3*time.Minute)
		}

		BeforeAll(func() {
			tc = cluster()
		})

		It("stalls an evaluation whose server pod the namespace's ResourceQuota refuses, in the quota's words, holding no GPU, and completes it once the quota is raised", func() {
			// otherTeam: a tenant namespace of every cluster (sharedPool),
			// with no GPU quota.
			const team = otherTeam
			tc.createEvaluationIn(team, `apiVersion: repot.dev/v1alpha1
kind: RepotEvaluation
metadata:
  name: quota
spec:
  suite: open-source-120
  methods: [pot]
  stalledAfterSeconds: 900
  models:
  - name: sim
    simulated: {profile: strong, seed: 2, gpus: 1}
  runner:
    shardsPerModel: 1
`+smallRunnerYAML)
			DeferCleanup(deleted, team, "quota")
			get := func(g Gomega) *repotv1.RepotEvaluation { return tc.evaluationIn(g, team, "quota") }
			Eventually(func(g Gomega) {
				tc.operatorAlive()
				got := get(g)
				g.Expect(got.Status.Models).To(HaveLen(1))
				srv := got.Status.Models[0].Server
				g.Expect(srv.State).To(Equal(repotv1.ServerStalled), "%s", state(got))
				g.Expect(srv.Reason).To(Equal(repotv1.ReasonServerPodsRefused))
				g.Expect(srv.Message).To(ContainSubstring("exceeded quota: team"))
				g.Expect(apimeta.IsStatusConditionTrue(got.Status.Conditions, repotv1.ConditionStalled)).To(BeTrue())
				ctx, cancel := ctxTimeout(30 * time.Second)
				defer cancel()
				var pods corev1.PodList
				g.Expect(tc.c.List(ctx, &pods, client.InNamespace(team), client.MatchingLabels{build.LabelComponent: build.ComponentServer})).To(Succeed())
				g.Expect(pods.Items).To(BeEmpty(), "a server pod exists: it holds a GPU")
			}).WithTimeout(4 * time.Minute).WithPolling(2 * time.Second).Should(Succeed())

			By("raising the quota: the ReplicaSet's retry creates the pod and the evaluation completes")
			tc.updateQuota(tenantQuota(team, 1))
			complete(team, "quota", 10*time.Minute)
		})

		It("stalls an evaluation whose runner pods the ResourceQuota refuses (the Job controller's FailedCreate), releases its server, and completes once the quota is raised", func() {
			// otherTeam's quota now has the GPU the spec above raised it
			// to; a limit of one pod lets the server in and not the runner.
			const team = otherTeam
			onePod := tenantQuota(team, 1)
			onePod.Spec.Hard[corev1.ResourcePods] = resource.MustParse("1")
			tc.updateQuota(onePod)
			tc.createEvaluationIn(team, `apiVersion: repot.dev/v1alpha1
kind: RepotEvaluation
metadata:
  name: runnerquota
spec:
  suite: open-source-120
  methods: [pot]
  stalledAfterSeconds: 20
  models:
  - name: sim
    simulated: {profile: strong, seed: 4, gpus: 1}
  runner:
    shardsPerModel: 1
`+smallRunnerYAML)
			DeferCleanup(deleted, team, "runnerquota")
			get := func(g Gomega) *repotv1.RepotEvaluation { return tc.evaluationIn(g, team, "runnerquota") }
			By("the runner Job's pods are refused: Stalled in the quota's words, and the server goes")
			Eventually(func(g Gomega) {
				tc.operatorAlive()
				got := get(g)
				c := apimeta.FindStatusCondition(got.Status.Conditions, repotv1.ConditionStalled)
				g.Expect(c).NotTo(BeNil(), "%s", state(got))
				g.Expect(c.Status).To(Equal(metav1.ConditionTrue), "%s", state(got))
				g.Expect(got.Status.Models).To(HaveLen(1))
				srv := got.Status.Models[0].Server
				g.Expect(srv.Reason).To(Equal(repotv1.ReasonRunnerPodsRefused), "%s", state(got))
				g.Expect(srv.Message).To(And(ContainSubstring("scaled to zero"), ContainSubstring("exceeded quota: team")))
				g.Expect(serverReplicas(g, team, "runnerquota")).To(BeZero(), "the server keeps its GPU while its runner cannot start")
				ctx, cancel := ctxTimeout(30 * time.Second)
				defer cancel()
				var pods corev1.PodList
				g.Expect(tc.c.List(ctx, &pods, client.InNamespace(team), client.MatchingLabels{build.LabelEvaluation: "runnerquota"})).To(Succeed())
				g.Expect(pods.Items).To(BeEmpty(), "pods of the stalled evaluation")
			}).WithTimeout(4 * time.Minute).WithPolling(2 * time.Second).Should(Succeed())

			By("raising the quota, then suspending and resuming: it completes")
			tc.updateQuota(tenantQuota(team, 1))
			tc.kubectl("patch", "repotevaluation", "runnerquota", "-n", team, "--type=merge", "-p", `{"spec":{"suspend":true}}`)
			Eventually(func(g Gomega) bool { return get(g).Spec.IsSuspended() }).Should(BeTrue())
			tc.kubectl("patch", "repotevaluation", "runnerquota", "-n", team, "--type=merge", "-p", `{"spec":{"suspend":false}}`)
			complete(team, "runnerquota", 8*time.Minute)
		})

		It("releases the server of an evaluation whose runner image cannot be pulled, and resumes once the image is there", func() {
			tc.createEvaluation(badImageYAML)
			Eventually(func(g Gomega) {
				tc.operatorAlive()
				e := tc.evaluation(g, "badimage")
				c := apimeta.FindStatusCondition(e.Status.Conditions, repotv1.ConditionStalled)
				g.Expect(c).NotTo(BeNil())
				g.Expect(c.Status).To(Equal(metav1.ConditionTrue), "%s", state(e))
				g.Expect(serverReplicas(g, ns, "badimage")).To(BeZero(), "the server keeps its GPU while the runner cannot start")
				// A simulated model's server runs spec.runner.image too, so
				// the server or the runner may be the first to fail its pull.
				g.Expect(e.Status.Models[0].Server.Message).To(And(ContainSubstring("scaled to zero"), ContainSubstring(laterImage)))
			}).WithTimeout(4 * time.Minute).WithPolling(2 * time.Second).Should(Succeed())

			By("tagging the image on the node, then suspending and resuming")
			socks, _ := filepath.Glob(filepath.Join(tc.dir, "real", "*", "containerd.sock"))
			Expect(socks).To(HaveLen(1))
			out, err := exec.Command("ctr", "-a", socks[0], "-n", "k8s.io", "images", "tag", projectImage, laterImage).CombinedOutput()
			Expect(err).NotTo(HaveOccurred(), "ctr images tag: %s", out)
			tc.kubectl("patch", "repotevaluation", "badimage", "-n", ns, "--type=merge", "-p", `{"spec":{"suspend":true}}`)
			Eventually(func(g Gomega) bool { return tc.evaluation(g, "badimage").Spec.IsSuspended() }).Should(BeTrue())
			tc.kubectl("patch", "repotevaluation", "badimage", "-n", ns, "--type=merge", "-p", `{"spec":{"suspend":false}}`)
			complete(ns, "badimage", 6*time.Minute)
		})

		It("runs again the runs a server preempted mid-run ended in infrastructure errors, and completes with all of them", func() {
			tc.createEvaluation(preemptedYAML)
			model := func(g Gomega) repotv1.ModelStatus {
				e := tc.evaluation(g, "preempted")
				g.Expect(e.Status.Models).To(HaveLen(1))
				return e.Status.Models[0]
			}
			Eventually(func(g Gomega) {
				tc.operatorAlive()
				m := model(g)
				g.Expect(m.RunsDone).To(BeNumerically(">=", 5))
				g.Expect(m.RunsDone).To(BeNumerically("<", m.RunsTotal), "the evaluation finished before its server could be taken")
			}).WithTimeout(5 * time.Minute).WithPolling(time.Second).Should(Succeed())

			By("cordoning the node and deleting the server's pod: its replacement waits, and the runner's calls spend their retries")
			node := strings.TrimPrefix(strings.TrimSpace(tc.kubectl("get", "nodes", "-o", "name")), "node/")
			Expect(node).NotTo(ContainSubstring("\n"), "one node")
			tc.kubectl("cordon", node)
			uncordoned := false
			DeferCleanup(func() {
				if !uncordoned {
					tc.kubectl("uncordon", node)
				}
			})
			tc.kubectl("delete", "pod", "-n", ns, "-l", build.LabelEvaluation+"=preempted,"+build.LabelComponent+"="+build.ComponentServer, "--wait=false")
			Eventually(func(g Gomega) {
				tc.operatorAlive()
				g.Expect(model(g).InfraErrorRuns).To(BeNumerically(">", 0), "no run has ended in an infrastructure error yet")
			}).WithTimeout(6 * time.Minute).WithPolling(2 * time.Second).Should(Succeed())

			By("uncordoning the node: the server comes back, and the infrastructure errors are run again")
			tc.kubectl("uncordon", node)
			uncordoned = true
			complete(ns, "preempted", 10*time.Minute)
			m := model(Default)
			Expect(m.InfraErrorRuns).To(BeZero(), "a run still ends in an infrastructure error")
			Expect(m.InfraRetries).To(BeNumerically(">=", 1), "the runner Job was not run again for the infrastructure errors")
		})

		It("completes an evaluation whose finished runner Job a cleanup deleted", func() {
			By("stopping the operator, so that it first sees the model after the cleanup")
			tc.createEvaluation(cleanedYAML)
			Eventually(func(g Gomega) {
				ctx, cancel := ctxTimeout(30 * time.Second)
				defer cancel()
				var j batchv1.Job
				g.Expect(tc.c.Get(ctx, client.ObjectKey{Namespace: ns, Name: build.RunnerJobName("cleaned", "sim")}, &j)).To(Succeed())
			}).WithTimeout(3 * time.Minute).WithPolling(2 * time.Second).Should(Succeed())
			tc.kubectl("scale", "deployment", "-n", operatorNamespace, "-l", "app.kubernetes.io/name=repot-operator", "--replicas=0")
			// The cluster is shared: the operator comes back even when the
			// spec fails before it scales it up again (a no-op then).
			DeferCleanup(func() {
				tc.kubectl("scale", "deployment", "-n", operatorNamespace, "-l", "app.kubernetes.io/name=repot-operator", "--replicas=1")
			})
			var job batchv1.Job
			Eventually(func(g Gomega) {
				ctx, cancel := ctxTimeout(30 * time.Second)
				defer cancel()
				g.Expect(tc.c.Get(ctx, client.ObjectKey{Namespace: ns, Name: build.RunnerJobName("cleaned", "sim")}, &job)).To(Succeed())
				g.Expect(job.Status.Succeeded).To(BeNumerically(">=", ptr.Deref(job.Spec.Completions, 1)), "the runner Job has not finished")
			}).WithTimeout(6 * time.Minute).WithPolling(2 * time.Second).Should(Succeed())
			By("deleting the finished Job, as a TTL policy or a cleanup CronJob would")
			tc.kubectl("delete", "job", job.Name, "-n", ns, "--cascade=background", "--wait=true")
			tc.kubectl("scale", "deployment", "-n", operatorNamespace, "-l", "app.kubernetes.io/name=repot-operator", "--replicas=1")
			complete(ns, "cleaned", 4*time.Minute)
			Consistently(func(g Gomega) {
				ctx, cancel := ctxTimeout(30 * time.Second)
				defer cancel()
				var j batchv1.Job
				err := tc.c.Get(ctx, client.ObjectKey{Namespace: ns, Name: build.RunnerJobName("cleaned", "sim")}, &j)
				g.Expect(client.IgnoreNotFound(err)).To(Succeed())
				g.Expect(err).To(HaveOccurred(), "the operator made a new runner Job for a model that was done")
			}).WithTimeout(10 * time.Second).WithPolling(2 * time.Second).Should(Succeed())
		})
	})
}
