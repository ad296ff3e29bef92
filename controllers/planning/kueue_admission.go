package planning

import (
	"fmt"
	"slices"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	repotv1 "repot.dev/repot-operator/api/v1alpha1"
	"repot.dev/repot-operator/controllers/build"
	"repot.dev/repot-operator/controllers/kueueadapter"
)

// kueueNotInstalled is the admission message of a model of an evaluation
// with the queue-name label on a cluster without Kueue.
const kueueNotInstalled = "the evaluation has the label " + kueueadapter.QueueNameLabel +
	" but Kueue's Workload API (kueue.x-k8s.io/v1beta2) was not served when the operator started: install Kueue (the operator restarts itself within a minute once the API is served), or remove the label"

// AdmittedModels is world.Admitted of a queued evaluation: the models whose
// Workload Kueue admitted. A Workload being deleted admits nothing, even
// while Kueue's finalizer keeps it, admission and all: the operator
// deleted it to hand its quota back.
func AdmittedModels(e *repotv1.RepotEvaluation, w *World) map[string]bool {
	out := make(map[string]bool, len(e.Spec.Models))
	for i := range e.Spec.Models {
		m := &e.Spec.Models[i]
		wl := w.Kueue.Workloads[m.Name]
		out[m.Name] = !w.KueueMissing && w.Kueue.Admission(m.Name).State == kueueadapter.AdmissionAdmitted &&
			wl != nil && wl.DeletionTimestamp == nil
	}
	return out
}

// planKueue adds the Workload actions of a queued evaluation to the plan
// and places the children it creates by their admitted flavors. It runs
// after planChildren (or planEnded); models are the lifecycle states of
// this pass. Once the evaluation ended, every model counts as done: its
// Workload is finished when its children are gone, so an ended evaluation
// holds no quota. It returns, by model, why a child it kept back could not
// be placed (a conflict with the admitted flavors).
//
// A model whose server was released for a stall (planStall) hands its
// quota back too: once its server is at zero replicas, its runner Job
// suspended and none of their pods left, its Workload is deleted, as a
// budget stop's is (StoppedGate), so that a resumed model is admitted
// anew. A suspended evaluation submits no Workload: the one of a released
// model is submitted when the evaluation is resumed, and its server waits
// for that admission like any other.
func (p *Plan) planKueue(e *repotv1.RepotEvaluation, w *World, o build.Options, models []modelState, ended bool) (conflicts map[string]string) {
	if kueueadapter.QueueName(e) == "" || w.KueueMissing {
		return nil
	}
	gates := map[string]kueueadapter.Gate{}
	for i := range e.Spec.Models {
		m := &e.Spec.Models[i]
		var g kueueadapter.Gate
		switch {
		case models[i].OverBudget && !models[i].Done && !ended:
			g = kueueadapter.StoppedGate(e, m, w.Kueue, modelChildrenLeft(e, w, m.Name), "model "+m.Name+" was stopped by spec.budget")
		case models[i].Active && !ended && serverReleased(e, w, m):
			g = kueueadapter.StoppedGate(e, m, w.Kueue, modelRunsPods(e, w, m.Name), "model "+m.Name+" was released for a stall")
		case !models[i].Done && !ended && e.Spec.IsSuspended():
			// Suspended: nothing of it runs, so it holds no quota either
			// (with PodsReady True, Kueue would never time it out without a
			// recoveryTimeout); resuming submits a new Workload.
			g = kueueadapter.StoppedGate(e, m, w.Kueue, modelRunsPods(e, w, m.Name), "the evaluation is suspended")
		default:
			g = kueueadapter.AdmissionGate(e, m, o, w.Kueue, models[i].Done || ended, modelChildrenLeft(e, w, m.Name))
			if g.Op != nil && g.Op.Kind == kueueadapter.QueueSubmit && e.Spec.IsSuspended() {
				g.Op = nil
			}
			if wl := w.Kueue.Workloads[m.Name]; g.Op == nil && g.Allowed && wl != nil && wl.DeletionTimestamp == nil && !models[i].Done && !ended {
				g.Op = kueueadapter.PodsReadyOp(wl, modelPodsReady(e, w, m), metav1.NewTime(w.Now))
			}
		}
		gates[m.Name] = g
		if g.Op != nil {
			p.Queue = append(p.Queue, *g.Op)
		}
		if g.Admission.State == kueueadapter.AdmissionAbsent && w.Kueue.Priority.Problem != "" {
			p.requeueIn(kueueadapter.PriorityRecheck)
		}
	}
	p.finishRemovedWorkloads(e, w)
	kept := p.Create[:0]
	for _, obj := range p.Create {
		if err := placeByAdmission(obj, gates); err != nil {
			msg := Truncate(fmt.Sprintf("%s not created: %v; change the model's nodeSelector or the ClusterQueue's flavors (a Workload admitted to a flavor whose node labels the pods cannot carry holds its quota for nothing: suspend or delete the evaluation to release it)", obj.GetName(), err), 1024)
			p.Events = append(p.Events, Event{Warning: true, Reason: repotv1.ReasonKueuePlacementConflict, Message: msg})
			if conflicts == nil {
				conflicts = map[string]string{}
			}
			if model := obj.GetLabels()[build.LabelModel]; conflicts[model] == "" {
				conflicts[model] = msg
			}
			continue
		}
		kept = append(kept, obj)
	}
	p.Create = kept
	return conflicts
}

