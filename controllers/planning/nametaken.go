package planning

import (
	"fmt"
	"reflect"
	"slices"
	"strings"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	repotv1 "repot.dev/repot-operator/api/v1alpha1"
	"repot.dev/repot-operator/controllers/build"
)

// nameTakenRecheck is how soon a pass that found a child's name taken runs
// again (the deletion of the object in the way also brings one).
const nameTakenRecheck = 10 * time.Second

// TakenName is a child this evaluation could not create: an object of the
// same kind and name exists, controlled by another owner (an earlier
// evaluation of the same name whose children the garbage collector has not
// removed yet, say) or by none.
type TakenName struct {
	// Kind and Name are the child's.
	Kind, Name string
	// Owner describes the existing object's controller ("" when it has
	// none).
	Owner string
}

// NewTakenName describes child, which could not be created because
// existing, of the same kind and name, is not controlled by e.
func NewTakenName(child, existing Object) TakenName {
	t := TakenName{Kind: objectKind(child), Name: child.GetName()}
	if ref := metav1.GetControllerOf(existing); ref != nil {
		t.Owner = fmt.Sprintf("%s %s (uid %s)", ref.Kind, ref.Name, ref.UID)
	}
	return t
}

func (t TakenName) String() string {
	owner := "has no controller"
	if t.Owner != "" {
		owner = "its controller is " + t.Owner
	}
	return fmt.Sprintf("%s %s exists and %s", t.Kind, t.Name, owner)
}

// OwnedBy says whether e controls obj (its controller owner reference names
// e's UID).
func OwnedBy(e *repotv1.RepotEvaluation, obj metav1.Object) bool {
	ref := build.EvaluationController(obj)
	return ref != nil && ref.UID == e.UID
}

func objectKind(o Object) string {
	t := reflect.TypeOf(o)
	if t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	return t.Name()
}

// nameTakenMessage is the message of the ChildNameTaken stall: each object
// in the way and its owner.
func nameTakenMessage(taken []TakenName) string {
	msgs := make([]string, 0, len(taken))
	for _, t := range taken {
		msgs = append(msgs, t.String())
	}
	return Truncate("cannot create children whose names are taken by objects this evaluation does not control (an earlier RepotEvaluation of the same name whose children are still being deleted, or an object made by someone else); retrying until they are gone: "+strings.Join(msgs, "; "), 1024)
}

// planNameTaken is the planner's decision for a pass in which children
// (or Kueue Workloads) could not be created because their names are taken
// (world.NameTaken): those children are not counted as created, and the
// status shows a blocked evaluation, as for any other obstacle it cannot
// pass alone (observeConditionFacts): Reconciling False and Stalled True
// with reason ChildNameTaken naming each object and its owner, the state
// Stalled, and a Warning event with the Stalled transition. The plan asks
// for another pass soon. Nothing of the object in the way is read or
// adopted: once it is gone, the next pass creates the child. A start
// recorded for a server or runner Job that could not be created is undone
// while nothing of the evaluation ran (after is the world once this pass's
// changes are applied): the evaluation has not started, and
// spec.activeDeadlineSeconds does not count the time blocked.
func (p *Plan) planNameTaken(e *repotv1.RepotEvaluation, after *World) {
	if !hasRun(e, after) {
		p.undoStart()
	}
	p.requeueIn(nameTakenRecheck)
}

// withoutTaken drops from objs the children whose names are taken.
func withoutTaken(objs []Object, taken []TakenName) []Object {
	if len(taken) == 0 {
		return objs
	}
	out := objs[:0:0]
	for _, o := range objs {
		drop := false
		for _, t := range taken {
			if t.Kind == objectKind(o) && t.Name == o.GetName() {
				drop = true
				break
			}
		}
		if !drop {
			out = append(out, o)
		}
	}
	return out
}

