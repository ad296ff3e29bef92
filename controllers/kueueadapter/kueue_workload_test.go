package kueueadapter

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	kueue "sigs.k8s.io/kueue/apis/kueue/v1beta2"

	repotv1 "repot.dev/repot-operator/api/v1alpha1"
	revtesting "repot.dev/repot-operator/api/v1alpha1/testing"
	"repot.dev/repot-operator/controllers/build"
)

func TestModelWorkload(t *testing.T) {
	queued := func(w *revtesting.EvaluationWrapper) *repotv1.RepotEvaluation {
		e := w.Obj()
		e.Labels = map[string]string{QueueNameLabel: "gpu-queue"}
		return e
	}
	cases := []struct {
		name      string
		eval      *repotv1.RepotEvaluation
		model     int
		wantName  string
		wantSets  []kueue.PodSetReference
		wantCount []int32
		wantGPUs  int64
	}{{
		name:     "vllm model: a server with its GPUs and one runner pod per shard",
		eval:     queued(revtesting.MakeEvaluation("sweep", "ns").VLLM("llama", "meta/llama").GPUs(2).Shards(3)),
		wantName: WorkloadName("sweep", "llama"), wantSets: []kueue.PodSetReference{PodSetServer, PodSetRunners},
		wantCount: []int32{1, 3}, wantGPUs: 2,
	}, {
		name:     "second simulated model, default shards",
		eval:     queued(revtesting.MakeEvaluation("sweep", "ns").Simulated("a", "strong", 1).Simulated("b", "weak", 2)),
		model:    1,
		wantName: WorkloadName("sweep", "b"), wantSets: []kueue.PodSetReference{PodSetServer, PodSetRunners},
		wantCount: []int32{1, repotv1.DefaultShardsPerModel},
	}, {
		name:     "endpoint model: runners only",
		eval:     queued(revtesting.MakeEvaluation("sweep", "ns").Endpoint("api", "https://x/v1", "gpt").Shards(2)),
		wantName: WorkloadName("sweep", "api"), wantSets: []kueue.PodSetReference{PodSetRunners},
		wantCount: []int32{2},
	}}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			m := &tc.eval.Spec.Models[tc.model]
			wl := modelWorkload(tc.eval, m, build.Options{}, WorkloadPriority{})
			if wl.Name != tc.wantName || wl.Namespace != "ns" {
				t.Errorf("workload %s/%s, want ns/%s", wl.Namespace, wl.Name, tc.wantName)
			}
			if string(wl.Spec.QueueName) != "gpu-queue" {
				t.Errorf("queueName %q, want gpu-queue", wl.Spec.QueueName)
			}
			if ref := metav1.GetControllerOf(wl); ref == nil || ref.Name != "sweep" || ref.Kind != "RepotEvaluation" {
				t.Errorf("controller reference %+v, want the evaluation", ref)
			}
			if wl.Labels[build.LabelModel] != m.Name || wl.Labels[build.LabelComponent] != ComponentWorkload || wl.Labels[build.LabelManagedBy] == "" {
				t.Errorf("labels %v do not name the model and component", wl.Labels)
			}
			var sets []kueue.PodSetReference
			var counts []int32
			for _, ps := range wl.Spec.PodSets {
				sets = append(sets, ps.Name)
				counts = append(counts, ps.Count)
			}
			if diff := cmp.Diff(tc.wantSets, sets); diff != "" {
				t.Errorf("pod sets (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.wantCount, counts); diff != "" {
				t.Errorf("pod set counts (-want +got):\n%s", diff)
			}
			// The pod sets are the templates the controller creates once
			// admitted, so Kueue accounts what will really run.
			runner := build.RunnerJob(tc.eval, m, build.Options{}.WithDefaults(), false).Spec.Template
			if diff := cmp.Diff(runner, wl.Spec.PodSets[len(wl.Spec.PodSets)-1].Template); diff != "" {
				t.Errorf("runner pod set template differs from the runner Job's (-job +workload):\n%s", diff)
			}
			if d := build.ServerDeployment(tc.eval, m, build.Options{}.WithDefaults(), 1); d != nil {
				server := wl.Spec.PodSets[0].Template
				if diff := cmp.Diff(d.Spec.Template, server); diff != "" {
					t.Errorf("server pod set template differs from the Deployment's (-deployment +workload):\n%s", diff)
				}
				var gpus int64
				for _, c := range server.Spec.Containers {
					if q, ok := c.Resources.Requests["nvidia.com/gpu"]; ok {
						gpus += q.Value()
					}
				}
				if gpus != tc.wantGPUs {
					t.Errorf("server pod set requests %d GPUs, want %d", gpus, tc.wantGPUs)
				}
			}
		})
	}
}