// withPlacementConflicts gives the server view of a model whose children
// conflict with their admitted flavors (planKueue) the reason, unless the
// view has one of its own.
func withPlacementConflicts(views []serverView, conflicts map[string]string) []serverView {
	for i := range views {
		if msg := conflicts[views[i].Model]; msg != "" && views[i].Reason == "" {
			views[i].Reason, views[i].Message = repotv1.ReasonKueuePlacementConflict, msg
		}
	}
	return views
}

// placeByAdmission applies the admitted flavors' placement to a server
// Deployment or runner Job of a model; other objects are left alone.
func placeByAdmission(obj Object, gates map[string]kueueadapter.Gate) error {
	g, ok := gates[obj.GetLabels()[build.LabelModel]]
	if !ok {
		return nil
	}
	switch o := obj.(type) {
	case *appsv1.Deployment:
		if o.Labels[build.LabelComponent] == build.ComponentServer {
			return g.Place(kueueadapter.PodSetServer, &o.Spec.Template.Spec)
		}
	case *batchv1.Job:
		if o.Labels[build.LabelComponent] == build.ComponentRunner {
			return g.Place(kueueadapter.PodSetRunners, &o.Spec.Template.Spec)
		}
	}
	return nil
}

// finishRemovedWorkloads deletes the Workload of every model no longer in
// spec.models once nothing of it is left (deleteRemovedModels deletes its
// children), so that a model removed before the start holds no quota.
func (p *Plan) finishRemovedWorkloads(e *repotv1.RepotEvaluation, w *World) {
	names := make([]string, 0, len(w.Kueue.Workloads))
	for name := range w.Kueue.Workloads {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		wl := w.Kueue.Workloads[name]
		if wl == nil || slices.ContainsFunc(e.Spec.Models, func(m repotv1.ModelSpec) bool { return m.Name == name }) {
			continue
		}
		if wl.DeletionTimestamp == nil && !modelChildrenLeft(e, w, name) {
			// Deleted, not finished: Kueue never admits a finished
			// Workload again, and the model may come back to spec.models.
			p.Queue = append(p.Queue, kueueadapter.QueueOp{Kind: kueueadapter.QueueDelete, Workload: wl,
				Message: "model " + name + " was removed from spec.models"})
		}
	}
}

// modelHoldsGPUs is the one answer to "does this model hold its GPUs":
// its server Deployment exists (being deleted included) or one of its
// server pods has not ended (terminating ones included: the GPUs are not
// free until the kubelet stopped them). spec.maxParallelModels counts a
// slot taken while it is true (decideModels).
func modelHoldsGPUs(e *repotv1.RepotEvaluation, w *World, model string) bool {
	if w.deployment(build.ServerName(e.Name, model)) != nil {
		return true
	}
	return podsLeft(w.ServerPods, model)
}

// modelChildrenLeft says whether anything that holds a model's resources
// is left: what modelHoldsGPUs counts, its unfinished runner Job unless it
// is suspended, or a runner pod that has not ended. Kueue's quota covers
// both pod sets, so a model's Workload is finished only once this is false.
// A suspended Job runs no pods (the Job controller deletes them; those
// still terminating are counted as pods): the runner Job of a failed
// evaluation, which planEnded suspends and which never finishes, must not
// hold the quota for good.
func modelChildrenLeft(e *repotv1.RepotEvaluation, w *World, model string) bool {
	if modelHoldsGPUs(e, w, model) {
		return true
	}
	if j := w.job(build.RunnerJobName(e.Name, model)); j != nil && !jobFinished(j) && !ptr.Deref(j.Spec.Suspend, false) {
		return true
	}
	return podsLeft(w.RunnerPods, model)
}

