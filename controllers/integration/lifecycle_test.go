package integration_test

import (
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	repotv1 "repot.dev/repot-operator/api/v1alpha1"
	revtesting "repot.dev/repot-operator/api/v1alpha1/testing"
	"repot.dev/repot-operator/contract"
	"repot.dev/repot-operator/controllers/build"
)

// startRunning creates a one-model simulated evaluation and drives it until
// its runner Job exists.
func startRunning(ns string, w *revtesting.EvaluationWrapper) {
	Expect(k8s.Create(ctx, w.Obj())).To(Succeed())
	Eventually(exists(&appsv1.Deployment{}, ns, build.ServerName("ev", "m"))).Should(BeTrue())
	setServerReady(ns, "ev", "m", true)
	Eventually(exists(&batchv1.Job{}, ns, build.RunnerJobName("ev", "m"))).Should(BeTrue())
}

func jobSuspended(ns string) func(g Gomega) bool {
	return func(g Gomega) bool {
		var j batchv1.Job
		g.Expect(k8s.Get(ctx, key(ns, build.RunnerJobName("ev", "m")), &j)).To(Succeed())
		return ptr.Deref(j.Spec.Suspend, false)
	}
}

func serverReplicas(ns string) func(g Gomega) int32 {
	return func(g Gomega) int32 {
		var d appsv1.Deployment
		g.Expect(k8s.Get(ctx, key(ns, build.ServerName("ev", "m")), &d)).To(Succeed())
		return ptr.Deref(d.Spec.Replicas, 1)
	}
}