// workloadWith builds a Workload in a given Kueue state.
func workloadWith(conds []metav1.Condition, adm *kueue.Admission) *kueue.Workload {
	wl := &kueue.Workload{Spec: kueue.WorkloadSpec{QueueName: "q"}}
	wl.Status.Conditions = conds
	wl.Status.Admission = adm
	return wl
}

func cond(t string, s metav1.ConditionStatus, msg string) metav1.Condition {
	return metav1.Condition{Type: t, Status: s, Reason: "R", Message: msg}
}

func TestReadAdmission(t *testing.T) {
	gpuTol := corev1.Toleration{Key: "nvidia.com/gpu", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule}
	spotTol := corev1.Toleration{Key: "spot", Operator: corev1.TolerationOpEqual, Value: "true", Effect: corev1.TaintEffectNoSchedule}
	flavors := map[string]*kueue.ResourceFlavor{
		"h100": {ObjectMeta: metav1.ObjectMeta{Name: "h100"}, Spec: kueue.ResourceFlavorSpec{
			NodeLabels: map[string]string{"nvidia.com/gpu.product": "NVIDIA-H100-80GB-HBM3"}, Tolerations: []corev1.Toleration{gpuTol}}},
		"spot": {ObjectMeta: metav1.ObjectMeta{Name: "spot"}, Spec: kueue.ResourceFlavorSpec{
			NodeLabels: map[string]string{"pool": "spot"}, Tolerations: []corev1.Toleration{spotTol}}},
		"default": {ObjectMeta: metav1.ObjectMeta{Name: "default"}},
		"other-product": {ObjectMeta: metav1.ObjectMeta{Name: "other-product"}, Spec: kueue.ResourceFlavorSpec{
			NodeLabels: map[string]string{"nvidia.com/gpu.product": "A100"}}},
	}
	admitted := []metav1.Condition{cond(kueue.WorkloadQuotaReserved, metav1.ConditionTrue, ""), cond(kueue.WorkloadAdmitted, metav1.ConditionTrue, "")}
	adm := func(psas ...kueue.PodSetAssignment) *kueue.Admission {
		return &kueue.Admission{ClusterQueue: "gpus", PodSetAssignments: psas}
	}
	psa := func(name kueue.PodSetReference, fl map[corev1.ResourceName]kueue.ResourceFlavorReference) kueue.PodSetAssignment {
		return kueue.PodSetAssignment{Name: name, Flavors: fl}
	}
	cases := []struct {
		name string
		wl   *kueue.Workload
		want admission
	}{{
		name: "no workload",
		want: admission{State: AdmissionAbsent},
	}, {
		name: "created, not yet seen by Kueue",
		wl:   workloadWith(nil, nil),
		want: admission{State: admissionPending, Message: "waiting for Kueue to reserve quota in LocalQueue q"},
	}, {
		name: "pending with Kueue's reason",
		wl:   workloadWith([]metav1.Condition{cond(kueue.WorkloadQuotaReserved, metav1.ConditionFalse, "couldn't assign flavors")}, nil),
		want: admission{State: admissionPending, Message: "couldn't assign flavors"},
	}, {
		name: "quota reserved, admission checks not yet ready",
		wl: workloadWith([]metav1.Condition{cond(kueue.WorkloadQuotaReserved, metav1.ConditionTrue, "reserved"),
			cond(kueue.WorkloadAdmitted, metav1.ConditionFalse, "")}, adm(psa(PodSetRunners, nil))),
		want: admission{State: admissionPending, Message: "reserved"},
	}, {
		name: "admitted: flavors become node selectors and tolerations per pod set",
		wl: workloadWith(admitted, adm(
			psa(PodSetServer, map[corev1.ResourceName]kueue.ResourceFlavorReference{"nvidia.com/gpu": "h100", "cpu": "default"}),
			psa(PodSetRunners, map[corev1.ResourceName]kueue.ResourceFlavorReference{"cpu": "spot", "memory": "spot"}))),
		want: admission{State: AdmissionAdmitted, Message: "admitted by ClusterQueue gpus", Placement: map[kueue.PodSetReference]placement{
			PodSetServer:  {NodeSelector: map[string]string{"nvidia.com/gpu.product": "NVIDIA-H100-80GB-HBM3"}, Tolerations: []corev1.Toleration{gpuTol}},
			PodSetRunners: {NodeSelector: map[string]string{"pool": "spot"}, Tolerations: []corev1.Toleration{spotTol}},
		}},
	}, {
		name: "admitted with a flavor the cluster lacks: held back",
		wl:   workloadWith(admitted, adm(psa(PodSetServer, map[corev1.ResourceName]kueue.ResourceFlavorReference{"nvidia.com/gpu": "gone"}))),
		want: admission{State: admissionPending, Message: `pod set server is admitted with ResourceFlavor "gone", which does not exist`},
	}, {
		name: "admitted with flavors that disagree on a node label: held back",
		wl: workloadWith(admitted, adm(psa(PodSetServer, map[corev1.ResourceName]kueue.ResourceFlavorReference{
			"nvidia.com/gpu": "h100", "cpu": "other-product"}))),
		want: admission{State: admissionPending, Message: `pod set server: ResourceFlavors disagree on node label nvidia.com/gpu.product ("NVIDIA-H100-80GB-HBM3", "A100")`},
	}, {
		name: "evicted while holding quota: the children must go",
		wl: workloadWith(append(admitted, cond(kueue.WorkloadEvicted, metav1.ConditionTrue, "Preempted to accommodate a workload")),
			adm(psa(PodSetRunners, nil))),
		want: admission{State: admissionEvicted, Message: "Preempted to accommodate a workload"},
	}, {
		name: "evicted and requeued: pending again",
		wl: workloadWith([]metav1.Condition{cond(kueue.WorkloadQuotaReserved, metav1.ConditionFalse, "Pending"),
			cond(kueue.WorkloadEvicted, metav1.ConditionTrue, "deactivated")}, nil),
		want: admission{State: admissionPending, Message: "deactivated"},
	}, {
		name: "finished",
		wl:   workloadWith(append(admitted, cond(kueue.WorkloadFinished, metav1.ConditionTrue, "all runs recorded")), adm()),
		want: admission{State: AdmissionFinished, Message: "all runs recorded"},
	}}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, readAdmission(tc.wl, flavors)); diff != "" {
				t.Errorf("admission (-want +got):\n%s", diff)
			}
		})
	}
}

