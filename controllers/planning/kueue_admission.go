package planning

import (
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"

	repotv1 "repot.dev/repot-operator/api/v1alpha1"
	"repot.dev/repot-operator/controllers/build"
	"repot.dev/repot-operator/controllers/kueueadapter"
)

// kueueNotInstalled is the admission message of a model of an evaluation
// with the queue-name label on a cluster without Kueue.
const kueueNotInstalled = "the evaluation has the label " + kueueadapter.QueueNameLabel +
	" but Kueue's Workload API (kueue.x-k8s.io/v1beta2) was not served when the operator started: install Kueue (the operator restarts itself within a minute once the API is served), or remove the label"

// AdmittedModels is world.Admitted of a queued evaluation: the models whose
// Workload Kueue admitted.
func AdmittedModels(e *repotv1.RepotEvaluation, w *World) map[string]bool {
	out := make(map[string]bool, len(e.Spec.Models))
	for i := range e.Spec.Models {
		m := &e.Spec.Models[i]
		out[m.Name] = !w.KueueMissing && w.Kueue.Admission(m.Name).State == kueueadapter.AdmissionAdmitted
	}
	return out
}

// planKueue adds the Workload actions of a queued evaluation to the plan
// and places the children it creates by their admitted flavors. It runs
// after planChildren (or planEnded); models are the lifecycle states of
// this pass. Once the evaluation ended, every model counts as done: its
// Workload is finished when its children are gone, so an ended evaluation
// holds no quota.
func (p *Plan) planKueue(e *repotv1.RepotEvaluation, w *World, o build.Options, models []modelState, ended bool) {
	if kueueadapter.QueueName(e) == "" || w.KueueMissing {
		return
	}
	gates := map[string]kueueadapter.Gate{}
	for i := range e.Spec.Models {
		m := &e.Spec.Models[i]
		var g kueueadapter.Gate
		if models[i].OverBudget && !models[i].Done && !ended {
			g = kueueadapter.StoppedGate(e, m, w.Kueue, modelChildrenLeft(e, w, m), "model "+m.Name+" was stopped by spec.budget")
		} else {
			g = kueueadapter.AdmissionGate(e, m, o, w.Kueue, models[i].Done || ended, modelChildrenLeft(e, w, m))
		}
		gates[m.Name] = g
		if g.Op != nil {
			p.Queue = append(p.Queue, *g.Op)
		}
		if g.Admission.State == kueueadapter.AdmissionAbsent && w.Kueue.Priority.Problem != "" {
			p.requeueIn(kueueadapter.PriorityRecheck)
		}
	}
	kept := p.Create[:0]
	for _, obj := range p.Create {
		if err := placeByAdmission(obj, gates); err != nil {
			p.Events = append(p.Events, Event{Warning: true, Reason: "KueuePlacementConflict",
				Message: fmt.Sprintf("%s not created: %v", obj.GetName(), err)})
			continue
		}
		kept = append(kept, obj)
	}
	p.Create = kept
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

// modelChildrenLeft says whether anything that holds a model's resources
// is left: its server Deployment or unfinished runner Job, or any of its
// pods (terminating ones included: their GPUs are not free yet).
func modelChildrenLeft(e *repotv1.RepotEvaluation, w *World, m *repotv1.ModelSpec) bool {
	if w.deployment(build.ServerName(e.Name, m.Name)) != nil {
		return true
	}
	if j := w.job(build.RunnerJobName(e.Name, m.Name)); j != nil && !jobFinished(j) {
		return true
	}
	for _, pods := range [][]corev1.Pod{w.ServerPods, w.RunnerPods} {
		for i := range pods {
			if pods[i].Labels[build.LabelModel] == m.Name && pods[i].Status.Phase != corev1.PodSucceeded && pods[i].Status.Phase != corev1.PodFailed {
				return true
			}
		}
	}
	return false
}

// kueueStatus writes each model's admission message into the status.
func kueueStatus(st *repotv1.RepotEvaluationStatus, e *repotv1.RepotEvaluation, w *World) {
	if kueueadapter.QueueName(e) == "" {
		return
	}
	for i := range st.Models {
		ms := &st.Models[i]
		switch {
		case w.KueueMissing:
			ms.Admission = kueueNotInstalled
		default:
			a := w.Kueue.Admission(ms.Name)
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
