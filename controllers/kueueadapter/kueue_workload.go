package kueueadapter

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"sort"

	corev1 "k8s.io/api/core/v1"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	kueue "sigs.k8s.io/kueue/apis/kueue/v1beta2"

	repotv1 "repot.dev/repot-operator/api/v1alpha1"
	"repot.dev/repot-operator/controllers/build"
)

// QueueNameLabel on a RepotEvaluation names the Kueue LocalQueue (in the
// evaluation's namespace) that admits its models: each model becomes one
// Kueue Workload, and nothing of the model is created until it is admitted.
const QueueNameLabel = "kueue.x-k8s.io/queue-name"

// ComponentWorkload labels the Kueue Workload of a model.
const ComponentWorkload = "workload"

// The pod sets of a model's Workload.
const (
	// PodSetServer is the model's inference server: one pod with its GPUs.
	PodSetServer kueue.PodSetReference = "server"
	// PodSetRunners are the runner Job's shards, one pod each.
	PodSetRunners kueue.PodSetReference = "runners"
)

// QueueName returns the LocalQueue of an evaluation, or "" when Kueue does
// not admit it.
func QueueName(e *repotv1.RepotEvaluation) string { return e.Labels[QueueNameLabel] }

// AnnotationSpecHash on a model's Workload is workloadSpecHash of the
// evaluation it was built from. The spec may change until the evaluation
// starts (status.startTime), and a queued evaluation starts only once Kueue
// admitted a model: a pending Workload whose hash no longer matches the
// spec is replaced (AdmissionGate), so that Kueue never admits pod sets the
// evaluation no longer asks for.
const AnnotationSpecHash = "repot.dev/workload-spec-hash"

// workloadSpecHash hashes what a model's Workload is built from and Kueue
// decides on: the model's spec, spec.runner and spec.placement (resources,
// shards, node selection, priority class) and the queue and priority
// labels. The operator's own options (the runner image, say) are left out,
// so that an upgrade does not send pending Workloads to the back of the
// queue.
func workloadSpecHash(e *repotv1.RepotEvaluation, m *repotv1.ModelSpec) string {
	b, err := json.Marshal(struct {
		Model     *repotv1.ModelSpec
		Runner    *repotv1.RunnerSpec
		Placement *repotv1.PlacementSpec
		Queue     string
		Priority  string
	}{m, e.Spec.Runner, e.Spec.Placement, QueueName(e), e.Labels[PriorityClassLabel]})
	if err != nil {
		return ""
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:8])
}

// specChanged says whether wl was built from another spec of the model than
// e's (a Workload without the annotation, from an earlier operator, counts
// as current).
func specChanged(wl *kueue.Workload, e *repotv1.RepotEvaluation, m *repotv1.ModelSpec) bool {
	h := wl.Annotations[AnnotationSpecHash]
	return h != "" && h != workloadSpecHash(e, m)
}

// WorkloadName is the Kueue Workload of one model.
func WorkloadName(eval, model string) string { return build.ModelBase(eval, model) + "-workload" }

// modelWorkload is the Kueue Workload that admits one model as a whole: its
// server (with its GPUs) and its runner shards, as the pod templates the
// controller will create once the Workload is admitted. The Workload is
// owned by the evaluation; the controller, not a Kueue job integration,
// acts on its admission and eviction.
//
// Its priority (class and value) is the evaluation's, as Kueue's job
// integrations set it: Kueue orders the queue and preempts by it.
func modelWorkload(e *repotv1.RepotEvaluation, m *repotv1.ModelSpec, o build.Options, prio WorkloadPriority) *kueue.Workload {
	o = o.WithDefaults()
	var sets []kueue.PodSet
	if d := build.ServerDeployment(e, m, o, 1); d != nil {
		sets = append(sets, kueue.PodSet{Name: PodSetServer, Count: 1, Template: *d.Spec.Template.DeepCopy()})
	}
	j := build.RunnerJob(e, m, o, false)
	sets = append(sets, kueue.PodSet{Name: PodSetRunners, Count: *j.Spec.Parallelism, Template: *j.Spec.Template.DeepCopy()})
	meta := build.ChildMeta(e, WorkloadName(e.Name, m.Name), m.Name, ComponentWorkload)
	if meta.Annotations == nil {
		meta.Annotations = map[string]string{}
	}
	meta.Annotations[AnnotationSpecHash] = workloadSpecHash(e, m)
	return &kueue.Workload{
		ObjectMeta: meta,
		Spec: kueue.WorkloadSpec{
			QueueName:        kueue.LocalQueueName(QueueName(e)),
			PodSets:          sets,
			PriorityClassRef: prio.Ref,
			Priority:         prio.Value,
		},
	}
}

// admissionState is where a model's Workload stands with Kueue.
type admissionState int

const (
	// AdmissionAbsent means no Workload yet; the controller creates it.
	AdmissionAbsent admissionState = iota
	// admissionPending: queued, no quota reserved.
	admissionPending
	// AdmissionAdmitted means quota reserved and admitted; the model's children
	// may exist, placed by the admitted flavors.
	AdmissionAdmitted
	// admissionEvicted: Kueue evicted the Workload (preemption,
	// deactivation, ...) while it held quota; the model's children must go,
	// and once they are gone the controller hands the quota back so that
	// the Workload queues again.
	admissionEvicted
	// AdmissionFinished means the controller marked the Workload finished; its
	// quota is released.
	AdmissionFinished
)

