package integration_test

import (
	"maps"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	kueue "sigs.k8s.io/kueue/apis/kueue/v1beta2"

	repotv1 "repot.dev/repot-operator/api/v1alpha1"
	revtesting "repot.dev/repot-operator/api/v1alpha1/testing"
	"repot.dev/repot-operator/contract"
	"repot.dev/repot-operator/controllers/build"
	"repot.dev/repot-operator/controllers/kueueadapter"
)

// These tests hold the Workload contract against the real API server with
// Kueue's CRDs (from the module cache): the test plays Kueue's scheduler,
// writing admission and eviction into the Workload status as Kueue does.
// hack/e2e runs the same flow against the real Kueue manager.
var _ = Describe("Kueue admission (the test plays Kueue)", func() {
	BeforeEach(func() {
		if kueueMissing != "" {
			Skip("Kueue's CRDs are not installed in the test API server: " + kueueMissing)
		}
	})

	getWorkload := func(g Gomega, ns, model string) *kueue.Workload {
		var wl kueue.Workload
		g.Expect(k8s.Get(ctx, key(ns, kueueadapter.WorkloadName("ev", model)), &wl)).To(Succeed())
		return &wl
	}
	setStatus := func(ns, model string, f func(wl *kueue.Workload)) {
		Eventually(func(g Gomega) {
			wl := getWorkload(g, ns, model)
			f(wl)
			g.Expect(k8s.Status().Update(ctx, wl)).To(Succeed())
		}).Should(Succeed())
	}
	setCond := func(wl *kueue.Workload, t string, s metav1.ConditionStatus, reason, msg string) {
		apimeta.SetStatusCondition(&wl.Status.Conditions, metav1.Condition{Type: t, Status: s, Reason: reason, Message: msg})
	}
	admit := func(ns, model string) {
		setStatus(ns, model, func(wl *kueue.Workload) {
			var psas []kueue.PodSetAssignment
			for _, ps := range wl.Spec.PodSets {
				psas = append(psas, kueue.PodSetAssignment{Name: ps.Name, Count: &ps.Count,
					Flavors: map[corev1.ResourceName]kueue.ResourceFlavorReference{corev1.ResourceCPU: "h100"}})
			}
			wl.Status.Admission = &kueue.Admission{ClusterQueue: "gpus", PodSetAssignments: psas}
			setCond(wl, kueue.WorkloadQuotaReserved, metav1.ConditionTrue, "QuotaReserved", "Quota reserved in ClusterQueue gpus")
			setCond(wl, kueue.WorkloadAdmitted, metav1.ConditionTrue, "Admitted", "The workload is admitted")
			setCond(wl, kueue.WorkloadEvicted, metav1.ConditionFalse, "QuotaReserved", "")
		})
	}
	// ensureFlavor creates the ResourceFlavor that admit assigns.
	ensureFlavor := func() {
		flavor := &kueue.ResourceFlavor{
			ObjectMeta: metav1.ObjectMeta{Name: "h100"},
			Spec: kueue.ResourceFlavorSpec{
				NodeLabels:  map[string]string{"nvidia.com/gpu.product": "NVIDIA-H100-80GB-HBM3"},
				Tolerations: []corev1.Toleration{{Key: "nvidia.com/gpu", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule}},
			},
		}
		if err := k8s.Create(ctx, flavor); err != nil && !apierrors.IsAlreadyExists(err) {
			Expect(err).NotTo(HaveOccurred())
		}
	}
	modelChildren := func(ns, model string) func(g Gomega) []string {
		return func(g Gomega) []string {
			var names []string
			var ds appsv1.DeploymentList
			g.Expect(k8s.List(ctx, &ds, client.InNamespace(ns))).To(Succeed())
			for _, d := range ds.Items {
				if d.Labels[build.LabelModel] == model {
					names = append(names, d.Name)
				}
			}
			var js batchv1.JobList
			g.Expect(k8s.List(ctx, &js, client.InNamespace(ns))).To(Succeed())
			for _, j := range js.Items {
				if j.Labels[build.LabelModel] == model {
					names = append(names, j.Name)
				}
			}
			var ss corev1.ServiceList
			g.Expect(k8s.List(ctx, &ss, client.InNamespace(ns))).To(Succeed())
			for _, s := range ss.Items {
				if s.Labels[build.LabelModel] == model {
					names = append(names, s.Name)
				}
			}
			return names
		}
	}

	It("gives each Workload the evaluation's priority, from a WorkloadPriorityClass or the pods' PriorityClass, and holds it back while the class is missing", func() {
		wpc := &kueue.WorkloadPriorityClass{ObjectMeta: metav1.ObjectMeta{Name: "eval-high"}, Value: 1000}
		pc := &schedulingv1.PriorityClass{ObjectMeta: metav1.ObjectMeta{Name: "batch-low"}, Value: 10}
		for _, o := range []client.Object{wpc, pc} {
			if err := k8s.Create(ctx, o); err != nil && !apierrors.IsAlreadyExists(err) {
				Expect(err).NotTo(HaveOccurred())
			}
		}
		// queued creates a one-model evaluation in a new namespace with the
		// label and placement given, and waits for its Workload's priority.
		queued := func(labels map[string]string, pl *repotv1.PlacementSpec, ref *kueue.PriorityClassRef, value int32) {
			ns := createNamespace("kueue-prio")
			e := revtesting.MakeEvaluation("ev", ns).Simulated("a", "strong", 1).Shards(1).Obj()
			e.Labels = map[string]string{kueueadapter.QueueNameLabel: "gpus"}
			maps.Copy(e.Labels, labels)
			e.Spec.Placement = pl
			Expect(k8s.Create(ctx, e)).To(Succeed())
			Eventually(func(g Gomega) {
				wl := getWorkload(g, ns, "a")
				g.Expect(wl.Spec.PriorityClassRef).To(Equal(ref))
				g.Expect(wl.Spec.Priority).To(HaveValue(Equal(value)))
			}).Should(Succeed())
		}
		queued(map[string]string{kueueadapter.PriorityClassLabel: "eval-high"}, nil, kueue.NewWorkloadPriorityClassRef("eval-high"), 1000)
		queued(nil, &repotv1.PlacementSpec{PriorityClassName: "batch-low"}, kueue.NewPodPriorityClassRef("batch-low"), 10)

		ns3 := createNamespace("kueue-prio")
		missing := revtesting.MakeEvaluation("ev", ns3).Simulated("a", "strong", 1).Shards(1).Obj()
		missing.Labels = map[string]string{kueueadapter.QueueNameLabel: "gpus", kueueadapter.PriorityClassLabel: "no-such-class"}
		Expect(k8s.Create(ctx, missing)).To(Succeed())
		eventuallyEval(ns3, "ev", func(g Gomega, e *repotv1.RepotEvaluation) {
			g.Expect(e.Status.Models).To(HaveLen(1))
			g.Expect(model(g, e, 0).Admission).To(ContainSubstring(`WorkloadPriorityClass "no-such-class"`))
			g.Expect(model(g, e, 0).Admission).To(ContainSubstring("does not exist"))
		})
		var wls kueue.WorkloadList
		Expect(k8s.List(ctx, &wls, client.InNamespace(ns3))).To(Succeed())
		Expect(wls.Items).To(BeEmpty(), "a Workload was created without its priority class")
	})

	It("creates nothing of a model until its Workload is admitted, places it by the flavor, removes it on eviction and resumes from the ledger", func() {
		ns := createNamespace("kueue")
		ensureFlavor()
		e := revtesting.MakeEvaluation("ev", ns).Simulated("a", "strong", 1).Simulated("b", "weak", 2).Shards(1).Obj()
		e.Labels = map[string]string{kueueadapter.QueueNameLabel: "gpus"}
		Expect(k8s.Create(ctx, e)).To(Succeed())

		By("one Workload per model, in the LocalQueue, with the server and runner pod sets")
		for _, m := range []string{"a", "b"} {
			Eventually(func(g Gomega) {
				wl := getWorkload(g, ns, m)
				g.Expect(string(wl.Spec.QueueName)).To(Equal("gpus"))
				g.Expect(wl.Spec.PodSets).To(HaveLen(2))
				g.Expect(metav1.IsControlledBy(wl, getEval(ns, "ev"))).To(BeTrue())
			}).Should(Succeed())
		}
		Consistently(modelChildren(ns, "a")).Should(BeEmpty())
		eventuallyEval(ns, "ev", func(g Gomega, e *repotv1.RepotEvaluation) {
			g.Expect(e.Status.Models).To(HaveLen(2))
			g.Expect(model(g, e, 0).Admission).To(HavePrefix("Pending"))
		})

		By("admitting model a: its children appear, placed by the flavor; b still has none")
		admit(ns, "a")
		Eventually(func(g Gomega) {
			var d appsv1.Deployment
			g.Expect(k8s.Get(ctx, key(ns, build.ServerName("ev", "a")), &d)).To(Succeed())
			g.Expect(d.Spec.Template.Spec.NodeSelector).To(HaveKeyWithValue("nvidia.com/gpu.product", "NVIDIA-H100-80GB-HBM3"))
			g.Expect(d.Spec.Template.Spec.Tolerations).To(ContainElement(HaveField("Key", "nvidia.com/gpu")))
		}).Should(Succeed())
		setServerReady(ns, "ev", "a", true)
		Eventually(func(g Gomega) {
			var j batchv1.Job
			g.Expect(k8s.Get(ctx, key(ns, build.RunnerJobName("ev", "a")), &j)).To(Succeed())
			g.Expect(j.Spec.Template.Spec.NodeSelector).To(HaveKeyWithValue("nvidia.com/gpu.product", "NVIDIA-H100-80GB-HBM3"))
		}).Should(Succeed())
		Expect(modelChildren(ns, "b")(Default)).To(BeEmpty())
		ledger := build.LedgerName("ev", "a", 0)
		writeLedger(ns, ledger, rec("a", "p1", "pot", true, contract.RouteInitialSuccess, 1), rec("a", "p2", "pot", false, contract.RouteInitialSuccess, 1))

		By("evicting model a: its children go, its ledger stays, its quota is handed back")
		setStatus(ns, "a", func(wl *kueue.Workload) {
			setCond(wl, kueue.WorkloadEvicted, metav1.ConditionTrue, "Preempted", "Preempted to accommodate a higher priority Workload")
		})
		Eventually(modelChildren(ns, "a")).Should(BeEmpty())
		Eventually(func(g Gomega) {
			wl := getWorkload(g, ns, "a")
			g.Expect(wl.Status.Admission).To(BeNil())
			g.Expect(apimeta.IsStatusConditionTrue(wl.Status.Conditions, kueue.WorkloadQuotaReserved)).To(BeFalse())
			g.Expect(apimeta.IsStatusConditionTrue(wl.Status.Conditions, kueue.WorkloadRequeued)).To(BeTrue())
		}).Should(Succeed())
		var cm corev1.ConfigMap
		Expect(k8s.Get(ctx, key(ns, ledger), &cm)).To(Succeed())
		Expect(strings.Count(cm.Data[contract.LedgerRecordsKey], "\n")).To(Equal(2), "the ledger lost records at the eviction")

		By("re-admitting model a: the children come back and the runner resumes from the ledger")
		admit(ns, "a")
		Eventually(exists(&appsv1.Deployment{}, ns, build.ServerName("ev", "a"))).Should(BeTrue())
		setServerReady(ns, "ev", "a", true)
		Eventually(exists(&batchv1.Job{}, ns, build.RunnerJobName("ev", "a"))).Should(BeTrue())
		eventuallyEval(ns, "ev", func(g Gomega, e *repotv1.RepotEvaluation) {
			g.Expect(model(g, e, 0).RunsDone).To(BeEquivalentTo(2))
			g.Expect(model(g, e, 0).Admission).To(HavePrefix("Admitted"))
		})

		By("model a done: once its children are gone, its Workload is finished")
		finishJob(ns, build.RunnerJobName("ev", "a"))
		Eventually(func(g Gomega) bool {
			return apimeta.IsStatusConditionTrue(getWorkload(g, ns, "a").Status.Conditions, kueue.WorkloadFinished)
		}).Should(BeTrue())
		Expect(modelChildren(ns, "b")(Default)).To(BeEmpty())
	})

	It("finishes the Workload of an evaluation that failed while its runner Job ran, so that it holds no quota", func() {
		ns := createNamespace("kueue-fail")
		ensureFlavor()
		e := revtesting.MakeEvaluation("ev", ns).Simulated("a", "strong", 1).Shards(1).ActiveDeadline(60).Obj()
		e.Labels = map[string]string{kueueadapter.QueueNameLabel: "gpus"}
		Expect(k8s.Create(ctx, e)).To(Succeed())
		Eventually(func(g Gomega) { getWorkload(g, ns, "a") }).Should(Succeed())
		admit(ns, "a")
		Eventually(exists(&appsv1.Deployment{}, ns, build.ServerName("ev", "a"))).Should(BeTrue())
		setServerReady(ns, "ev", "a", true)
		Eventually(exists(&batchv1.Job{}, ns, build.RunnerJobName("ev", "a"))).Should(BeTrue())

		By("the active deadline passes while the runner Job runs")
		clk.Step(61 * time.Second)
		poke(ns, "ev")
		eventuallyEval(ns, "ev", func(g Gomega, e *repotv1.RepotEvaluation) {
			g.Expect(condition(e, repotv1.ConditionFailed).Reason).To(Equal(repotv1.ReasonDeadlineExceeded))
		})
		Eventually(exists(&appsv1.Deployment{}, ns, build.ServerName("ev", "a"))).Should(BeFalse())
		Eventually(func(g Gomega) bool {
			var j batchv1.Job
			g.Expect(k8s.Get(ctx, key(ns, build.RunnerJobName("ev", "a")), &j)).To(Succeed())
			return ptr.Deref(j.Spec.Suspend, false)
		}).Should(BeTrue(), "the runner Job is suspended, not finished")

		By("the suspended Job runs no pods: the Workload is finished and the quota released")
		Eventually(func(g Gomega) bool {
			return apimeta.IsStatusConditionTrue(getWorkload(g, ns, "a").Status.Conditions, kueue.WorkloadFinished)
		}).Should(BeTrue())
		eventuallyEval(ns, "ev", func(g Gomega, e *repotv1.RepotEvaluation) {
			g.Expect(model(g, e, 0).Admission).To(HavePrefix("Finished"))
		})
	})

	It("hands back the quota of a model released for a stall, and waits for a new admission when it is resumed", func() {
		ns := createNamespace("kueue-release")
		ensureFlavor()
		e := revtesting.MakeEvaluation("ev", ns).Simulated("a", "strong", 1).Shards(1).StalledAfter(60).
			Label(kueueadapter.QueueNameLabel, "gpus").Obj()
		Expect(k8s.Create(ctx, e)).To(Succeed())
		var first *kueue.Workload
		Eventually(func(g Gomega) { first = getWorkload(g, ns, "a") }).Should(Succeed())
		admit(ns, "a")
		server := build.ServerName("ev", "a")
		Eventually(exists(&appsv1.Deployment{}, ns, server)).Should(BeTrue())
		setServerReady(ns, "ev", "a", true)
		job := build.RunnerJobName("ev", "a")
		Eventually(exists(&batchv1.Job{}, ns, job)).Should(BeTrue())
		deployment := func(g Gomega) *appsv1.Deployment {
			var d appsv1.Deployment
			g.ExpectWithOffset(1, k8s.Get(ctx, key(ns, server), &d)).To(Succeed())
			return &d
		}

		By("the runner image cannot be pulled for spec.stalledAfterSeconds: the server is released, the runner Job suspended")
		var j batchv1.Job
		Expect(k8s.Get(ctx, key(ns, job), &j)).To(Succeed())
		// Plays the Job controller: one runner pod, unscheduled (so that
		// its deletion is immediate without a kubelet), whose image cannot
		// be pulled.
		pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: job + "-0-x2k4", Namespace: ns, Labels: build.ChildLabels("ev", "a", build.ComponentRunner)},
			Spec: *j.Spec.Template.Spec.DeepCopy()}
		Expect(k8s.Create(ctx, pod)).To(Succeed())
		pod.Status = corev1.PodStatus{Phase: corev1.PodPending, ContainerStatuses: []corev1.ContainerStatus{{Name: pod.Spec.Containers[0].Name, Image: "repot:typo",
			State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "ErrImagePull", Message: "not found"}}}}}
		Expect(k8s.Status().Update(ctx, pod)).To(Succeed())
		Eventually(func(g Gomega) {
			g.Expect(deployment(g).Annotations).To(HaveKey(build.AnnotationStalledSince))
		}).Should(Succeed())
		clk.Step(61 * time.Second)
		poke(ns, "ev")
		Eventually(func(g Gomega) {
			d := deployment(g)
			g.Expect(d.Annotations).To(HaveKey(build.AnnotationReleased))
			g.Expect(ptr.Deref(d.Spec.Replicas, 1)).To(BeZero())
			var j batchv1.Job
			g.Expect(k8s.Get(ctx, key(ns, job), &j)).To(Succeed())
			g.Expect(ptr.Deref(j.Spec.Suspend, false)).To(BeTrue())
		}).Should(Succeed())
		Consistently(exists(&kueue.Workload{}, ns, first.Name), "500ms").Should(BeTrue(), "the Workload is kept while a runner pod is left")

		By("the suspended Job's pod is gone: the Workload is deleted, handing the quota back, and not submitted again")
		Expect(k8s.Delete(ctx, pod)).To(Succeed())
		Eventually(exists(&kueue.Workload{}, ns, first.Name)).Should(BeFalse())
		eventuallyEval(ns, "ev", func(g Gomega, e *repotv1.RepotEvaluation) {
			g.Expect(model(g, e, 0).Admission).To(HavePrefix("Absent: released for a stall"))
			g.Expect(model(g, e, 0).Server.State).To(Equal(repotv1.ServerStalled))
		})
		Consistently(exists(&kueue.Workload{}, ns, first.Name), "500ms").Should(BeFalse())
		Expect(ptr.Deref(deployment(Default).Spec.Replicas, 1)).To(BeZero(), "the released server is kept at zero")

		By("suspended: the released model's children go, and no Workload is submitted")
		setSuspend(ns, "ev", true)
		Eventually(modelChildren(ns, "a")).Should(BeEmpty())
		Consistently(exists(&kueue.Workload{}, ns, first.Name), "500ms").Should(BeFalse())
		Expect(exists(&corev1.ConfigMap{}, ns, build.LedgerName("ev", "a", 0))()).To(BeTrue(), "the ledger is kept")

		By("resumed: a new Workload is submitted, and the server waits for its admission")
		setSuspend(ns, "ev", false)
		Eventually(func(g Gomega) {
			g.Expect(getWorkload(g, ns, "a").UID).NotTo(Equal(first.UID))
		}).Should(Succeed())
		Consistently(exists(&appsv1.Deployment{}, ns, server), "500ms").Should(BeFalse())
		admit(ns, "a")
		Eventually(func(g Gomega) {
			d := deployment(g)
			g.Expect(ptr.Deref(d.Spec.Replicas, 1)).To(BeEquivalentTo(1))
			g.Expect(d.Annotations).NotTo(HaveKey(build.AnnotationReleased))
		}).Should(Succeed())
	})

	It("reports a Workload of the model's name that an earlier evaluation owns, instead of waiting on it silently", func() {
		ns := createNamespace("kueue-taken")
		ev := revtesting.MakeEvaluation("ev", ns).Simulated("m", "strong", 1).Shards(1).Obj()
		ev.Labels = map[string]string{kueueadapter.QueueNameLabel: "gpus"}
		// The Workload of an earlier "ev" (another UID) that the garbage
		// collector has not removed yet (envtest runs none).
		stale := &kueue.Workload{
			ObjectMeta: metav1.ObjectMeta{Name: kueueadapter.WorkloadName("ev", "m"), Namespace: ns, Labels: build.ChildLabels("ev", "m", kueueadapter.ComponentWorkload),
				OwnerReferences: []metav1.OwnerReference{{APIVersion: repotv1.GroupVersion.String(), Kind: "RepotEvaluation", Name: "ev", UID: "0ld-0000-0000-0000-earlier", Controller: ptr.To(true)}}},
			Spec: kueue.WorkloadSpec{QueueName: "gpus", PodSets: []kueue.PodSet{{Name: kueueadapter.PodSetRunners, Count: 1, Template: corev1.PodTemplateSpec{
				Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "x"}}}}}}},
		}
		Expect(k8s.Create(ctx, stale)).To(Succeed())
		Expect(k8s.Create(ctx, ev)).To(Succeed())

		eventuallyEval(ns, "ev", func(g Gomega, e *repotv1.RepotEvaluation) {
			g.Expect(e.Status.Summary).NotTo(BeNil())
			g.Expect(e.Status.Summary.State).To(Equal(repotv1.StateStalled))
			st := condition(e, repotv1.ConditionStalled)
			g.Expect(st.Status).To(Equal(metav1.ConditionTrue))
			g.Expect(st.Reason).To(Equal(repotv1.ReasonChildNameTaken))
			g.Expect(st.Message).To(ContainSubstring("Workload " + stale.Name))
			g.Expect(st.Message).To(ContainSubstring("0ld-0000-0000-0000-earlier"))
			rc := condition(e, repotv1.ConditionReconciling)
			g.Expect(rc.Status).To(Equal(metav1.ConditionFalse))
			g.Expect(rc.Reason).To(Equal(repotv1.ReasonChildNameTaken))
		})
		var wl kueue.Workload
		Expect(k8s.Get(ctx, key(ns, stale.Name), &wl)).To(Succeed())
		Expect(controlledBy(&wl, "0ld-0000-0000-0000-earlier")).To(BeTrue(), "the earlier Workload was adopted")

		By("once the earlier Workload is gone, the model's own is submitted")
		Expect(k8s.Delete(ctx, stale)).To(Succeed())
		e := getEval(ns, "ev")
		Eventually(func(g Gomega) {
			wl := getWorkload(g, ns, "m")
			g.Expect(controlledBy(wl, e.UID)).To(BeTrue())
		}).Should(Succeed())
		eventuallyEval(ns, "ev", func(g Gomega, e *repotv1.RepotEvaluation) {
			g.Expect(condition(e, repotv1.ConditionStalled).Reason).NotTo(Equal(repotv1.ReasonChildNameTaken))
			g.Expect(model(g, e, 0).Admission).To(HavePrefix("Pending"))
		})
	})

	It("does not start a queued evaluation before admission: its deadline does not count the queue and its spec stays editable", func() {
		ns := createNamespace("kueue-start")
		if err := k8s.Create(ctx, &kueue.ResourceFlavor{ObjectMeta: metav1.ObjectMeta{Name: "h100"}}); err != nil && !apierrors.IsAlreadyExists(err) {
			Expect(err).NotTo(HaveOccurred())
		}
		e := revtesting.MakeEvaluation("ev", ns).Simulated("m", "strong", 1).Shards(1).ActiveDeadline(60).Obj()
		e.Labels = map[string]string{kueueadapter.QueueNameLabel: "gpus"}
		Expect(k8s.Create(ctx, e)).To(Succeed())

		By("the Workload and the runner's access exist; nothing that costs was created, so the evaluation has not started")
		Eventually(func(g Gomega) { getWorkload(g, ns, "m") }).Should(Succeed())
		Eventually(exists(&corev1.ServiceAccount{}, ns, build.RunnerAccessName("ev"))).Should(BeTrue())
		eventuallyEval(ns, "ev", func(g Gomega, e *repotv1.RepotEvaluation) {
			g.Expect(e.Status.Models).To(HaveLen(1))
			g.Expect(model(g, e, 0).Admission).To(HavePrefix("Pending"))
			g.Expect(e.Status.StartTime).To(BeNil())
		})

		By("queued past activeDeadlineSeconds: not failed, not started")
		clk.Step(2 * time.Minute)
		poke(ns, "ev")
		Consistently(func(g Gomega) {
			e := getEval(ns, "ev")
			g.Expect(e.Status.StartTime).To(BeNil())
			g.Expect(condition(e, repotv1.ConditionFailed).Status).NotTo(Equal(metav1.ConditionTrue))
			g.Expect(e.Status.CompletionTime).To(BeNil())
		}, "1s").Should(Succeed())
		Expect(modelChildren(ns, "m")(Default)).To(BeEmpty())

		By("the spec is still editable while queued, and the pending Workload follows it")
		first := func() *kueue.Workload {
			var wl kueue.Workload
			Expect(k8s.Get(ctx, key(ns, kueueadapter.WorkloadName("ev", "m")), &wl)).To(Succeed())
			return &wl
		}()
		cur := getEval(ns, "ev")
		patch := client.MergeFrom(cur.DeepCopy())
		cur.Spec.ActiveDeadlineSeconds = ptr.To(int64(90))
		cur.Spec.Runner.ShardsPerModel = ptr.To(int32(2))
		Expect(k8s.Patch(ctx, cur, patch)).To(Succeed())
		Eventually(func(g Gomega) {
			wl := getWorkload(g, ns, "m")
			g.Expect(wl.UID).NotTo(Equal(first.UID), "the Workload built from the earlier spec stays")
			g.Expect(wl.Spec.PodSets).To(ContainElement(And(HaveField("Name", kueueadapter.PodSetRunners), HaveField("Count", int32(2)))))
		}).Should(Succeed())

		By("admission creates the server, which starts the evaluation and its deadline")
		admitted := clk.Now()
		admit(ns, "m")
		Eventually(exists(&appsv1.Deployment{}, ns, build.ServerName("ev", "m"))).Should(BeTrue())
		eventuallyEval(ns, "ev", func(g Gomega, e *repotv1.RepotEvaluation) {
			g.Expect(e.Status.StartTime).NotTo(BeNil())
			g.Expect(e.Status.StartTime.Time).To(BeTemporally("~", admitted, time.Second))
		})
		expectDeadlineBetween(ns, 60*time.Second, 31*time.Second)
	})

	It("hands a deleted evaluation's quota back at once, while the cleanup of its stored traces fails", func() {
		ns := createNamespace("kueue-deleted")
		ensureFlavor()
		// The store is unreachable; the probe Job passes (the test plays
		// it), the cleanup Job fails (the test plays that too).
		e := revtesting.MakeEvaluation("ev", ns).Simulated("a", "strong", 1).Shards(1).
			ArtifactsS3(repotv1.S3Store{Endpoint: "store.invalid:9000", Bucket: "traces", Insecure: true, CredentialsSecret: "s3"}).
			RetainAfterDeletion(false).Label(kueueadapter.QueueNameLabel, "gpus").Obj()
		Expect(k8s.Create(ctx, e)).To(Succeed())
		Eventually(func(g Gomega) { getWorkload(g, ns, "a") }).Should(Succeed())
		admit(ns, "a")
		Eventually(exists(&batchv1.Job{}, ns, build.ArtifactsProbeJobName("ev"))).Should(BeTrue())
		finishJob(ns, build.ArtifactsProbeJobName("ev"))
		Eventually(exists(&appsv1.Deployment{}, ns, build.ServerName("ev", "a"))).Should(BeTrue())

		By("deleting it: the server goes, and with no pod left the Workload goes before the cleanup ends")
		Expect(k8s.Delete(ctx, getEval(ns, "ev"))).To(Succeed())
		Eventually(exists(&appsv1.Deployment{}, ns, build.ServerName("ev", "a"))).Should(BeFalse())
		Eventually(exists(&kueue.Workload{}, ns, kueueadapter.WorkloadName("ev", "a"))).Should(BeFalse(), "the deleted evaluation still holds its quota")
		Expect(exists(&repotv1.RepotEvaluation{}, ns, "ev")()).To(BeTrue(), "the evaluation went before its traces")

		By("the cleanup Job fails: the status says what and how to let the deletion finish")
		Eventually(exists(&batchv1.Job{}, ns, build.ArtifactsCleanupJobName("ev"))).Should(BeTrue())
		Eventually(func() error {
			var j batchv1.Job
			if err := k8s.Get(ctx, key(ns, build.ArtifactsCleanupJobName("ev")), &j); err != nil {
				return err
			}
			now := metav1.Now()
			start := metav1.NewTime(now.Add(-time.Minute))
			j.Status.StartTime = &start
			j.Status.Failed = 1
			j.Status.Conditions = []batchv1.JobCondition{
				{Type: batchv1.JobFailureTarget, Status: corev1.ConditionTrue, Reason: "BackoffLimitExceeded", Message: "Job has reached the specified backoff limit", LastTransitionTime: now},
				{Type: batchv1.JobFailed, Status: corev1.ConditionTrue, Reason: "BackoffLimitExceeded", Message: "Job has reached the specified backoff limit", LastTransitionTime: now},
			}
			return k8s.Status().Update(ctx, &j)
		}).Should(Succeed())
		eventuallyEval(ns, "ev", func(g Gomega, e *repotv1.RepotEvaluation) {
			c := condition(e, repotv1.ConditionArtifactsCleanupFailed)
			g.Expect(c.Status).To(Equal(metav1.ConditionTrue))
			g.Expect(c.Message).To(ContainSubstring("store.invalid:9000"))
			g.Expect(c.Message).To(ContainSubstring("retainAfterDeletion"))
		})

		By("retainAfterDeletion set: the deletion finishes")
		Eventually(func() error {
			e := getEval(ns, "ev")
			e.Spec.Artifacts.RetainAfterDeletion = ptr.To(true)
			return k8s.Update(ctx, e)
		}).Should(Succeed())
		Eventually(exists(&repotv1.RepotEvaluation{}, ns, "ev")).Should(BeFalse())
	})
})
