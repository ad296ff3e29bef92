package planning

import (
	"fmt"
	"strconv"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	repotv1 "repot.dev/repot-operator/api/v1alpha1"
	"repot.dev/repot-operator/controllers/build"
)

// buildStatus recomputes the whole status from the world: results from the
// ledgers, server states from the children and pods, and conditions from
// both. Only startTime, deadlineStartTime and completionTime carry over
// from the previous status (they are moments, not observations), and the operator's own
// counter of each model's infrastructure retries, which retries gives
// (Plan.infraRetries: the stored count, or the one this plan counts).
func buildStatus(e *repotv1.RepotEvaluation, w *World, out outcome, views []serverView, models []modelState, res EvaluationResults, runners []runnerDiagnosis,
	retries func(*repotv1.ModelSpec) (int, string)) repotv1.RepotEvaluationStatus {
	now := metav1.NewTime(w.Now)
	st := repotv1.RepotEvaluationStatus{
		ObservedGeneration: e.Generation,
		StartTime:          e.Status.StartTime,
		CompletionTime:     out.CompletionTime,
	}
	// The evaluation starts with its first child that costs something: a
	// server Deployment or a runner Job (w is the world once this pass's
	// creates are applied). The runner's identity, its NetworkPolicies and a
	// queued model's Workload do not start it: a queued evaluation waits for
	// Kueue with its spec editable and its deadline not yet counting.
	if st.StartTime == nil && out.Phase == phaseActive && !e.Spec.IsSuspended() && hasCostlyChildren(w) {
		st.StartTime = &now
	}
	st.DeadlineStartTime = deadlineStart(e, w, out, res, st.StartTime)

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
		if n, forJob := retries(m); n > 0 {
			mst.InfraRetries, mst.InfraRetryJobUID = int32(n), forJob
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

// evaluationConditions derives the one-word state and every condition, in
// the status's order, each from its own function of the same facts.
func evaluationConditions(e *repotv1.RepotEvaluation, w *World, out outcome, views []serverView, models []modelState, runners []runnerDiagnosis) (repotv1.EvaluationState, []metav1.Condition) {
	f := observeConditionFacts(e, w, out, views, models, runners)
	cs := newConditionSet(e.Status.Conditions, e.Generation, metav1.NewTime(w.Now))
	for _, c := range []struct {
		typ string
		of  func(*conditionFacts) conditionValue
	}{
		{repotv1.ConditionServersReady, serversReadyCondition},
		{repotv1.ConditionRunning, runningCondition},
		{repotv1.ConditionComplete, completeCondition},
		{repotv1.ConditionFailed, failedCondition},
		{repotv1.ConditionReady, readyCondition},
		{repotv1.ConditionReconciling, reconcilingCondition},
		{repotv1.ConditionStalled, stalledCondition},
	} {
		v := c.of(f)
		cs.set(c.typ, v.Status, v.Reason, v.Message)
	}
	return evaluationState(f), cs.out
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