func (s admissionState) String() string {
	return [...]string{"Absent", "Pending", "Admitted", "Evicted", "Finished"}[s]
}

// placement is what an admitted flavor asks of a pod set's pods.
type placement struct {
	NodeSelector map[string]string
	Tolerations  []corev1.Toleration
}

// admission is a model's Workload as the planner needs it.
type admission struct {
	State admissionState
	// Message is Kueue's word on the state (why pending, why evicted).
	Message string
	// Placement of each pod set, when admitted.
	Placement map[kueue.PodSetReference]placement
}

// readAdmission reads a model's Workload (nil: none yet) with the
// ResourceFlavors of the cluster by name. A flavor the admission names but
// the cluster lacks leaves the Workload pending with a message: placing the
// pods without it could put them on the wrong nodes.
func readAdmission(wl *kueue.Workload, flavors map[string]*kueue.ResourceFlavor) admission {
	if wl == nil {
		return admission{State: AdmissionAbsent}
	}
	conds := wl.Status.Conditions
	if apimeta.IsStatusConditionTrue(conds, kueue.WorkloadFinished) {
		return admission{State: AdmissionFinished, Message: conditionMessage(conds, kueue.WorkloadFinished)}
	}
	reserved := apimeta.IsStatusConditionTrue(conds, kueue.WorkloadQuotaReserved) && wl.Status.Admission != nil
	if apimeta.IsStatusConditionTrue(conds, kueue.WorkloadEvicted) {
		if reserved {
			return admission{State: admissionEvicted, Message: conditionMessage(conds, kueue.WorkloadEvicted)}
		}
		return admission{State: admissionPending, Message: conditionMessage(conds, kueue.WorkloadEvicted)}
	}
	if !reserved || !apimeta.IsStatusConditionTrue(conds, kueue.WorkloadAdmitted) {
		msg := conditionMessage(conds, kueue.WorkloadQuotaReserved)
		if msg == "" {
			msg = "waiting for Kueue to reserve quota in LocalQueue " + string(wl.Spec.QueueName)
		}
		return admission{State: admissionPending, Message: msg}
	}
	out := admission{State: AdmissionAdmitted, Placement: map[kueue.PodSetReference]placement{},
		Message: fmt.Sprintf("admitted by ClusterQueue %s", wl.Status.Admission.ClusterQueue)}
	for _, psa := range wl.Status.Admission.PodSetAssignments {
		pl, err := flavorPlacement(psa, flavors)
		if err != nil {
			return admission{State: admissionPending, Message: err.Error()}
		}
		out.Placement[psa.Name] = pl
	}
	return out
}

// flavorPlacement merges the node labels and tolerations of the flavors
// assigned to a pod set's resources.
func flavorPlacement(psa kueue.PodSetAssignment, flavors map[string]*kueue.ResourceFlavor) (placement, error) {
	var pl placement
	names := map[string]bool{}
	for _, f := range psa.Flavors {
		names[string(f)] = true
	}
	for _, name := range slices.Sorted(maps.Keys(names)) {
		rf := flavors[name]
		if rf == nil {
			return placement{}, fmt.Errorf("pod set %s is admitted with ResourceFlavor %q, which does not exist", psa.Name, name)
		}
		for k, v := range rf.Spec.NodeLabels {
			if old, ok := pl.NodeSelector[k]; ok && old != v {
				return placement{}, fmt.Errorf("pod set %s: ResourceFlavors disagree on node label %s (%q, %q)", psa.Name, k, old, v)
			}
			if pl.NodeSelector == nil {
				pl.NodeSelector = map[string]string{}
			}
			pl.NodeSelector[k] = v
		}
		for _, t := range rf.Spec.Tolerations {
			if !HasToleration(pl.Tolerations, t) {
				pl.Tolerations = append(pl.Tolerations, t)
			}
		}
	}
	return pl, nil
}

// apply adds the placement to a pod: the flavor's node labels join the
// node selector, its tolerations the tolerations. A node selector that
// already asks for another value of a flavor's label is an error (the pod
// could never run on the flavor's nodes).
func (pl placement) apply(spec *corev1.PodSpec) error {
	keys := make([]string, 0, len(pl.NodeSelector))
	for k := range pl.NodeSelector {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		v := pl.NodeSelector[k]
		if old, ok := spec.NodeSelector[k]; ok && old != v {
			return fmt.Errorf("node selector %s=%s conflicts with the admitted flavor's %s=%s", k, old, k, v)
		}
		if spec.NodeSelector == nil {
			spec.NodeSelector = map[string]string{}
		}
		spec.NodeSelector[k] = v
	}
	for _, t := range pl.Tolerations {
		if !HasToleration(spec.Tolerations, t) {
			spec.Tolerations = append(spec.Tolerations, t)
		}
	}
	return nil
}

func conditionMessage(conds []metav1.Condition, t string) string {
	if c := apimeta.FindStatusCondition(conds, t); c != nil {
		return c.Message
	}
	return ""
}

// HasToleration says whether ts holds a toleration equal to t.
func HasToleration(ts []corev1.Toleration, t corev1.Toleration) bool {
	for i := range ts {
		if ts[i].MatchToleration(&t) {
			return true
		}
	}
	return false
}
