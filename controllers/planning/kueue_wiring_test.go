package planning

import (
	"slices"
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

// queuedStep plans one pass of a queued evaluation as the reconciler does:
// world.Admitted from the Workloads, then the plan, applied to the world.
func queuedStep(t *testing.T, w *World, now time.Time) Plan {
	t.Helper()
	e := sweep()
	e.Labels = map[string]string{kueueadapter.QueueNameLabel: "gpus"}
	w.Admitted = AdmittedModels(e, w)
	return step(e, w, now)
}

func ops(p Plan) []string {
	var out []string
	for _, op := range p.Queue {
		kind := [...]string{"", "submit", "requeue", "finish", "delete", "podsready"}[op.Kind]
		if op.Condition != nil {
			kind += " " + string(op.Condition.Status) + "/" + op.Condition.Reason
		}
		out = append(out, kind+" "+op.Workload.Name)
	}
	return out
}

// setPodsReady writes the PodsReady conditions of the plan's ops into the
// world's Workloads, as applyQueue does.
func setPodsReady(w *World, p Plan) {
	for _, op := range p.Queue {
		if op.Kind == kueueadapter.QueuePodsReady {
			apimeta.SetStatusCondition(&op.Workload.Status.Conditions, *op.Condition)
		}
	}
}

// A queued sweep: Workloads first, children only for the admitted model,
// placed by its flavor; eviction removes them, and the quota is handed back
// once they are gone.
func TestPlanKueue(t *testing.T) {
	flavor := &kueue.ResourceFlavor{ObjectMeta: metav1.ObjectMeta{Name: "h100"}, Spec: kueue.ResourceFlavorSpec{
		NodeLabels: map[string]string{"pool": "h100"}, Tolerations: []corev1.Toleration{{Key: "gpu", Operator: corev1.TolerationOpExists}}}}
	w := newWorld()
	w.Kueue = kueueadapter.QueueWorld{Workloads: map[string]*kueue.Workload{}, Flavors: map[string]*kueue.ResourceFlavor{"h100": flavor}}

	p := queuedStep(t, w, t0)
	if diff := cmp.Diff([]string{"submit " + kueueadapter.WorkloadName("ev", "m1"), "submit " + kueueadapter.WorkloadName("ev", "m2"), "submit " + kueueadapter.WorkloadName("ev", "m3"), "submit " + kueueadapter.WorkloadName("ev", "m4")}, ops(p)); diff != "" {
		t.Errorf("first pass (-want +got):\n%s", diff)
	}
	if len(w.Deployments)+len(w.Jobs) != 0 {
		t.Fatalf("children before admission: %v", servers(w))
	}
	for _, op := range p.Queue {
		w.Kueue.Workloads[op.Workload.Labels[build.LabelModel]] = op.Workload
	}

	// Kueue admits m2 only (m1 waits even though maxParallelModels allows 2).
	wl := w.Kueue.Workloads["m2"]
	wl.Status.Admission = &kueue.Admission{ClusterQueue: "gpus", PodSetAssignments: []kueue.PodSetAssignment{
		{Name: kueueadapter.PodSetServer, Flavors: map[corev1.ResourceName]kueue.ResourceFlavorReference{"nvidia.com/gpu": "h100"}},
		{Name: kueueadapter.PodSetRunners, Flavors: map[corev1.ResourceName]kueue.ResourceFlavorReference{corev1.ResourceCPU: "h100"}}}}
	wl.Status.Conditions = []metav1.Condition{cond(kueue.WorkloadQuotaReserved, metav1.ConditionTrue, ""), cond(kueue.WorkloadAdmitted, metav1.ConditionTrue, "")}
	p = queuedStep(t, w, t0.Add(time.Second))
	if diff := cmp.Diff([]string{"podsready False/WaitForStart " + kueueadapter.WorkloadName("ev", "m2")}, ops(p)); diff != "" {
		t.Errorf("ops after admission (-want +got):\n%s", diff)
	}
	setPodsReady(w, p)
	if diff := cmp.Diff([]string{build.ServerName("ev", "m2")}, servers(w)); diff != "" {
		t.Fatalf("servers (-want +got):\n%s", diff)
	}
	d := w.deployment(build.ServerName("ev", "m2"))
	if d.Spec.Template.Spec.NodeSelector["pool"] != "h100" || !kueueadapter.HasToleration(d.Spec.Template.Spec.Tolerations, flavor.Spec.Tolerations[0]) {
		t.Errorf("server not placed by the flavor: %v %v", d.Spec.Template.Spec.NodeSelector, d.Spec.Template.Spec.Tolerations)
	}
	if got := p.Status.Models[1].Admission; got != "Admitted: admitted by ClusterQueue gpus" {
		t.Errorf("m2 admission status %q", got)
	}
	setServerReady(w, "ev", "m2", true)
	for range 3 { // ledgers, then the Job
		queuedStep(t, w, t0.Add(2*time.Second))
	}
	j := w.job(build.RunnerJobName("ev", "m2"))
	if j == nil || j.Spec.Template.Spec.NodeSelector["pool"] != "h100" {
		t.Fatalf("runner Job missing or not placed: %v", j)
	}

	// Eviction: the children go first; the quota is handed back after.
	wl.Status.Conditions = append(wl.Status.Conditions, cond(kueue.WorkloadEvicted, metav1.ConditionTrue, "Preempted"))
	w.ServerPods = []corev1.Pod{{ObjectMeta: metav1.ObjectMeta{Name: "ev-m2-server-x", Labels: build.ChildLabels("ev", "m2", build.ComponentServer)}}}
	p = queuedStep(t, w, t0.Add(3*time.Second))
	if len(p.Queue) != 0 || len(w.Deployments)+len(w.Jobs) != 0 {
		t.Fatalf("eviction: ops %v, left %v", ops(p), servers(w))
	}
	p = queuedStep(t, w, t0.Add(4*time.Second))
	if len(p.Queue) != 0 {
		t.Errorf("quota handed back while a server pod still terminates: %v", ops(p))
	}
	w.ServerPods = nil
	p = queuedStep(t, w, t0.Add(5*time.Second))
	if diff := cmp.Diff([]string{"requeue " + kueueadapter.WorkloadName("ev", "m2")}, ops(p)); diff != "" {
		t.Errorf("after the children are gone (-want +got):\n%s", diff)
	}
	if !w.hasLedger(build.LedgerName("ev", "m2", 0)) {
		t.Error("eviction removed the ledger")
	}
}

func TestPlanKueueNotInstalled(t *testing.T) {
	w := newWorld()
	w.KueueMissing = true
	p := queuedStep(t, w, t0)
	if len(p.Queue) != 0 || len(w.Deployments) != 0 {
		t.Fatalf("without Kueue: ops %v, servers %v", ops(p), servers(w))
	}
	if got := p.Status.Models[0].Admission; got != kueueNotInstalled {
		t.Errorf("admission status %q, want the not-installed message", got)
	}
}

// The Workloads carry the evaluation's priority; a priority class that does
// not exist holds them back, says so per model and looks again later.
func TestPlanKueuePriority(t *testing.T) {
	high := int32(1000)
	cases := []struct {
		name     string
		priority kueueadapter.WorkloadPriority
		wantOps  []string
		wantRef  *kueue.PriorityClassRef
		wantPrio *int32
		wantAdm  string
		requeue  time.Duration
	}{{
		name:    "no class: Kueue's default",
		wantOps: []string{"submit " + kueueadapter.WorkloadName("ev", "m1"), "submit " + kueueadapter.WorkloadName("ev", "m2"), "submit " + kueueadapter.WorkloadName("ev", "m3"), "submit " + kueueadapter.WorkloadName("ev", "m4")},
		wantAdm: "Absent",
	}, {
		name:     "a WorkloadPriorityClass",
		priority: kueueadapter.WorkloadPriority{Ref: kueue.NewWorkloadPriorityClassRef("eval-high"), Value: &high},
		wantOps:  []string{"submit " + kueueadapter.WorkloadName("ev", "m1"), "submit " + kueueadapter.WorkloadName("ev", "m2"), "submit " + kueueadapter.WorkloadName("ev", "m3"), "submit " + kueueadapter.WorkloadName("ev", "m4")},
		wantRef:  kueue.NewWorkloadPriorityClassRef("eval-high"), wantPrio: &high,
		wantAdm: "Absent",
	}, {
		name:     "a class that does not exist",
		priority: kueueadapter.WorkloadPriority{Problem: "no Workload is created: WorkloadPriorityClass \"gone\" does not exist"},
		wantAdm:  "Absent: no Workload is created: WorkloadPriorityClass \"gone\" does not exist",
		requeue:  kueueadapter.PriorityRecheck,
	}}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			w := newWorld()
			w.Kueue = kueueadapter.QueueWorld{Workloads: map[string]*kueue.Workload{}, Priority: tc.priority}
			p := queuedStep(t, w, t0)
			if diff := cmp.Diff(tc.wantOps, ops(p)); diff != "" {
				t.Errorf("ops (-want +got):\n%s", diff)
			}
			for _, op := range p.Queue {
				if diff := cmp.Diff(tc.wantRef, op.Workload.Spec.PriorityClassRef); diff != "" {
					t.Errorf("%s priorityClassRef (-want +got):\n%s", op.Workload.Name, diff)
				}
				if diff := cmp.Diff(tc.wantPrio, op.Workload.Spec.Priority); diff != "" {
					t.Errorf("%s priority (-want +got):\n%s", op.Workload.Name, diff)
				}
			}
			if got := p.Status.Models[0].Admission; got != tc.wantAdm {
				t.Errorf("admission status %q, want %q", got, tc.wantAdm)
			}
			if tc.requeue > 0 && p.RequeueAfter != tc.requeue {
				t.Errorf("requeue after %v, want %v", p.RequeueAfter, tc.requeue)
			}
		})
	}
}

