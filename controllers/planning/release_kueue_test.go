package planning

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	kueue "sigs.k8s.io/kueue/apis/kueue/v1beta2"

	repotv1 "repot.dev/repot-operator/api/v1alpha1"
	revtesting "repot.dev/repot-operator/api/v1alpha1/testing"
	"repot.dev/repot-operator/controllers/build"
	"repot.dev/repot-operator/controllers/kueueadapter"
)

// kueueWorld plays Kueue and the API server for a queued evaluation's
// Workloads: a pass computes world.Admitted from them as the reconciler
// does, plans, applies the plan, stores the Workloads it submits and marks
// the ones it deletes as being deleted (Kueue's finalizer keeps a deleted
// Workload until Kueue lets it go: gone).
type kueueWorld struct {
	t *testing.T
	e *repotv1.RepotEvaluation
	w *World
}

func (k *kueueWorld) pass(now time.Time) Plan {
	k.t.Helper()
	e := k.e
	if k.w.Kueue.Workloads == nil {
		k.w.Kueue.Workloads = map[string]*kueue.Workload{}
	}
	k.w.Admitted = AdmittedModels(e, k.w)
	p := step(e, k.w, now)
	for _, op := range p.Queue {
		model := op.Workload.Labels[build.LabelModel]
		switch op.Kind {
		case kueueadapter.QueueSubmit:
			k.w.Kueue.Workloads[model] = op.Workload
		case kueueadapter.QueueDelete:
			k.w.Kueue.Workloads[model].DeletionTimestamp = &metav1.Time{Time: now}
		case kueueadapter.QueuePodsReady:
			apimeta.SetStatusCondition(&k.w.Kueue.Workloads[model].Status.Conditions, *op.Condition)
		}
	}
	return p
}

// gone lets a deleted Workload go (Kueue removed its finalizer).
func (k *kueueWorld) gone(model string) {
	if wl := k.w.Kueue.Workloads[model]; wl != nil && wl.DeletionTimestamp != nil {
		delete(k.w.Kueue.Workloads, model)
	}
}

// settle passes until a pass creates nothing.
func (k *kueueWorld) settle(now time.Time) Plan {
	k.t.Helper()
	p := k.pass(now)
	for i := 0; i < 10 && len(p.Create) > 0; i++ {
		p = k.pass(now)
	}
	return p
}

// releasedSeen is what TestReleasedModelHandsBackItsQuota looks at after a
// pass: the Workload operations, the server's replicas (-1: no server
// Deployment), whether it carries the release, whether the runner Job
// exists and is suspended, the state its admission status names and
// whether that status says the model was released.
type releasedSeen struct {
	Ops       []string
	Replicas  int32
	Released  bool
	Job       string
	Admission string
	Note      bool
}