func TestPlacementApply(t *testing.T) {
	tol := corev1.Toleration{Key: "nvidia.com/gpu", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule}
	cases := []struct {
		name    string
		pod     corev1.PodSpec
		pl      placement
		want    corev1.PodSpec
		wantErr bool
	}{{
		name: "empty placement changes nothing",
		pod:  corev1.PodSpec{NodeSelector: map[string]string{"a": "1"}},
		want: corev1.PodSpec{NodeSelector: map[string]string{"a": "1"}},
	}, {
		name: "labels and tolerations join the pod's",
		pod:  corev1.PodSpec{NodeSelector: map[string]string{"a": "1"}},
		pl:   placement{NodeSelector: map[string]string{"pool": "gpu"}, Tolerations: []corev1.Toleration{tol}},
		want: corev1.PodSpec{NodeSelector: map[string]string{"a": "1", "pool": "gpu"}, Tolerations: []corev1.Toleration{tol}},
	}, {
		name: "a toleration the pod has is not repeated; an equal label is fine",
		pod:  corev1.PodSpec{NodeSelector: map[string]string{"pool": "gpu"}, Tolerations: []corev1.Toleration{tol}},
		pl:   placement{NodeSelector: map[string]string{"pool": "gpu"}, Tolerations: []corev1.Toleration{tol}},
		want: corev1.PodSpec{NodeSelector: map[string]string{"pool": "gpu"}, Tolerations: []corev1.Toleration{tol}},
	}, {
		name:    "a conflicting node selector is an error",
		pod:     corev1.PodSpec{NodeSelector: map[string]string{"pool": "cpu"}},
		pl:      placement{NodeSelector: map[string]string{"pool": "gpu"}},
		wantErr: true,
	}}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			pod := *tc.pod.DeepCopy()
			err := tc.pl.apply(&pod)
			if (err != nil) != tc.wantErr {
				t.Fatalf("apply error %v, want error %v", err, tc.wantErr)
			}
			if err == nil {
				if diff := cmp.Diff(tc.want, pod); diff != "" {
					t.Errorf("pod (-want +got):\n%s", diff)
				}
			}
		})
	}
}

