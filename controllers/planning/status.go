package planning

import (
	"fmt"
	"strconv"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	repotv1 "repot.dev/repot-operator/api/v1alpha1"
	"repot.dev/repot-operator/controllers/build"
)

// buildStatus recomputes the whole status from the world: results from the
// ledgers, server states from the children and pods, and conditions from
// both. Only startTime and completionTime carry over from the previous
// status (they are moments, not observations).
func buildStatus(e *repotv1.RepotEvaluation, w *World, out outcome, views []serverView, models []modelState, res EvaluationResults, runners []runnerDiagnosis) repotv1.RepotEvaluationStatus {
	now := metav1.NewTime(w.Now)
	st := repotv1.RepotEvaluationStatus{
		ObservedGeneration: e.Generation,
		StartTime:          e.Status.StartTime,
		CompletionTime:     out.CompletionTime,
	}
	if st.StartTime == nil && out.Phase == phaseActive && !e.Spec.IsSuspended() {
		st.StartTime = &now
	}

	var done, infra, total int32
	ready := 0
	for i := range e.Spec.Models {
		m := &e.Spec.Models[i]
		ms := res.Models[m.Name]
		perModelTotal := int32(modelRunsTotal(e, w, m.Name))
		v := views[i]
		if v.Ready {
			ready++
		}
		mst := repotv1.ModelStatus{
			Name: m.Name,
			Server: repotv1.ServerStatus{
				State: v.State, Endpoint: Truncate(v.Endpoint, 2048), Reason: v.Reason, Message: v.Message,
			},
			RunsDone:                 int32(res.RunsDone[m.Name]),
			InfraErrorRuns:           int32(res.InfraErrors[m.Name]),
			RunsTotal:                perModelTotal,
			Methods:                  MethodResults(e, ms),
			FailedPrefixPermille:     failedPrefix(e, ms),
			RepotMinusPotRetryPoints: repotMinusPotRetry(ms),
			Phase:                    models[i].Phase,
			Derail:                   derailResults(e, res.Derail[m.Name]),
			Comparisons:              methodComparisons(ms),
		}
		t := nextModelTimes(e, w, m, models[i], v, out.Phase != phaseActive)
		mst.StartTime, mst.RunningTime, mst.CompletionTime = t.Start, t.Running, t.Completion
		mst.ServerCreatedTime, mst.ServerReadyTime, mst.ServerDeletedTime = t.ServerCreated, t.ServerReady, t.ServerDeleted
		if t.Earlier.Count > 0 {
			mst.EarlierServers = t.Earlier.DeepCopy()
		}
		mst.GPUSecondsHeld, mst.GPUSecondsIdle = gpuSeconds(t, m.ServerGPUs(), w.Records, m.Name, w.Now)
		mst.ShardsInFlight = w.ShardsInFlight[m.Name]
		if n, _ := infraRetries(e, w, m); n > 0 {
			mst.InfraRetries = int32(n)
		}
		mst.GPU = modelGPUCost(e, m, w.Ledgers, mst.Methods, build.PreviousGPU(e, m.Name), now)
		mst.Provenance = modelProvenance(e, m, w, PreviousProvenance(e, m.Name))
		done += mst.RunsDone
		infra += mst.InfraErrorRuns
		total += perModelTotal
		st.Models = append(st.Models, mst)
	}
	st.Progress = &repotv1.Progress{RunsDone: done, RunsTotal: total, Text: progressText(done, total)}
	if out.Phase == phaseComplete && infra > 0 {
		out.Message += fmt.Sprintf("; %d run(s) ended in an infrastructure error after %d retries of their runner Job and count as not finished (status models[].infraErrorRuns)", infra, MaxInfraRetries)
	}
	if out.Phase == phaseComplete && done+infra < total {
		// Every Job completed, yet the ledgers lack runs: a ledger sidecar
		// could not store them. Say so rather than claim they are recorded
		// (the next pass corrects this if the ledgers were only late).
		out.Message += fmt.Sprintf("; but %d of %d runs are missing from the ledgers: a runner's ledger writes failed (see the ledger-sync container logs) or problem ids repeat; the status counts only what the ledgers hold", total-done-infra, total)
	}
	st.Scaling = scalingStatus(res.Scaling)
	st.SandboxMode = sandboxModes(w.Ledgers)
	st.ProblemsHash = startedProblemsHash(e, st.StartTime, w.Problems)

	state, conds := evaluationConditions(e, w, out, views, models, runners)
	st.Conditions = conds
	st.Summary = &repotv1.Summary{
		State:    state,
		Servers:  fmt.Sprintf("%d/%d", ready, len(e.Spec.Models)),
		PoT:      rateColumn(e, res, string(repotv1.MethodPoT)),
		RePoT:    rateColumn(e, res, string(repotv1.MethodRePoT)),
		Adaptive: rateColumn(e, res, string(repotv1.MethodAdaptive)),
		Derail:   derailColumn(e, res),
	}
	return st
}