// TestReleasedModelHandsBackItsQuota: under Kueue, a model released for a
// stall gives its quota back: its runner Job is suspended (its stuck pods
// go), its server is at zero replicas, and once none of its pods is left
// its Workload is deleted (not finished, so that it can be admitted
// again); it is not submitted again while it stays released, nor while
// the evaluation is suspended. Resuming submits a new Workload, and the
// server starts only once Kueue admitted it.
func TestReleasedModelHandsBackItsQuota(t *testing.T) {
	pullFails := corev1.PodStatus{Phase: corev1.PodPending, ContainerStatuses: []corev1.ContainerStatus{{Name: "run", Image: "repot:typo",
		State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "ImagePullBackOff", Message: "not found"}}}}}
	unschedulable := corev1.PodStatus{Phase: corev1.PodPending, Conditions: []corev1.PodCondition{{Type: corev1.PodScheduled,
		Status: corev1.ConditionFalse, Message: "0/3 nodes match the node selector"}}}
	serving := corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: build.ServerName("ev", "sim") + "-ok", Labels: build.ChildLabels("ev", "sim", build.ComponentServer)},
		Spec: corev1.PodSpec{NodeName: "gpu-1"}, Status: corev1.PodStatus{Phase: corev1.PodRunning}}
	wlName := kueueadapter.WorkloadName("ev", "sim")
	const note = "released for a stall"
	for _, tc := range []struct {
		name string
		// stall breaks the running model at t0: its server pods and its
		// runner pods from then on.
		stall func(w *World)
	}{
		{"runner image cannot be pulled", func(w *World) {
			w.ServerPods = []corev1.Pod{serving}
			w.RunnerPods = []corev1.Pod{runnerPod("ev", "sim", t0, pullFails)}
		}},
		{"runner pod no node takes", func(w *World) {
			w.ServerPods = []corev1.Pod{serving}
			w.RunnerPods = []corev1.Pod{runnerPod("ev", "sim", t0.Add(-300*time.Second), unschedulable)}
		}},
		{"server stalled", func(w *World) {
			setServerReady(w, "ev", "sim", false)
			w.ServerPods = []corev1.Pod{crashingPod("ev", "sim")}
			w.RunnerPods = []corev1.Pod{runnerPod("ev", "sim", t0.Add(-time.Hour), corev1.PodStatus{Phase: corev1.PodRunning})}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := revtesting.MakeEvaluation("ev", "ns").Simulated("sim", "strong", 1).Shards(1).StalledAfter(300).
				Label(kueueadapter.QueueNameLabel, "gpus").Obj()
			k := &kueueWorld{t: t, e: e, w: newWorld()}
			w := k.w
			k.pass(t0)
			admit(w, "sim")
			k.settle(t0)
			setServerReady(w, "ev", "sim", true)
			k.settle(t0)
			if w.job(build.RunnerJobName("ev", "sim")) == nil {
				t.Fatal("no runner Job: the setup did not start the model")
			}
			look := func(p Plan) releasedSeen {
				s := releasedSeen{Ops: ops(p), Replicas: -1, Job: "none"}
				if d := w.deployment(build.ServerName("ev", "sim")); d != nil {
					s.Replicas = ptr.Deref(d.Spec.Replicas, 1)
					_, s.Released = d.Annotations[build.AnnotationReleased]
				}
				if j := w.job(build.RunnerJobName("ev", "sim")); j != nil {
					s.Job = "running"
					if ptr.Deref(j.Spec.Suspend, false) {
						s.Job = "suspended"
					}
				}
				if len(p.Status.Models) > 0 {
					a := p.Status.Models[0].Admission
					state, _, _ := strings.Cut(a, ":")
					s.Admission, s.Note = state, strings.Contains(a, note)
				}
				return s
			}
			tc.stall(w)
			var got []releasedSeen
			got = append(got, look(k.pass(t0.Add(time.Second))))     // stalled: the clock starts
			got = append(got, look(k.pass(t0.Add(302*time.Second)))) // released
			got = append(got, look(k.pass(t0.Add(303*time.Second)))) // the runner Job is suspended
			got = append(got, look(k.pass(t0.Add(304*time.Second)))) // its pods still terminate: the quota is kept
			// The Job controller and the ReplicaSet remove the pods.
			w.ServerPods, w.RunnerPods = nil, nil
			got = append(got, look(k.pass(t0.Add(305*time.Second)))) // the Workload is deleted
			got = append(got, look(k.pass(t0.Add(306*time.Second)))) // it is being deleted: nothing more
			k.gone("sim")
			got = append(got, look(k.pass(t0.Add(307*time.Second)))) // gone: not submitted again, the release stays
			e.Spec.Suspend = ptr.To(true)
			got = append(got, look(k.pass(t0.Add(400*time.Second)))) // suspended: not submitted either
			got = append(got, look(k.pass(t0.Add(401*time.Second))))
			e.Spec.Suspend = ptr.To(false)
			got = append(got, look(k.pass(t0.Add(500*time.Second)))) // resumed: a new Workload
			got = append(got, look(k.pass(t0.Add(501*time.Second)))) // pending: no server
			want := []releasedSeen{
				{Replicas: 1, Job: "running", Admission: "Admitted"},
				{Replicas: 0, Released: true, Job: "running", Admission: "Admitted"},
				{Replicas: 0, Released: true, Job: "suspended", Admission: "Admitted", Note: true},
				{Replicas: 0, Released: true, Job: "suspended", Admission: "Admitted", Note: true},
				{Ops: []string{"delete " + wlName}, Replicas: 0, Released: true, Job: "suspended", Admission: "Admitted", Note: true},
				{Replicas: 0, Released: true, Job: "suspended", Admission: "Admitted", Note: true},
				{Replicas: 0, Released: true, Job: "suspended", Admission: "Absent", Note: true},
				{Replicas: -1, Job: "none", Admission: "Absent"},
				{Replicas: -1, Job: "none", Admission: "Absent"},
				{Ops: []string{"submit " + wlName}, Replicas: -1, Job: "none", Admission: "Absent"},
				{Replicas: -1, Job: "none", Admission: "Pending"},
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("pass by pass (-want +got):\n%s", diff)
			}
			if !w.hasLedger(build.LedgerName("ev", "sim", 0)) {
				t.Error("the release lost the model's ledger")
			}
			admit(w, "sim")
			k.settle(t0.Add(502 * time.Second))
			if s := look(k.pass(t0.Add(503 * time.Second))); s.Replicas != 1 || s.Released {
				t.Errorf("once admitted again: %+v, want the server started", s)
			}
		})
	}
}