func TestRequeueStatus(t *testing.T) {
	// Requeued is set as Kueue's job integrations set it: true only where
	// the Workload goes straight back to the queue.
	cases := []struct {
		evictedBy    string
		wantRequeued metav1.ConditionStatus
	}{
		{kueue.WorkloadEvictedByPreemption, metav1.ConditionTrue},
		{kueue.WorkloadEvictedDueToNodeFailures, metav1.ConditionTrue},
		{kueue.WorkloadDeactivated, metav1.ConditionFalse},
		{kueue.WorkloadEvictedByPodsReadyTimeout, metav1.ConditionFalse},
	}
	for _, tc := range cases {
		t.Run(tc.evictedBy, func(t *testing.T) {
			wl := workloadWith([]metav1.Condition{cond(kueue.WorkloadQuotaReserved, metav1.ConditionTrue, ""), cond(kueue.WorkloadAdmitted, metav1.ConditionTrue, ""),
				{Type: kueue.WorkloadEvicted, Status: metav1.ConditionTrue, Reason: tc.evictedBy, Message: "evicted: " + tc.evictedBy}}, &kueue.Admission{ClusterQueue: "gpus"})
			RequeueStatus(wl, metav1.Now())
			if got := readAdmission(wl, nil); got.State != admissionPending || got.Message != "evicted: "+tc.evictedBy {
				t.Errorf("after requeue: %+v, want pending with the eviction's message", got)
			}
			if wl.Status.Admission != nil {
				t.Error("admission kept after requeue")
			}
			for _, c := range []struct {
				typ    string
				status metav1.ConditionStatus
			}{{kueue.WorkloadQuotaReserved, metav1.ConditionFalse}, {kueue.WorkloadAdmitted, metav1.ConditionFalse}, {kueue.WorkloadRequeued, tc.wantRequeued}} {
				got := apimeta.FindStatusCondition(wl.Status.Conditions, c.typ)
				if got == nil || got.Status != c.status {
					t.Errorf("%s = %+v, want status %s", c.typ, got, c.status)
				}
			}
			if r := apimeta.FindStatusCondition(wl.Status.Conditions, kueue.WorkloadRequeued); r != nil && r.Reason != tc.evictedBy {
				t.Errorf("Requeued reason %q, want the eviction's %q", r.Reason, tc.evictedBy)
			}
		})
	}
}