// A model removed from spec.models (before the start) leaves nothing that
// holds quota or data: its ledgers are deleted, and its Workload is
// finished once its children are gone.
func TestRemovedModelReleasesItsWorkloadAndLedgers(t *testing.T) {
	w := newWorld()
	w.Kueue = kueueadapter.QueueWorld{Workloads: map[string]*kueue.Workload{}}
	p := queuedStep(t, w, t0)
	for _, op := range p.Queue {
		w.Kueue.Workloads[op.Workload.Labels[build.LabelModel]] = op.Workload
	}
	e := sweep()
	e.Labels = map[string]string{kueueadapter.QueueNameLabel: "gpus"}
	// A ledger and a server pod of a model "gone" that spec.models no
	// longer names, with its Workload.
	gone := &kueue.Workload{ObjectMeta: metav1.ObjectMeta{Name: kueueadapter.WorkloadName("ev", "gone"), Labels: build.ChildLabels("ev", "gone", "")}}
	w.Kueue.Workloads["gone"] = gone
	w.Ledgers = append(w.Ledgers, corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: build.LedgerName("ev", "gone", 0), Labels: build.ChildLabels("ev", "gone", build.ComponentLedger)}})
	w.ServerPods = []corev1.Pod{{ObjectMeta: metav1.ObjectMeta{Name: "gone-server-x", Labels: build.ChildLabels("ev", "gone", build.ComponentServer)}}}
	w.Admitted = AdmittedModels(e, w)
	p = step(e, w, t0.Add(time.Second))
	if w.hasLedger(build.LedgerName("ev", "gone", 0)) {
		t.Error("the removed model's ledger was kept")
	}
	if got := ops(p); len(got) != 0 {
		t.Errorf("ops while the removed model's server pod terminates: %v, want none", got)
	}
	w.ServerPods = nil
	p = step(e, w, t0.Add(2*time.Second))
	if diff := cmp.Diff([]string{"delete " + gone.Name}, ops(p)); diff != "" {
		t.Errorf("once nothing of the removed model is left (-want +got):\n%s", diff)
	}
}