// modelRunsPods says whether a model may still run a pod: its server
// Deployment is scaled above zero, its runner Job is neither suspended nor
// finished, or one of their pods has not ended (terminating ones
// included). A model released for a stall keeps its server Deployment at
// zero replicas (it carries the release) and its suspended runner Job
// (with the ledgers); its Workload is deleted once this is false.
func modelRunsPods(e *repotv1.RepotEvaluation, w *World, model string) bool {
	if d := w.deployment(build.ServerName(e.Name, model)); d != nil && ptr.Deref(d.Spec.Replicas, 1) > 0 {
		return true
	}
	if j := w.job(build.RunnerJobName(e.Name, model)); j != nil && !jobFinished(j) && !ptr.Deref(j.Spec.Suspend, false) {
		return true
	}
	return podsLeft(w.ServerPods, model) || podsLeft(w.RunnerPods, model)
}

// modelPodsReady is the PodsReady of a model's Workload (PodsReadyOp):
// every pod of its two pod sets is ready or succeeded, as Kueue counts a
// Deployment's and a Job's. The server's: all replicas of its Deployment
// ready (an external model has none). The runners': its runner Job
// finished, or ready and succeeded pods (those the Job controller has not
// counted yet included) at least the pods it runs at once (parallelism, at
// most completions). A model whose runner Job is not
// created yet (its server is starting) is not ready.
func modelPodsReady(e *repotv1.RepotEvaluation, w *World, m *repotv1.ModelSpec) bool {
	if build.HasServer(m) {
		d := w.deployment(build.ServerName(e.Name, m.Name))
		if d == nil || d.Status.ReadyReplicas < ptr.Deref(d.Spec.Replicas, 1) {
			return false
		}
	}
	j := w.job(build.RunnerJobName(e.Name, m.Name))
	if j == nil {
		return false
	}
	if jobFinished(j) {
		return true
	}
	want := ptr.Deref(j.Spec.Parallelism, 1)
	if c := j.Spec.Completions; c != nil && *c < want {
		want = *c
	}
	done := j.Status.Succeeded
	if u := j.Status.UncountedTerminatedPods; u != nil {
		done += int32(len(u.Succeeded)) // succeeded, not yet counted: Kueue counts them too
	}
	return done+ptr.Deref(j.Status.Ready, 0) >= want
}

// podsLeft says whether one of a model's pods has not ended.
func podsLeft(pods []corev1.Pod, model string) bool {
	for i := range pods {
		if pods[i].Labels[build.LabelModel] == model && pods[i].Status.Phase != corev1.PodSucceeded && pods[i].Status.Phase != corev1.PodFailed {
			return true
		}
	}
	return false
}

// releasedAdmission is the admission message of a model released for a
// stall (planKueue).
const releasedAdmission = "released for a stall: its Workload is deleted once its pods are gone, handing its quota back; " +
	"suspending and resuming the evaluation submits a new one"

// kueueStatus writes each model's admission message into the status.
func kueueStatus(st *repotv1.RepotEvaluationStatus, e *repotv1.RepotEvaluation, w *World) {
	if kueueadapter.QueueName(e) == "" {
		return
	}
	for i := range st.Models {
		ms := &st.Models[i]
		a := w.Kueue.Admission(ms.Name)
		switch {
		case w.KueueMissing:
			ms.Admission = kueueNotInstalled
		case modelReleased(e, w, ms.Name):
			ms.Admission = a.State.String() + ": " + releasedAdmission
		case a.State == kueueadapter.AdmissionAbsent && a.Message == "" && e.Spec.IsSuspended():
			ms.Admission = a.State.String() + ": no Workload is submitted while the evaluation is suspended"
		default:
			ms.Admission = a.State.String()
			if a.Message != "" {
				ms.Admission += ": " + a.Message
			}
		}
		if len(ms.Admission) > 1024 {
			ms.Admission = ms.Admission[:1021] + "..."
		}
	}
}
