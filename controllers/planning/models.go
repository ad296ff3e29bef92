package planning

import (
	"time"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"

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
	used := 0
	for i := range models {
		m := &models[i]
		switch {
		case modelDone(e, w, m, res, modelRunsTotal(e, w, m.Name)):
			out[i] = modelState{Phase: repotv1.ModelDone, Done: true}
			if modelHoldsGPUs(e, w, m.Name) {
				// Its server is deleted in this pass, but it holds the slot
				// (and its GPUs) until it and its pods are gone,
				// terminating ones included: the next model starts on the
				// pass that sees them gone, so that servers never exceed
				// the cap, even for a server pod's grace period.
				used++
			}
		case i < len(stop) && stop[i]:
			// Stopped by the budget: its children go, like an evicted
			// model's (planChildren), and it takes no slot.
			out[i] = modelState{Phase: repotv1.ModelQueued, Evicted: hasChildren(e, w, m), OverBudget: true}
		case hasChildren(e, w, m) && (w.admitted(m.Name) || serverReleased(e, w, m)):
			// A model released for a stall keeps its slot and its
			// children (its server at zero replicas carries the release)
			// after its Workload was deleted to hand its quota back
			// (planKueue): it is not evicted, and it starts again only
			// once resumed and admitted anew.
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
			j := w.job(build.RunnerJobName(e.Name, models[i].Name))
			if j != nil && !jobFinished(j) && (j.Spec.Suspend == nil || !*j.Spec.Suspend) {
				s.Phase = repotv1.ModelRunning
			}
			if n, _ := storedInfraRetries(e, &models[i]); s.Phase == repotv1.ModelStarting && !e.Spec.IsSuspended() &&
				(infraRetryDue(e, w, &models[i], res) || j == nil && n > 0) {
				// Between a runner Job that completed with infrastructure
				// errors and its retry.
				s.Phase = repotv1.ModelRunning
			}
		}
	}
	return out
}

// modelDone says whether a model's runs are recorded: every run finished
// in its ledgers (the server is then deleted without waiting for the Job to
// wind down), or its runner Job completed with no run left to retry for an
// infrastructure error (infraRetryDue), or it was Done before.
func modelDone(e *repotv1.RepotEvaluation, w *World, m *repotv1.ModelSpec, res EvaluationResults, total int) bool {
	if jobSettled(e, w, m, res) {
		return true
	}
	if total > 0 && res.RunsDone[m.Name] >= total {
		return true
	}
	prev := previousModel(e, m.Name)
	return prev != nil && prev.Phase == repotv1.ModelDone
}

// jobSettled says whether a model's runner Job ended its runs for good: it
// completed, is not being deleted (an infrastructure retry deletes it), and
// has no infrastructure retry due. Its runner waits for the ledger to
// confirm every record before it exits, so a completed Job's records are in
// the ledgers (the operator's cache of them may lag the Job's by the
// difference of two watches).
func jobSettled(e *repotv1.RepotEvaluation, w *World, m *repotv1.ModelSpec, res EvaluationResults) bool {
	j := w.job(build.RunnerJobName(e.Name, m.Name))
	if j == nil || j.DeletionTimestamp != nil {
		return false
	}
	return jobCondition(j, batchv1.JobComplete) != nil && !infraRetryDue(e, w, m, res)
}

// MaxInfraRetries is how many times a model's runner Job runs again for
// the runs that ended in an infrastructure error (the runner's --resume
// runs exactly those) before the model counts as Done with them.
const MaxInfraRetries = 2

// infraRetries is how many times the model's runner Job was run again for
// infrastructure errors, and the UID of the completed Job the last retry
// was counted for: the count this plan makes (planInfraRetry) or else
// the one of the stored status (status.models[].infraRetries and
// infraRetryJobUID). The count lives in the status, not on a ledger: the
// runner may patch its ledgers, annotations included, and must not reset
// its own retries. It is not rebuilt from the world, as the results are:
// like startTime, runsTotal and a Done phase, it is carried from each
// status to the next (buildStatus). An evaluation restored without its
// status loses it, which costs at most MaxInfraRetries more retries of
// each model.
func (p *Plan) infraRetries(e *repotv1.RepotEvaluation, m *repotv1.ModelSpec) (n int, forJob string) {
	if c, ok := p.infraRetry[m.Name]; ok {
		return c.n, c.forJob
	}
	return storedInfraRetries(e, m)
}

// storedInfraRetries is infraRetries as the stored status records them.
func storedInfraRetries(e *repotv1.RepotEvaluation, m *repotv1.ModelSpec) (n int, forJob string) {
	prev := previousModel(e, m.Name)
	if prev == nil {
		return 0, ""
	}
	return max(0, int(prev.InfraRetries)), prev.InfraRetryJobUID
}

// infraRetryCount is a model's infrastructure retries as a plan counts
// them (Plan.infraRetry).
type infraRetryCount struct {
	n      int
	forJob string
}

// infraRetryDue says whether the model's completed runner Job is to run
// again: some of its runs ended in an infrastructure error and the retries
// are not spent (or this Job's retry is already counted).
func infraRetryDue(e *repotv1.RepotEvaluation, w *World, m *repotv1.ModelSpec, res EvaluationResults) bool {
	j := w.job(build.RunnerJobName(e.Name, m.Name))
	if j == nil || !jobCompleted(j) || j.DeletionTimestamp != nil || res.InfraErrors[m.Name] == 0 ||
		!w.hasLedger(build.LedgerName(e.Name, m.Name, 0)) {
		return false
	}
	n, forJob := storedInfraRetries(e, m)
	return forJob == string(j.UID) || n < MaxInfraRetries
}

// infraRetryAfter is when the pass that counts an infrastructure retry
// looks again, to delete the Job: its status write brings no watch event
// (the controller ignores its own status writes).
const infraRetryAfter = time.Second

// planInfraRetry runs a completed runner Job again for its runs that ended
// in an infrastructure error, in two passes so that each retry is counted
// exactly once: first the count in the status goes up, marked with the
// completed Job's UID (this plan's status); the pass that observes the mark
// in the stored status deletes the Job, and planJob creates it anew once
// it is gone (its runner resumes from the ledgers and runs only the
// unfinished runs).
func (p *Plan) planInfraRetry(e *repotv1.RepotEvaluation, w *World, m *repotv1.ModelSpec) {
	j := w.job(build.RunnerJobName(e.Name, m.Name))
	if j == nil || !w.hasLedger(build.LedgerName(e.Name, m.Name, 0)) {
		return
	}
	n, forJob := storedInfraRetries(e, m)
	if forJob == string(j.UID) {
		p.Delete = append(p.Delete, j.DeepCopy())
		return
	}
	if p.infraRetry == nil {
		p.infraRetry = map[string]infraRetryCount{}
	}
	p.infraRetry[m.Name] = infraRetryCount{n: n + 1, forJob: string(j.UID)}
	p.requeueIn(infraRetryAfter)
}

// modelRunsTotal is a model's run total: problems x methods, as recorded in
// the status once the evaluation started, so that a later change to the
// problem set (or its ConfigMap going) cannot make a finished model
// unfinished; before the start, and for a model not yet in the status,
// the current problem set's.
func modelRunsTotal(e *repotv1.RepotEvaluation, w *World, model string) int {
	if prev := previousModel(e, model); prev != nil && prev.RunsTotal > 0 && e.Status.StartTime != nil {
		return int(prev.RunsTotal)
	}
	return w.Problems.Count * len(e.Spec.MethodsOrDefault())
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
