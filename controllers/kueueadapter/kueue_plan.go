package kueueadapter

import (
	corev1 "k8s.io/api/core/v1"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	kueue "sigs.k8s.io/kueue/apis/kueue/v1beta2"

	repotv1 "repot.dev/repot-operator/api/v1alpha1"
	"repot.dev/repot-operator/controllers/build"
)

// queueOpKind is what the controller does to a model's Workload.
type queueOpKind int

// The Workload operations of a Plan.
const (
	// QueueSubmit creates a model's Workload.
	QueueSubmit queueOpKind = iota + 1
	QueueRequeue
	QueueFinish
	// QueueDelete deletes a Workload whose model was stopped before its
	// runs were done (spec.budget): its quota is released, and a later
	// start submits a new Workload.
	QueueDelete
	// QueuePodsReady writes the PodsReady condition of an admitted
	// Workload (QueueOp.Condition), as Kueue's own job integrations do:
	// with waitForPodsReady configured, Kueue evicts an admitted Workload
	// whose PodsReady is not True within its timeout.
	QueuePodsReady
)

// QueueOp is one action on a Workload, carried out after the children.
type QueueOp struct {
	Kind     queueOpKind
	Workload *kueue.Workload
	Message  string
	// Condition is the PodsReady condition a QueuePodsReady op writes.
	Condition *metav1.Condition
}

// Gate is the Kueue side of "may this model's children exist now".
type Gate struct {
	// Allowed is true when Kueue does not admit the evaluation, or has
	// admitted the model's Workload.
	Allowed bool
	// Admission is the model's Workload as read (State admissionAbsent when
	// Kueue does not admit the evaluation).
	Admission admission
	// Op is what to do to the Workload, if anything.
	Op *QueueOp
}

// AdmissionGate decides, for one model of an evaluation, whether Kueue lets
// its children exist and what to do to its Workload. done means every run of
// the model is recorded; childrenLeft that some of its children (server,
// runner Job or their pods) still exist.
//
//   - No queue-name label: always allowed, nothing to do.
//   - Done: once its children are gone, the Workload is marked finished
//     (its quota released: the GPUs are free when Kueue counts them free).
//   - No Workload yet: create it, with the evaluation's priority;
//     nothing may exist until it is admitted. A priority class that does
//     not exist holds the Workload back (Kueue would order it wrongly).
//   - Pending, built from a spec the evaluation no longer has (it may
//     change until the start, which a queued evaluation reaches only
//     once admitted): delete it; the next pass submits one from the
//     current spec (AnnotationSpecHash).
//   - Pending: wait.
//   - Admitted: allowed, with the admitted flavors' placement.
//   - Evicted: not allowed (the children are removed); once none is left,
//     the quota is handed back so that Kueue queues the Workload again. The
//     ledgers stay, so a new admission resumes the unfinished runs only.
func AdmissionGate(e *repotv1.RepotEvaluation, m *repotv1.ModelSpec, o build.Options, qw QueueWorld, done, childrenLeft bool) Gate {
	if QueueName(e) == "" {
		return Gate{Allowed: true}
	}
	wl := qw.Workloads[m.Name]
	a := qw.Admission(m.Name)
	g := Gate{Admission: a}
	switch {
	case done:
		if wl != nil && a.State != AdmissionFinished && !childrenLeft {
			g.Op = &QueueOp{Kind: QueueFinish, Workload: wl, Message: "all runs of model " + m.Name + " are recorded"}
		}
	case a.State == admissionPending && e.Status.StartTime == nil && wl.DeletionTimestamp == nil && specChanged(wl, e, m):
		g.Op = &QueueOp{Kind: QueueDelete, Workload: wl, Message: "the spec of model " + m.Name + " changed while its Workload waited: it is submitted again from the current spec"}
	case a.State == AdmissionAbsent && qw.Priority.Problem != "":
		// Held back: a.Message says why.
	case a.State == AdmissionAbsent:
		g.Op = &QueueOp{Kind: QueueSubmit, Workload: modelWorkload(e, m, o, qw.Priority)}
	case a.State == AdmissionAdmitted:
		g.Allowed = true
	case a.State == admissionEvicted && !childrenLeft:
		g.Op = &QueueOp{Kind: QueueRequeue, Workload: wl}
	}
	return g
}