// An evaluation that fails while a model's runner Job runs holds no quota:
// its server is deleted and its running Job suspended (planEnded), and once
// the suspended Job's pods are gone its Workload is finished, like the
// Workloads of the models that never started.
func TestFailedEvaluationReleasesItsQuota(t *testing.T) {
	cases := []struct {
		name string
		// fail ends the evaluation at t0+11m (the deadline counts from the
		// server's creation, at t0+1s).
		fail func(w *World)
	}{{
		name: "the active deadline passes while the Job runs",
		fail: func(w *World) {},
	}, {
		name: "the runner Job fails",
		fail: func(w *World) {
			finishJob(w, build.RunnerJobName("ev", "m1"), batchv1.JobFailed, "BackoffLimitExceeded")
		},
	}}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			e := sweep()
			e.Labels = map[string]string{kueueadapter.QueueNameLabel: "gpus"}
			e.Spec.ActiveDeadlineSeconds = ptr.To[int64](600)
			w := newWorld()
			w.Kueue = kueueadapter.QueueWorld{Workloads: map[string]*kueue.Workload{}}
			pass := func(now time.Time) Plan {
				t.Helper()
				w.Admitted = AdmittedModels(e, w)
				p := step(e, w, now)
				// Play Kueue: store the submitted Workloads, mark the
				// finished ones.
				for _, op := range p.Queue {
					switch op.Kind {
					case kueueadapter.QueueSubmit:
						w.Kueue.Workloads[op.Workload.Labels[build.LabelModel]] = op.Workload
					case kueueadapter.QueueFinish:
						op.Workload.Status.Conditions = append(op.Workload.Status.Conditions, cond(kueue.WorkloadFinished, metav1.ConditionTrue, ""))
					}
				}
				return p
			}
			pass(t0)
			wl := w.Kueue.Workloads["m1"]
			wl.Status.Admission = &kueue.Admission{ClusterQueue: "gpus"}
			wl.Status.Conditions = []metav1.Condition{cond(kueue.WorkloadQuotaReserved, metav1.ConditionTrue, ""), cond(kueue.WorkloadAdmitted, metav1.ConditionTrue, "")}
			pass(t0.Add(time.Second))
			setServerReady(w, "ev", "m1", true)
			for range 3 { // ledgers, then the Job
				pass(t0.Add(2 * time.Second))
			}
			job := build.RunnerJobName("ev", "m1")
			if w.job(job) == nil {
				t.Fatal("m1's runner Job was not created")
			}
			w.RunnerPods = []corev1.Pod{{ObjectMeta: metav1.ObjectMeta{Name: job + "-0-x", Labels: build.ChildLabels("ev", "m1", build.ComponentRunner)},
				Status: corev1.PodStatus{Phase: corev1.PodRunning}}}

			tc.fail(w)
			p := pass(t0.Add(11 * time.Minute))
			if p.Status.Summary.State != repotv1.StateFailed {
				t.Fatalf("state %s, want Failed", p.Status.Summary.State)
			}
			if diff := cmp.Diff([]string{"finish " + kueueadapter.WorkloadName("ev", "m2"), "finish " + kueueadapter.WorkloadName("ev", "m3"), "finish " + kueueadapter.WorkloadName("ev", "m4")}, ops(p)); diff != "" {
				t.Errorf("the failing pass: the models without children are finished at once (-want +got):\n%s", diff)
			}
			// The Job controller deletes the pods of a suspended (or failed)
			// Job.
			if p := pass(t0.Add(11*time.Minute + time.Second)); len(p.Queue) != 0 {
				t.Errorf("m1's Workload finished while its runner pod runs: %v", ops(p))
			}
			w.RunnerPods = nil
			p = pass(t0.Add(11*time.Minute + 2*time.Second))
			if diff := cmp.Diff([]string{"finish " + kueueadapter.WorkloadName("ev", "m1")}, ops(p)); diff != "" {
				t.Errorf("once m1's pods are gone (-want +got):\n%s", diff)
			}
			p = pass(t0.Add(11*time.Minute + 3*time.Second))
			if len(p.Queue) != 0 {
				t.Errorf("ops once every Workload is finished: %v", ops(p))
			}
			if got := p.Status.Models[0].Admission; got != "Finished" {
				t.Errorf("m1 admission status %q, want Finished", got)
			}
		})
	}
}

