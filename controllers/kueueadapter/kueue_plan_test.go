package kueueadapter

import (
	"testing"

	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	kueue "sigs.k8s.io/kueue/apis/kueue/v1beta2"

	revtesting "repot.dev/repot-operator/api/v1alpha1/testing"
	"repot.dev/repot-operator/controllers/build"
)

func TestAdmissionGate(t *testing.T) {
	plain := revtesting.MakeEvaluation("ev", "ns").Simulated("m", "strong", 1).Obj()
	queued := plain.DeepCopy()
	queued.Labels = map[string]string{QueueNameLabel: "q"}
	reserved := []metav1.Condition{cond(kueue.WorkloadQuotaReserved, metav1.ConditionTrue, ""), cond(kueue.WorkloadAdmitted, metav1.ConditionTrue, "")}
	adm := &kueue.Admission{ClusterQueue: "cq", PodSetAssignments: []kueue.PodSetAssignment{{Name: PodSetServer}, {Name: PodSetRunners}}}
	admitted := workloadWith(reserved, adm)
	pending := workloadWith([]metav1.Condition{cond(kueue.WorkloadQuotaReserved, metav1.ConditionFalse, "no quota")}, nil)
	evicted := workloadWith(append(reserved, cond(kueue.WorkloadEvicted, metav1.ConditionTrue, "Preempted")), adm)
	finished := workloadWith(append(reserved, cond(kueue.WorkloadFinished, metav1.ConditionTrue, "done")), adm)
	// Pending Workloads built from an earlier spec of the model and from
	// the current one.
	stale := pending.DeepCopy()
	stale.Annotations = map[string]string{AnnotationSpecHash: "0123456789abcdef"}
	current := pending.DeepCopy()
	current.Annotations = map[string]string{AnnotationSpecHash: workloadSpecHash(queued, &queued.Spec.Models[0])}
	started := queued.DeepCopy()
	started.Status.StartTime = &metav1.Time{}
	world := func(wl *kueue.Workload) QueueWorld {
		w := QueueWorld{Workloads: map[string]*kueue.Workload{}}
		if wl != nil {
			w.Workloads["m"] = wl
		}
		return w
	}
	cases := []struct {
		name         string
		queued       bool
		started      bool
		wl           *kueue.Workload
		done, left   bool
		wantAllowed  bool
		wantOp       queueOpKind
		wantOpTarget *kueue.Workload
	}{
		{name: "no queue label: always allowed", wantAllowed: true},
		{name: "no queue label, done: Kueue has no say", done: true, wantAllowed: true},
		{name: "queued, no workload: submit and wait", queued: true, wantOp: QueueSubmit},
		{name: "queued, pending: wait", queued: true, wl: pending},
		{name: "queued, admitted: allowed", queued: true, wl: admitted, wantAllowed: true},
		{name: "admitted and done, children gone: finish", queued: true, wl: admitted, done: true, wantOp: QueueFinish, wantOpTarget: admitted},
		{name: "admitted and done, children left: finish once they are gone", queued: true, wl: admitted, done: true, left: true},
		{name: "evicted with children left: remove them first", queued: true, wl: evicted, left: true},
		{name: "evicted, children gone: hand the quota back", queued: true, wl: evicted, wantOp: QueueRequeue, wantOpTarget: evicted},
		{name: "finished and done: nothing more", queued: true, wl: finished, done: true},
		{name: "done before any workload: nothing to submit", queued: true, done: true},
		{name: "queued, pending, built from the current spec: wait", queued: true, wl: current},
		{name: "queued, pending, built from a spec edited before the start: delete it, to submit it again", queued: true, wl: stale, wantOp: QueueDelete, wantOpTarget: stale},
		{name: "started, pending, built from another spec (the spec is frozen): wait", queued: true, started: true, wl: stale},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			e := plain
			switch {
			case tc.started:
				e = started
			case tc.queued:
				e = queued
			}
			g := AdmissionGate(e, &e.Spec.Models[0], build.Options{}, world(tc.wl), tc.done, tc.left)
			if g.Allowed != tc.wantAllowed {
				t.Errorf("allowed = %v, want %v", g.Allowed, tc.wantAllowed)
			}
			var got queueOpKind
			if g.Op != nil {
				got = g.Op.Kind
			}
			if got != tc.wantOp {
				t.Fatalf("op = %v, want %v", got, tc.wantOp)
			}
			switch {
			case tc.wantOp == QueueSubmit:
				if g.Op.Workload.Name != WorkloadName("ev", "m") || g.Op.Workload.Spec.QueueName != "q" {
					t.Errorf("submitted workload %s in queue %s, want %s in q", g.Op.Workload.Name, g.Op.Workload.Spec.QueueName, WorkloadName("ev", "m"))
				}
				if h := g.Op.Workload.Annotations[AnnotationSpecHash]; h == "" || h != workloadSpecHash(e, &e.Spec.Models[0]) {
					t.Errorf("submitted workload's spec hash %q, want the evaluation's", h)
				}
			case tc.wantOpTarget != nil && g.Op.Workload != tc.wantOpTarget:
				t.Errorf("op acts on another workload than the model's")
			}
		})
	}
}