func progressText(done, total int32) string {
	if total == 0 {
		return strconv.Itoa(int(done)) + "/?"
	}
	return fmt.Sprintf("%d/%d", done, total)
}

// evaluationConditions derives the one-word state and every condition.
func evaluationConditions(e *repotv1.RepotEvaluation, w *World, out outcome, views []serverView, models []modelState, runners []runnerDiagnosis) (repotv1.EvaluationState, []metav1.Condition) {
	cs := newConditionSet(e.Status.Conditions, e.Generation, metav1.NewTime(w.Now))
	suspend := e.Spec.IsSuspended()
	// The servers that should be up are those of the active models.
	n, ready, queued := 0, 0, 0
	for i := range models {
		switch {
		case models[i].Active:
			n++
			if views[i].Ready {
				ready++
			}
		case !models[i].Done:
			queued++
		}
	}

	// ServersReady.
	var stalled, waiting *serverView
	for i := range views {
		if views[i].State == repotv1.ServerStalled && stalled == nil {
			stalled = &views[i]
		}
		if views[i].Reason == repotv1.ReasonWaitingForCapacity && waiting == nil {
			waiting = &views[i]
		}
	}
	switch {
	case out.Phase != phaseActive || suspend:
		cs.set(repotv1.ConditionServersReady, false, repotv1.ReasonServersStopped, "the model servers are stopped")
	case n == 0 && queued > 0:
		cs.set(repotv1.ConditionServersReady, false, repotv1.ReasonModelsQueued, fmt.Sprintf("%d model(s) wait in Queued for a slot of spec.maxParallelModels or for admission", queued))
	case n == 0:
		cs.set(repotv1.ConditionServersReady, false, repotv1.ReasonServersStopped, "every model's runs are recorded and its server deleted")
	case ready == n:
		cs.set(repotv1.ConditionServersReady, true, repotv1.ReasonServersAnswered, fmt.Sprintf("all %d running model(s) answered a completion", n))
	case stalled != nil:
		cs.set(repotv1.ConditionServersReady, false, stalled.Reason, stalled.Message)
	case waiting != nil:
		cs.set(repotv1.ConditionServersReady, false, waiting.Reason, waiting.Message)
	default:
		cs.set(repotv1.ConditionServersReady, false, repotv1.ReasonServersStarting, fmt.Sprintf("%d of %d model(s) answered a completion; waiting for %s", ready, n, strings.Join(notReady(views, models), ", ")))
	}

	// Running.
	active := activeJobs(e, w)
	switch {
	case out.Phase != phaseActive:
		cs.set(repotv1.ConditionRunning, false, repotv1.ReasonRunnersFinished, "the evaluation ended")
	case suspend:
		cs.set(repotv1.ConditionRunning, false, repotv1.ReasonSuspended, "spec.suspend is true: runners are suspended and servers scaled to zero; resuming continues from the ledgers")
	case active > 0:
		cs.set(repotv1.ConditionRunning, true, repotv1.ReasonRunnersActive, fmt.Sprintf("%d of %d runner Job(s) running", active, n))
	default:
		cs.set(repotv1.ConditionRunning, false, repotv1.ReasonWaitingForServers, "runner Jobs start once their model's server is ready")
	}

	// Complete, Failed and the kstatus conditions.
	stallReason, stallMsg := "", ""
	switch {
	case w.Problems.Unavailable != "":
		stallReason, stallMsg = repotv1.ReasonProblemsUnavailable, w.Problems.Unavailable
	case stalled != nil:
		stallReason, stallMsg = repotv1.ReasonServerStalled, stalled.Message
	default:
		for _, d := range runners {
			if d.Cause != "" {
				stallReason, stallMsg = d.Cause, d.Message
				break
			}
		}
	}
	switch out.Phase {
	case phaseComplete:
		cs.set(repotv1.ConditionComplete, true, out.Reason, out.Message)
		cs.set(repotv1.ConditionFailed, false, repotv1.ReasonAllRunsRecorded, "the evaluation completed")
		cs.set(repotv1.ConditionReady, true, out.Reason, out.Message)
		cs.set(repotv1.ConditionReconciling, false, repotv1.ReasonReconciled, "nothing left to do")
		cs.set(repotv1.ConditionStalled, false, repotv1.ReasonReconciled, "nothing left to do")
		return repotv1.StateComplete, cs.out
	case phaseFailed:
		cs.set(repotv1.ConditionComplete, false, repotv1.ReasonFailed, out.Message)
		cs.set(repotv1.ConditionFailed, true, out.Reason, out.Message)
		cs.set(repotv1.ConditionReady, false, repotv1.ReasonFailed, out.Message)
		cs.set(repotv1.ConditionReconciling, false, repotv1.ReasonReconciled, "the evaluation failed")
		cs.set(repotv1.ConditionStalled, true, repotv1.ReasonFailed, out.Message)
		return repotv1.StateFailed, cs.out
	}
	inProgress := "runs are still missing from the ledgers"
	cs.set(repotv1.ConditionComplete, false, repotv1.ReasonInProgress, inProgress)
	cs.set(repotv1.ConditionFailed, false, repotv1.ReasonInProgress, inProgress)
	cs.set(repotv1.ConditionReady, false, repotv1.ReasonInProgress, inProgress)
	switch {
	case suspend:
		cs.set(repotv1.ConditionReconciling, false, repotv1.ReasonSuspended, "spec.suspend is true")
		cs.set(repotv1.ConditionStalled, false, repotv1.ReasonSuspended, "spec.suspend is true")
		return repotv1.StateSuspended, cs.out
	case stallReason != "":
		cs.set(repotv1.ConditionReconciling, false, stallReason, stallMsg)
		cs.set(repotv1.ConditionStalled, true, stallReason, stallMsg)
		return repotv1.StateStalled, cs.out
	}
	if waiting != nil {
		// Capacity, not failure: GitOps tools read Reconciling as progress.
		cs.set(repotv1.ConditionReconciling, true, repotv1.ReasonWaitingForCapacity, waiting.Message)
		cs.set(repotv1.ConditionStalled, false, repotv1.ReasonWaitingForCapacity, "waiting for capacity is not stalled until spec.stalledAfterSeconds passed")
	} else {
		cs.set(repotv1.ConditionReconciling, true, repotv1.ReasonInProgress, inProgress)
		cs.set(repotv1.ConditionStalled, false, repotv1.ReasonInProgress, "no known obstacle")
	}
	// From its first recorded run until its last, an evaluation reads
	// Running: a sweep between one model's server and the next one's has no
	// runner active, yet it is not back to Pending (the per-model phases
	// say which model waits for what).
	if active > 0 || len(w.Records) > 0 {
		return repotv1.StateRunning, cs.out
	}
	return repotv1.StatePending, cs.out
}

func notReady(views []serverView, models []modelState) []string {
	var out []string
	for i, v := range views {
		if models[i].Active && !v.Ready {
			out = append(out, v.Model)
		}
	}
	return out
}

// activeJobs counts the evaluation's runner Jobs that exist, are not
// suspended and have not finished.
func activeJobs(e *repotv1.RepotEvaluation, w *World) int {
	n := 0
	for i := range e.Spec.Models {
		j := w.job(build.RunnerJobName(e.Name, e.Spec.Models[i].Name))
		if j != nil && !jobFinished(j) && (j.Spec.Suspend == nil || !*j.Spec.Suspend) {
			n++
		}
	}
	return n
}