// RunnerPathChildren are the children on the way to the runner Jobs of e's
// models that the world lacks (as keys: kind, namespace and name alone),
// for the models whose runner Job is due (its server answers, or it has
// none) and does not exist: their ledgers and Job, and the runner's
// identity and network policy. The shell looks each up on the API server
// (snapshot: an object someone else made need not carry the labels the
// cache selects) and puts those an object e does not control holds into
// world.NameTaken before the pass decides, so that the first plan of a
// pass already knows the runner path blocked (modelStall) and the server
// waiting on it starts its release clock. Usually a model needs the
// lookups on one pass only, the one that creates its Job. An ended
// evaluation, and a model its status recorded Done, needs none.
func RunnerPathChildren(e *repotv1.RepotEvaluation, w *World) []Object {
	if e.Status.CompletionTime != nil || e.DeletionTimestamp != nil || e.Spec.IsSuspended() {
		return nil
	}
	meta := func(name string) metav1.ObjectMeta { return metav1.ObjectMeta{Namespace: e.Namespace, Name: name} }
	var jobs []Object
	for i := range e.Spec.Models {
		m := &e.Spec.Models[i]
		job := build.RunnerJobName(e.Name, m.Name)
		if prev := previousModel(e, m.Name); w.job(job) != nil || (prev != nil && prev.Phase == repotv1.ModelDone) || !runnerDue(e, w, m) {
			continue
		}
		for _, cm := range build.LedgerConfigMaps(e, m) {
			if !w.hasLedger(cm.Name) {
				jobs = append(jobs, &corev1.ConfigMap{ObjectMeta: meta(cm.Name)})
			}
		}
		jobs = append(jobs, &batchv1.Job{ObjectMeta: meta(job)})
	}
	if len(jobs) == 0 {
		return nil
	}
	access := build.RunnerAccessName(e.Name)
	var out []Object
	if !hasNamed(w.ServiceAccounts, access) {
		out = append(out, &corev1.ServiceAccount{ObjectMeta: meta(access)})
	}
	if !hasNamed(w.Roles, access) {
		out = append(out, &rbacv1.Role{ObjectMeta: meta(access)})
	}
	if !hasNamed(w.RoleBindings, access) {
		out = append(out, &rbacv1.RoleBinding{ObjectMeta: meta(access)})
	}
	if !hasNamed(w.NetworkPolicies, access) {
		out = append(out, &networkingv1.NetworkPolicy{ObjectMeta: meta(access)})
	}
	return append(out, jobs...)
}

// runnerDue says whether model m's runner Job would be created now as far
// as its server goes: the server answers, or the model has none.
func runnerDue(e *repotv1.RepotEvaluation, w *World, m *repotv1.ModelSpec) bool {
	if !build.HasServer(m) {
		return true
	}
	d := w.deployment(build.ServerName(e.Name, m.Name))
	return d != nil && d.Status.ReadyReplicas > 0
}

// takenOnRunnerPath are the taken names (world.NameTaken) that keep model
// m's runner Job from being created: the runner's identity and network
// policy, m's ledgers and m's runner Job.
func takenOnRunnerPath(e *repotv1.RepotEvaluation, w *World, m *repotv1.ModelSpec) []TakenName {
	if len(w.NameTaken) == 0 {
		return nil
	}
	names := []string{build.RunnerAccessName(e.Name), build.RunnerJobName(e.Name, m.Name)}
	for _, cm := range build.LedgerConfigMaps(e, m) {
		names = append(names, cm.Name)
	}
	var out []TakenName
	for _, t := range w.NameTaken {
		switch t.Kind {
		case "ServiceAccount", "Role", "RoleBinding", "NetworkPolicy", "ConfigMap", "Job":
			if slices.Contains(names, t.Name) {
				out = append(out, t)
			}
		}
	}
	return out
}

// mergeTaken is the taken names observed before the pass (world.NameTaken)
// and those its creates met (Applied.NameTaken), each once.
func mergeTaken(observed, met []TakenName) []TakenName {
	out := slices.Clone(observed)
	for _, t := range met {
		if !slices.ContainsFunc(out, func(o TakenName) bool { return o.Kind == t.Kind && o.Name == t.Name }) {
			out = append(out, t)
		}
	}
	return out
}