// A model whose nodeSelector asks for another value of a label its admitted
// flavor sets can never run there: its server is not created, and both an
// event and the model's status say why (the event was lost when Describe
// wrote the transition events over the decision's).
func TestPlacementConflictIsReported(t *testing.T) {
	flavor := &kueue.ResourceFlavor{ObjectMeta: metav1.ObjectMeta{Name: "h100"}, Spec: kueue.ResourceFlavorSpec{NodeLabels: map[string]string{"pool": "h100"}}}
	e := revtesting.MakeEvaluation("ev", "ns").Shards(1).VLLM("m1", "org/model").NodeLabel("pool", "a100").Obj()
	e.Labels = map[string]string{kueueadapter.QueueNameLabel: "gpus"}
	w := newWorld()
	w.Kueue = kueueadapter.QueueWorld{Workloads: map[string]*kueue.Workload{}, Flavors: map[string]*kueue.ResourceFlavor{"h100": flavor}}
	w.Admitted = AdmittedModels(e, w)
	p := step(e, w, t0)
	if len(p.Queue) != 1 {
		t.Fatalf("first pass: %v", ops(p))
	}
	wl := p.Queue[0].Workload
	wl.Status.Admission = &kueue.Admission{ClusterQueue: "gpus", PodSetAssignments: []kueue.PodSetAssignment{
		{Name: kueueadapter.PodSetServer, Flavors: map[corev1.ResourceName]kueue.ResourceFlavorReference{"nvidia.com/gpu": "h100"}}}}
	wl.Status.Conditions = []metav1.Condition{cond(kueue.WorkloadQuotaReserved, metav1.ConditionTrue, ""), cond(kueue.WorkloadAdmitted, metav1.ConditionTrue, "")}
	w.Kueue.Workloads["m1"] = wl
	w.Admitted = AdmittedModels(e, w)

	p = settle(e, w, t0.Add(time.Second))
	if d := w.deployment(build.ServerName("ev", "m1")); d != nil {
		t.Fatalf("server created despite the conflict: %v", d.Spec.Template.Spec.NodeSelector)
	}
	var reasons []string
	for _, ev := range p.Events {
		reasons = append(reasons, ev.Reason)
	}
	if !slices.Contains(reasons, "KueuePlacementConflict") {
		t.Errorf("events %v: no KueuePlacementConflict", reasons)
	}
	m := p.Status.Models[0].Server
	if m.Reason != "KueuePlacementConflict" || !strings.Contains(m.Message, "pool=a100 conflicts with the admitted flavor's pool=h100") {
		t.Errorf("model server status %s %q: %q", m.State, m.Reason, m.Message)
	}
}