// Place applies the admitted placement of a pod set to a child's pod
// template; without Kueue (or without a placement for the set) it changes
// nothing.
func (g Gate) Place(set kueue.PodSetReference, spec *corev1.PodSpec) error {
	pl, ok := g.Admission.Placement[set]
	if !ok {
		return nil
	}
	return pl.apply(spec)
}

// StoppedGate is AdmissionGate for a model that must not run now although
// its runs are not all recorded (spec.budget stopped it): nothing of it is
// allowed, and once its children are gone its Workload is deleted, which
// releases the quota. Finishing it instead would keep a later start (a
// raised budget) from being admitted again: Kueue never admits a finished
// Workload, and the absent one is submitted anew.
func StoppedGate(e *repotv1.RepotEvaluation, m *repotv1.ModelSpec, qw QueueWorld, childrenLeft bool, why string) Gate {
	if QueueName(e) == "" {
		return Gate{}
	}
	g := Gate{Admission: qw.Admission(m.Name)}
	if wl := qw.Workloads[m.Name]; wl != nil && !childrenLeft && wl.DeletionTimestamp == nil {
		g.Op = &QueueOp{Kind: QueueDelete, Workload: wl, Message: why}
	}
	return g
}

// The messages of the PodsReady condition, Kueue's own (jobframework).
const (
	podsNotReadyMessage   = "Not all pods are ready or succeeded"
	podsRecoveringMessage = "At least one pod has failed, waiting for recovery"
	podsReadyMessage      = "All pods reached readiness and the workload is running"
)

// PodsReadyOp is the op that brings an admitted Workload's PodsReady
// condition to what its model's pods are, by the rules of Kueue's job
// integrations (jobframework's generatePodsReadyCondition), so that a
// cluster with waitForPodsReady does not evict it at its timeout:
//
//   - ready (every pod of both pod sets ready or succeeded): True, reason
//     Started, or Recovered after a WaitForRecovery;
//   - not ready, never True before: False, WaitForStart;
//   - not ready after True (a pod lost, a server restarting): False,
//     WaitForRecovery (Kueue's recoveryTimeout applies).
//
// It returns nil when the Workload already carries that type, status and
// reason: the status is written only on a change.
func PodsReadyOp(wl *kueue.Workload, ready bool, now metav1.Time) *QueueOp {
	cur := apimeta.FindStatusCondition(wl.Status.Conditions, kueue.WorkloadPodsReady)
	c := metav1.Condition{Type: kueue.WorkloadPodsReady, Status: metav1.ConditionFalse, Reason: kueue.WorkloadWaitForStart,
		Message: podsNotReadyMessage, ObservedGeneration: wl.Generation, LastTransitionTime: now}
	switch {
	case ready:
		c.Status, c.Reason, c.Message = metav1.ConditionTrue, kueue.WorkloadStarted, podsReadyMessage
		if cur != nil && (cur.Reason == kueue.WorkloadWaitForRecovery || cur.Reason == kueue.WorkloadRecovered) {
			c.Reason = kueue.WorkloadRecovered
		}
	case cur != nil && (cur.Status == metav1.ConditionTrue || cur.Reason == kueue.WorkloadWaitForRecovery):
		c.Reason, c.Message = kueue.WorkloadWaitForRecovery, podsRecoveringMessage
	}
	if cur != nil && cur.Status == c.Status && cur.Reason == c.Reason {
		return nil
	}
	return &QueueOp{Kind: QueuePodsReady, Workload: wl, Message: c.Message, Condition: &c}
}