func TestStoppedGate(t *testing.T) {
	plain := revtesting.MakeEvaluation("ev", "ns").Simulated("m", "strong", 1).Obj()
	queued := plain.DeepCopy()
	queued.Labels = map[string]string{QueueNameLabel: "q"}
	reserved := []metav1.Condition{cond(kueue.WorkloadQuotaReserved, metav1.ConditionTrue, ""), cond(kueue.WorkloadAdmitted, metav1.ConditionTrue, "")}
	adm := &kueue.Admission{ClusterQueue: "cq", PodSetAssignments: []kueue.PodSetAssignment{{Name: PodSetServer}, {Name: PodSetRunners}}}
	admitted := workloadWith(reserved, adm)
	pending := workloadWith([]metav1.Condition{cond(kueue.WorkloadQuotaReserved, metav1.ConditionFalse, "no quota")}, nil)
	cases := []struct {
		name   string
		queued bool
		wl     *kueue.Workload
		left   bool
		wantOp queueOpKind
	}{
		{name: "no queue label: nothing to do"},
		{name: "admitted, children left: remove them first", queued: true, wl: admitted, left: true},
		{name: "admitted, children gone: delete the workload", queued: true, wl: admitted, wantOp: QueueDelete},
		{name: "pending: delete it, it must not be admitted", queued: true, wl: pending, wantOp: QueueDelete},
		{name: "no workload: nothing to submit", queued: true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			e := plain
			if tc.queued {
				e = queued
			}
			qw := QueueWorld{Workloads: map[string]*kueue.Workload{}}
			if tc.wl != nil {
				qw.Workloads["m"] = tc.wl
			}
			g := StoppedGate(e, &e.Spec.Models[0], qw, tc.left, "stopped")
			if g.Allowed {
				t.Errorf("a stopped model is allowed to run")
			}
			var got queueOpKind
			if g.Op != nil {
				got = g.Op.Kind
				if g.Op.Workload != tc.wl {
					t.Errorf("op on %v, want %v", g.Op.Workload, tc.wl)
				}
			}
			if got != tc.wantOp {
				t.Errorf("op = %v, want %v", got, tc.wantOp)
			}
		})
	}
}

// PodsReadyOp keeps PodsReady as Kueue's job integrations do, and writes
// only on a change of status or reason.
func TestPodsReadyOp(t *testing.T) {
	now := metav1.Now()
	withCond := func(status metav1.ConditionStatus, reason string) *kueue.Workload {
		wl := &kueue.Workload{}
		wl.Generation = 3
		if reason != "" {
			wl.Status.Conditions = []metav1.Condition{{Type: kueue.WorkloadPodsReady, Status: status, Reason: reason}}
		}
		return wl
	}
	cases := []struct {
		name  string
		wl    *kueue.Workload
		ready bool
		want  string // status/reason written; "" for no op
	}{
		{"admitted, pods not ready yet", withCond("", ""), false, "False/WaitForStart"},
		{"admitted, pods ready at once", withCond("", ""), true, "True/Started"},
		{"still starting: no write", withCond(metav1.ConditionFalse, kueue.WorkloadWaitForStart), false, ""},
		{"started", withCond(metav1.ConditionFalse, kueue.WorkloadWaitForStart), true, "True/Started"},
		{"still running: no write", withCond(metav1.ConditionTrue, kueue.WorkloadStarted), true, ""},
		{"a pod lost after the start", withCond(metav1.ConditionTrue, kueue.WorkloadStarted), false, "False/WaitForRecovery"},
		{"still recovering: no write", withCond(metav1.ConditionFalse, kueue.WorkloadWaitForRecovery), false, ""},
		{"recovered", withCond(metav1.ConditionFalse, kueue.WorkloadWaitForRecovery), true, "True/Recovered"},
		{"recovered, running: no write", withCond(metav1.ConditionTrue, kueue.WorkloadRecovered), true, ""},
		{"lost again after a recovery", withCond(metav1.ConditionTrue, kueue.WorkloadRecovered), false, "False/WaitForRecovery"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			op := PodsReadyOp(tc.wl, tc.ready, now)
			got := ""
			if op != nil {
				if op.Kind != QueuePodsReady || op.Workload != tc.wl || op.Condition.Type != kueue.WorkloadPodsReady || op.Condition.ObservedGeneration != 3 {
					t.Fatalf("op %+v", op)
				}
				got = string(op.Condition.Status) + "/" + op.Condition.Reason
			}
			if got != tc.want {
				t.Errorf("PodsReadyOp = %q, want %q", got, tc.want)
			}
		})
	}
}

// RequeueStatus resets PodsReady: the next admission waits for its pods
// anew, instead of counting a recovery from the last one.
func TestRequeueStatusResetsPodsReady(t *testing.T) {
	wl := &kueue.Workload{}
	wl.Status.Conditions = []metav1.Condition{{Type: kueue.WorkloadPodsReady, Status: metav1.ConditionTrue, Reason: kueue.WorkloadStarted}}
	RequeueStatus(wl, metav1.Now())
	c := apimeta.FindStatusCondition(wl.Status.Conditions, kueue.WorkloadPodsReady)
	if c == nil || c.Status != metav1.ConditionFalse || c.Reason != kueue.WorkloadWaitForStart {
		t.Errorf("PodsReady after requeue: %+v, want False WaitForStart", c)
	}
}