// TestDeletedWorkloadAdmitsNothing: a Workload the operator deleted (a
// released or budget-stopped model's) admits nothing while Kueue's
// finalizer keeps it, its admission included: a model resumed in that
// moment waits for a new Workload's admission.
func TestDeletedWorkloadAdmitsNothing(t *testing.T) {
	e := revtesting.MakeEvaluation("ev", "ns").Simulated("sim", "strong", 1).Label(kueueadapter.QueueNameLabel, "gpus").Obj()
	for _, tc := range []struct {
		name     string
		workload func(w *World)
		want     bool
	}{
		{"no Workload", func(w *World) {}, false},
		{"pending", func(w *World) {
			w.Kueue.Workloads["sim"] = &kueue.Workload{ObjectMeta: metav1.ObjectMeta{Name: kueueadapter.WorkloadName("ev", "sim")}}
		}, false},
		{"admitted", func(w *World) {
			w.Kueue.Workloads["sim"] = &kueue.Workload{ObjectMeta: metav1.ObjectMeta{Name: kueueadapter.WorkloadName("ev", "sim")}}
			admit(w, "sim")
		}, true},
		{"admitted, being deleted", func(w *World) {
			w.Kueue.Workloads["sim"] = &kueue.Workload{ObjectMeta: metav1.ObjectMeta{Name: kueueadapter.WorkloadName("ev", "sim"),
				DeletionTimestamp: &metav1.Time{Time: t0}, Finalizers: []string{"kueue.x-k8s.io/resource-in-use"}}}
			admit(w, "sim")
		}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := newWorld()
			w.Kueue.Workloads = map[string]*kueue.Workload{}
			tc.workload(w)
			if diff := cmp.Diff(map[string]bool{"sim": tc.want}, AdmittedModels(e, w)); diff != "" {
				t.Errorf("admitted (-want +got):\n%s", diff)
			}
		})
	}
}

// TestPodsReadyFollowsThePods: an admitted model's Workload carries the
// PodsReady condition Kueue's waitForPodsReady waits for: False
// (WaitForStart) until its server is Ready and its runner Job's pods run,
// True then, False (WaitForRecovery) when a runner pod is lost, True
// (Recovered) when it is back; written once per change, and not at all
// once the model is done.
func TestPodsReadyFollowsThePods(t *testing.T) {
	e := revtesting.MakeEvaluation("ev", "ns").Simulated("sim", "strong", 1).Shards(1).
		Label(kueueadapter.QueueNameLabel, "gpus").Obj()
	k := &kueueWorld{t: t, e: e, w: newWorld()}
	w := k.w
	wlName := kueueadapter.WorkloadName("ev", "sim")
	k.pass(t0)
	admit(w, "sim")
	var got [][]string
	got = append(got, ops(k.pass(t0))) // admitted: the server is created, not ready
	k.settle(t0)
	got = append(got, ops(k.pass(t0))) // nothing changed: no write
	setServerReady(w, "ev", "sim", true)
	got = append(got, ops(k.settle(t0))) // the server is Ready; the runner Job is created, no pod ready
	runnersReady := func(n int32) { w.job(build.RunnerJobName("ev", "sim")).Status.Ready = ptr.To(n) }
	if w.job(build.RunnerJobName("ev", "sim")) == nil {
		t.Fatal("no runner Job: the setup did not start the model")
	}
	runnersReady(1)
	got = append(got, ops(k.pass(t0.Add(time.Second)))) // every pod ready
	got = append(got, ops(k.pass(t0.Add(2*time.Second))))
	runnersReady(0)
	got = append(got, ops(k.pass(t0.Add(3*time.Second)))) // the runner pod lost
	runnersReady(1)
	got = append(got, ops(k.pass(t0.Add(4*time.Second)))) // replaced
	setServerReady(w, "ev", "sim", false)
	got = append(got, ops(k.pass(t0.Add(5*time.Second)))) // the server restarts
	want := [][]string{
		{"podsready False/WaitForStart " + wlName},
		nil,
		nil,
		{"podsready True/Started " + wlName},
		nil,
		{"podsready False/WaitForRecovery " + wlName},
		{"podsready True/Recovered " + wlName},
		{"podsready False/WaitForRecovery " + wlName},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Workload ops pass by pass (-want +got):\n%s", diff)
	}
	setServerReady(w, "ev", "sim", true)
	finishJob(w, build.RunnerJobName("ev", "sim"), batchv1.JobComplete, "Completed")
	for i := range 4 {
		for _, op := range k.pass(t0.Add(time.Duration(10+i) * time.Second)).Queue {
			if op.Kind == kueueadapter.QueuePodsReady {
				t.Errorf("PodsReady written for a done model: %s/%s", op.Condition.Status, op.Condition.Reason)
			}
		}
	}
}