var _ = Describe("lifecycle", func() {
	sim := func(ns string) *revtesting.EvaluationWrapper {
		return revtesting.MakeEvaluation("ev", ns).Simulated("m", "strong", 1).Shards(1)
	}

	It("suspends runners and releases the GPUs, and resumes from the ledger once the server answers again", func() {
		ns := createNamespace("suspend")
		startRunning(ns, sim(ns))
		writeLedger(ns, build.LedgerName("ev", "m", 0), rec("m", "p1", "pot", true, contract.RouteInitialSuccess, 1))

		setSuspend(ns, "ev", true)
		Eventually(jobSuspended(ns)).Should(BeTrue())
		Eventually(serverReplicas(ns)).Should(Equal(int32(0)))
		setServerReady(ns, "ev", "m", false)
		eventuallyEval(ns, "ev", func(g Gomega, e *repotv1.RepotEvaluation) {
			g.Expect(e.Status.Summary.State).To(Equal(repotv1.StateSuspended))
			g.Expect(condition(e, repotv1.ConditionRunning).Reason).To(Equal(repotv1.ReasonSuspended))
			g.Expect(model(g, e, 0).Server.State).To(Equal(repotv1.ServerStopped))
			g.Expect(e.Status.Progress.RunsDone).To(Equal(int32(1)))
		})

		setSuspend(ns, "ev", false)
		Eventually(serverReplicas(ns)).Should(Equal(int32(1)))
		Consistently(jobSuspended(ns), "700ms").Should(BeTrue(), "the Job waits for the server to answer")
		setServerReady(ns, "ev", "m", true)
		Eventually(jobSuspended(ns)).Should(BeFalse())
		eventuallyEval(ns, "ev", func(g Gomega, e *repotv1.RepotEvaluation) {
			g.Expect(e.Status.Summary.State).To(Equal(repotv1.StateRunning))
			g.Expect(e.Status.Progress.RunsDone).To(Equal(int32(1)), "the ledger survived the suspension")
		})
		var j batchv1.Job
		Expect(k8s.Get(ctx, key(ns, build.RunnerJobName("ev", "m")), &j)).To(Succeed())
		Expect(j.Spec.Template.Spec.Containers[0].Args).To(ContainElement("--resume"))
	})

	It("fails with DeadlineExceeded when activeDeadlineSeconds passes, stopping runners and servers", func() {
		ns := createNamespace("deadline")
		startRunning(ns, sim(ns).ActiveDeadline(60))
		expectDeadlineBetween(ns, 30*time.Second, 31*time.Second)
		e := getEval(ns, "ev")
		Expect(condition(e, repotv1.ConditionStalled).Status).To(Equal(metav1.ConditionTrue))
		Expect(e.Status.CompletionTime).NotTo(BeNil())
		Eventually(exists(&appsv1.Deployment{}, ns, build.ServerName("ev", "m"))).Should(BeFalse())
		Eventually(jobSuspended(ns)).Should(BeTrue())
		Eventually(eventReasons(ns, "ev")).Should(ContainElement("Warning/DeadlineExceeded"), "an event announces the recorded failure")
		Expect(exists(&corev1.ConfigMap{}, ns, build.LedgerName("ev", "m", 0))()).To(BeTrue())
	})

	It("on completion deletes the servers, keeps status and ledgers, and the TTL deletes the evaluation", func() {
		ns := createNamespace("ttl")
		startRunning(ns, sim(ns).TTL(300))
		writeLedger(ns, build.LedgerName("ev", "m", 0), rec("m", "p1", "pot", true, contract.RouteInitialSuccess, 1))
		finishJob(ns, build.RunnerJobName("ev", "m"))
		eventuallyEval(ns, "ev", func(g Gomega, e *repotv1.RepotEvaluation) {
			g.Expect(condition(e, repotv1.ConditionComplete).Status).To(Equal(metav1.ConditionTrue))
			g.Expect(condition(e, repotv1.ConditionReady).Status).To(Equal(metav1.ConditionTrue))
			g.Expect(e.Status.Summary.State).To(Equal(repotv1.StateComplete))
			g.Expect(e.Status.Progress.RunsDone).To(Equal(int32(1)))
		})
		Eventually(exists(&appsv1.Deployment{}, ns, build.ServerName("ev", "m"))).Should(BeFalse())
		Eventually(exists(&corev1.Service{}, ns, build.ServerName("ev", "m"))).Should(BeFalse())
		Expect(exists(&corev1.ConfigMap{}, ns, build.LedgerName("ev", "m", 0))()).To(BeTrue())
		Expect(exists(&batchv1.Job{}, ns, build.RunnerJobName("ev", "m"))()).To(BeTrue())

		clk.Step(299 * time.Second)
		poke(ns, "ev")
		Consistently(exists(&repotv1.RepotEvaluation{}, ns, "ev"), "500ms").Should(BeTrue())
		clk.Step(2 * time.Second)
		poke(ns, "ev")
		Eventually(exists(&repotv1.RepotEvaluation{}, ns, "ev")).Should(BeFalse())
	})

	It("completes when a Done model's finished runner Job was deleted by a cleanup, and does not create it again", func() {
		ns := createNamespace("cleanup")
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "problems", Namespace: ns},
			Data: map[string]string{"problems.jsonl": `{"id":"p1","environment":"tower_of_hanoi","complexity":3}` + "\n"}}
		Expect(k8s.Create(ctx, cm)).To(Succeed())
		ev := revtesting.MakeEvaluation("ev", ns).Simulated("a", "strong", 1).Simulated("b", "weak", 1).Shards(1).
			Methods(repotv1.MethodPoT).ProblemsConfigMap("problems", "").Obj()
		Expect(k8s.Create(ctx, ev)).To(Succeed())
		for _, m := range []string{"a", "b"} {
			Eventually(exists(&appsv1.Deployment{}, ns, build.ServerName("ev", m))).Should(BeTrue())
			setServerReady(ns, "ev", m, true)
			Eventually(exists(&batchv1.Job{}, ns, build.RunnerJobName("ev", m))).Should(BeTrue())
		}

		By("model a's one run is recorded and its Job completes: a is Done")
		writeLedger(ns, build.LedgerName("ev", "a", 0), rec("a", "p1", "pot", true, contract.RouteInitialSuccess, 1))
		finishJob(ns, build.RunnerJobName("ev", "a"))
		eventuallyEval(ns, "ev", func(g Gomega, e *repotv1.RepotEvaluation) {
			g.Expect(model(g, e, 0).Phase).To(Equal(repotv1.ModelDone))
			g.Expect(model(g, e, 0).RunsDone).To(BeEquivalentTo(1))
			g.Expect(model(g, e, 0).RunsTotal).To(BeEquivalentTo(1))
		})

		By("a cleanup deletes a's finished Job: it is not created again")
		var ja batchv1.Job
		Expect(k8s.Get(ctx, key(ns, build.RunnerJobName("ev", "a")), &ja)).To(Succeed())
		Expect(k8s.Delete(ctx, &ja, client.PropagationPolicy(metav1.DeletePropagationBackground))).To(Succeed())
		Eventually(exists(&batchv1.Job{}, ns, build.RunnerJobName("ev", "a"))).Should(BeFalse())
		poke(ns, "ev")
		Consistently(exists(&batchv1.Job{}, ns, build.RunnerJobName("ev", "a")), "700ms").Should(BeFalse())

		By("model b finishes: the evaluation completes without a's Job")
		writeLedger(ns, build.LedgerName("ev", "b", 0), rec("b", "p1", "pot", false, contract.RouteInitialSuccess, 1))
		finishJob(ns, build.RunnerJobName("ev", "b"))
		eventuallyEval(ns, "ev", func(g Gomega, e *repotv1.RepotEvaluation) {
			g.Expect(condition(e, repotv1.ConditionComplete).Status).To(Equal(metav1.ConditionTrue))
			g.Expect(e.Status.Summary.State).To(Equal(repotv1.StateComplete))
			g.Expect(e.Status.Progress.RunsDone).To(Equal(int32(2)))
			g.Expect(model(g, e, 0).Phase).To(Equal(repotv1.ModelDone))
		})
		Expect(exists(&batchv1.Job{}, ns, build.RunnerJobName("ev", "a"))()).To(BeFalse(), "the deleted Job was created again")
	})

	It("owns every child through a controller reference, so deletion needs no finalizer", func() {
		ns := createNamespace("delete")
		startRunning(ns, sim(ns))
		e := getEval(ns, "ev")
		Expect(e.Finalizers).To(BeEmpty())
		lists := []client.ObjectList{
			&appsv1.DeploymentList{}, &corev1.ServiceList{}, &batchv1.JobList{}, &corev1.ConfigMapList{},
			&corev1.ServiceAccountList{}, &rbacv1.RoleList{}, &rbacv1.RoleBindingList{}, &networkingv1.NetworkPolicyList{},
		}
		children := 0
		for _, l := range lists {
			Expect(k8s.List(ctx, l, client.InNamespace(ns), client.MatchingLabels{build.LabelEvaluation: "ev"})).To(Succeed())
			items, err := metaItems(l)
			Expect(err).NotTo(HaveOccurred())
			Expect(items).NotTo(BeEmpty(), "%T", l)
			for _, o := range items {
				ref := metav1.GetControllerOf(o)
				Expect(ref).NotTo(BeNil(), o.GetName())
				Expect(ref.UID).To(Equal(e.UID), o.GetName())
				Expect(ptr.Deref(ref.BlockOwnerDeletion, false)).To(BeTrue(), o.GetName())
				children++
			}
		}
		Expect(children).To(Equal(1 + 1 + 1 + 1 + 4 + 1)) // deployment, service, job, ledger, SA/Role/RB/NP, servers' NP

		Expect(k8s.Delete(ctx, e)).To(Succeed())
		Eventually(func() bool {
			err := k8s.Get(ctx, key(ns, "ev"), &repotv1.RepotEvaluation{})
			return apierrors.IsNotFound(err)
		}).Should(BeTrue(), "nothing holds the evaluation back; the garbage collector removes the children")
	})

	It("waits for capacity, then stalls with the cause when a server cannot be scheduled or its image cannot be pulled", func() {
		ns := createNamespace("stall")
		ev := revtesting.MakeEvaluation("ev", ns).VLLM("big", "meta-llama/Llama-3.1-405B").GPUs(8).
			Simulated("sim", "strong", 1).Shards(1).Obj()
		Expect(k8s.Create(ctx, ev)).To(Succeed())
		Eventually(exists(&appsv1.Deployment{}, ns, build.ServerName("ev", "big"))).Should(BeTrue())
		Eventually(exists(&appsv1.Deployment{}, ns, build.ServerName("ev", "sim"))).Should(BeTrue())
		createServerPod(ns, "ev", "big", corev1.PodStatus{Phase: corev1.PodPending, Conditions: []corev1.PodCondition{{
			Type: corev1.PodScheduled, Status: corev1.ConditionFalse, Reason: corev1.PodReasonUnschedulable,
			Message:            "0/4 nodes are available: 4 Insufficient nvidia.com/gpu.",
			LastTransitionTime: metav1.NewTime(clk.Now()),
		}}})
		// Capacity, not failure: Reconciling with the scheduler's message
		// until spec.stalledAfterSeconds (default 600) passed.
		eventuallyEval(ns, "ev", func(g Gomega, e *repotv1.RepotEvaluation) {
			g.Expect(condition(e, repotv1.ConditionReconciling).Status).To(Equal(metav1.ConditionTrue))
			g.Expect(condition(e, repotv1.ConditionReconciling).Reason).To(Equal(repotv1.ReasonWaitingForCapacity))
			g.Expect(condition(e, repotv1.ConditionReconciling).Message).To(ContainSubstring("Insufficient nvidia.com/gpu"))
			g.Expect(condition(e, repotv1.ConditionStalled).Status).To(Equal(metav1.ConditionFalse))
			g.Expect(model(g, e, 0).Server.Reason).To(Equal(repotv1.ReasonWaitingForCapacity))
		})
		clk.Step(599 * time.Second)
		poke(ns, "ev")
		Consistently(func(g Gomega) {
			g.Expect(condition(getEval(ns, "ev"), repotv1.ConditionStalled).Status).To(Equal(metav1.ConditionFalse))
		}).Should(Succeed())
		clk.Step(2 * time.Second)
		poke(ns, "ev")
		eventuallyEval(ns, "ev", func(g Gomega, e *repotv1.RepotEvaluation) {
			g.Expect(condition(e, repotv1.ConditionStalled).Status).To(Equal(metav1.ConditionTrue))
			g.Expect(condition(e, repotv1.ConditionStalled).Reason).To(Equal(repotv1.ReasonServerStalled))
			g.Expect(condition(e, repotv1.ConditionServersReady).Reason).To(Equal(repotv1.ReasonUnschedulable))
			g.Expect(condition(e, repotv1.ConditionServersReady).Message).To(ContainSubstring("Insufficient nvidia.com/gpu"))
			g.Expect(model(g, e, 0).Server.State).To(Equal(repotv1.ServerStalled))
			g.Expect(model(g, e, 0).Server.Reason).To(Equal(repotv1.ReasonUnschedulable))
			g.Expect(e.Status.Summary.State).To(Equal(repotv1.StateStalled))
		})

		createServerPod(ns, "ev", "sim", corev1.PodStatus{Phase: corev1.PodPending, ContainerStatuses: []corev1.ContainerStatus{{
			Name: "server", Image: testImage,
			State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "ImagePullBackOff", Message: "Back-off pulling image"}},
		}}})
		eventuallyEval(ns, "ev", func(g Gomega, e *repotv1.RepotEvaluation) {
			g.Expect(model(g, e, 1).Server.Reason).To(Equal(repotv1.ReasonImagePullFailed))
		})
	})
})

// metaItems returns a list's items as objects.
func metaItems(l client.ObjectList) ([]metav1.Object, error) {
	objs, err := apimeta.ExtractList(l)
	if err != nil {
		return nil, err
	}
	out := make([]metav1.Object, 0, len(objs))
	for _, o := range objs {
		m, err := apimeta.Accessor(o)
		if err != nil {
			return nil, err
		}
		out = append(out, m)
	}
	return out, nil
}
