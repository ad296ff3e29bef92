package planning

import (
	appsv1 "k8s.io/api/apps/v1"

	repotv1 "repot.dev/repot-operator/api/v1alpha1"
	"repot.dev/repot-operator/controllers/build"
)

// modelState is the planner's decision about one model's lifecycle:
// Queued (nothing of it exists) -> Starting (server and runners created,
// server not answering yet) -> Running (its runner Job runs) -> Done (its
// runs are recorded; its server is deleted, its ledgers and results stay).
type modelState struct {
	Phase repotv1.ModelPhase
	// Active: the model holds a slot of spec.maxParallelModels and may have
	// children now.
	Active bool
	// Done: its runs are all recorded (or its runner Job completed).
	Done bool
	// Evicted: it has children but is no longer admitted (world.Admitted):
	// they are removed; its ledgers stay, so a later start resumes.
	Evicted bool
	// OverBudget: a limit of spec.budget stopped it before its runs were
	// all recorded (BudgetDecision.Stop). Its children are removed like an
	// evicted model's and nothing of it starts until the budget allows it.
	OverBudget bool
}

// admitted is the one gate that says whether a model's children may exist
// now. Without an admission system (world.Admitted nil) every model is
// admitted; with one (Kueue), only the models it admitted.
func (w *World) admitted(model string) bool {
	if w.Admitted == nil {
		return true
	}
	return w.Admitted[model]
}

// decideModels assigns each model its lifecycle state. Models that have
// children keep their slot until Done and their server is gone; free slots
// (spec.maxParallelModels, default all) go to Queued models in spec order,
// if admitted. Nothing new starts while the evaluation is suspended or once
// it ended. It is a pure function of the evaluation, the world and the
// ledgers' results, so the phases are rebuilt from the cluster on every
// pass.
//
// stop is, per model, whether spec.budget stops it (BudgetDecision.Stop;
// nil: none).
func decideModels(e *repotv1.RepotEvaluation, w *World, res EvaluationResults, ended bool, stop []bool) []modelState {
	models := e.Spec.Models
	out := make([]modelState, len(models))
	total := w.Problems.Count * len(e.Spec.MethodsOrDefault())
	used := 0
	for i := range models {
		m := &models[i]
		switch {
		case modelDone(e, w, m, res, total):
			out[i] = modelState{Phase: repotv1.ModelDone, Done: true}
			if serverDeployed(e, w, m) != nil {
				// Its server is deleted in this pass, but it holds the slot
				// (and its GPUs) until it is gone: the next model starts on
				// the pass that sees it gone, so that servers never exceed
				// the cap, even for the moment between a pass's creates and
				// its deletes.
				used++
			}
		case i < len(stop) && stop[i]:
			// Stopped by the budget: its children go, like an evicted
			// model's (planChildren), and it takes no slot.
			out[i] = modelState{Phase: repotv1.ModelQueued, Evicted: hasChildren(e, w, m), OverBudget: true}
		case hasChildren(e, w, m) && w.admitted(m.Name):
			out[i] = modelState{Active: true}
			used++
		case hasChildren(e, w, m):
			out[i] = modelState{Phase: repotv1.ModelQueued, Evicted: true}
		default:
			out[i] = modelState{Phase: repotv1.ModelQueued}
		}
	}
	limit := e.Spec.MaxParallelModelsOrAll()
	for i := range models {
		if used >= limit || ended || e.Spec.IsSuspended() {
			break
		}
		if s := &out[i]; !s.Done && !s.Active && !s.Evicted && !s.OverBudget && w.admitted(models[i].Name) {
			s.Active = true
			used++
		}
	}
	for i := range models {
		if s := &out[i]; s.Active {
			// A model given a slot on this pass is still Queued: nothing
			// of it exists yet (the status, built from the world as this
			// pass leaves it, then shows Starting once it is created).
			s.Phase = repotv1.ModelQueued
			if hasChildren(e, w, &models[i]) {
				s.Phase = repotv1.ModelStarting
			}
			if j := w.job(build.RunnerJobName(e.Name, models[i].Name)); j != nil && !jobFinished(j) && (j.Spec.Suspend == nil || !*j.Spec.Suspend) {
				s.Phase = repotv1.ModelRunning
			}
		}
	}
	return out
}

// modelDone says whether a model's runs are recorded: its runner Job
// completed, or its ledgers hold all its runs (the server is then deleted
// without waiting for the Job to wind down), or it was Done before.
func modelDone(e *repotv1.RepotEvaluation, w *World, m *repotv1.ModelSpec, res EvaluationResults, total int) bool {
	if j := w.job(build.RunnerJobName(e.Name, m.Name)); j != nil && jobCompleted(j) {
		return true
	}
	if total > 0 && res.RunsDone[m.Name] >= total {
		return true
	}
	prev := previousModel(e, m.Name)
	return prev != nil && prev.Phase == repotv1.ModelDone
}

// hasChildren says whether a model's server or unfinished runner Job exists.
func hasChildren(e *repotv1.RepotEvaluation, w *World, m *repotv1.ModelSpec) bool {
	if d := w.deployment(build.ServerName(e.Name, m.Name)); d != nil && d.DeletionTimestamp == nil {
		return true
	}
	j := w.job(build.RunnerJobName(e.Name, m.Name))
	return j != nil && j.DeletionTimestamp == nil && !jobFinished(j)
}

// previousModel is the model's entry of the last written status, or nil.
func previousModel(e *repotv1.RepotEvaluation, name string) *repotv1.ModelStatus {
	for i := range e.Status.Models {
		if e.Status.Models[i].Name == name {
			return &e.Status.Models[i]
		}
	}
	return nil
}

// deleteServer deletes a model's server Deployment and Service, releasing
// its GPUs.
func (p *Plan) deleteServer(e *repotv1.RepotEvaluation, m *repotv1.ModelSpec, w *World) {
	name := build.ServerName(e.Name, m.Name)
	if d := w.deployment(name); d != nil && d.DeletionTimestamp == nil {
		p.Delete = append(p.Delete, d.DeepCopy())
	}
	if s := w.service(name); s != nil && s.DeletionTimestamp == nil {
		p.Delete = append(p.Delete, s.DeepCopy())
	}
}

// evict removes an active model's server and runner Job (its pods go with
// it); the ledgers stay, so that a later start resumes the unfinished runs.
func (p *Plan) evict(e *repotv1.RepotEvaluation, m *repotv1.ModelSpec, w *World) {
	p.deleteServer(e, m, w)
	if j := w.job(build.RunnerJobName(e.Name, m.Name)); j != nil && j.DeletionTimestamp == nil && !jobFinished(j) {
		p.Delete = append(p.Delete, j.DeepCopy())
	}
}

// serverDeployed says whether a model's server Deployment exists.
func serverDeployed(e *repotv1.RepotEvaluation, w *World, m *repotv1.ModelSpec) *appsv1.Deployment {
	d := w.deployment(build.ServerName(e.Name, m.Name))
	if d == nil || d.DeletionTimestamp != nil {
		return nil
	}
	return d
}
