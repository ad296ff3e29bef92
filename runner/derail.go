package runner

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"slices"

	"repot.dev/repot-operator/envs"
	"repot.dev/repot-operator/runner/prompt"
	"repot.dev/repot-operator/runner/summary"
)

// DerailMethods are the methods a Derail-550 case can be run with: the
// standard suffix repair and its two ablations.
var DerailMethods = []string{summary.MethodRePoT, summary.MethodRePoTNoPrefix, summary.MethodRePoTRestart}

// DerailTask is one Derail-550 recovery case with the PuzzleZoo problem it
// derails.
type DerailTask struct {
	Case    envs.DerailCase
	Problem *envs.Problem
}

// DerailTasks pairs cases with their problems (looked up by problem_id).
func DerailTasks(cases []envs.DerailCase, problems []envs.Problem) ([]DerailTask, error) {
	byID := make(map[string]*envs.Problem, len(problems))
	for i := range problems {
		byID[problems[i].ProblemID] = &problems[i]
	}
	out := make([]DerailTask, 0, len(cases))
	for _, c := range cases {
		p, ok := byID[c.ProblemID]
		if !ok {
			return nil, fmt.Errorf("derail case %s: problem %s is not in the problem set", c.CaseID, c.ProblemID)
		}
		out = append(out, DerailTask{Case: c, Problem: p})
	}
	return out, nil
}

// DerailInfo is the derailed checkpoint a Derail run repaired from, as the
// trace records it.
type DerailInfo struct {
	CaseID        string `json:"case_id"`
	InjectionStep int    `json:"injection_step"`
	InjectionType string `json:"injection_type"`
	// Verified is the number of verified moves of the checkpoint.
	Verified int    `json:"verified"`
	Message  string `json:"message"`
}

// derailCheckpoint rebuilds the derailed trajectory of a case: the first
// InjectionStep oracle moves (which must lead to last_valid_state), then the
// injected action. A legal injected action is part of the verified prefix
// (the run must recover from injected_state); an invalid one stops the
// prefix at last_valid_state with the verifier's message, as a replay
// would. The result is the "first attempt" a repair starts from.
func derailCheckpoint(e envs.Env, t DerailTask, init envs.State) (ReplayResult, error) {
	c, p := t.Case, t.Problem
	if c.Environment != p.Environment {
		return ReplayResult{}, fmt.Errorf("derail case %s: environment %s, but problem %s is %s", c.CaseID, c.Environment, p.ProblemID, p.Environment)
	}
	if c.InjectionStep > len(p.OracleSolution) {
		return ReplayResult{}, fmt.Errorf("derail case %s: injection step %d beyond the %d-move oracle plan", c.CaseID, c.InjectionStep, len(p.OracleSolution))
	}
	res := ReplayResult{Prefix: []envs.Action{}, State: init, K: -1, PlanLen: c.InjectionStep + 1}
	for i, raw := range p.OracleSolution[:c.InjectionStep] {
		a, err := e.DecodeAction(raw)
		if err != nil {
			return ReplayResult{}, fmt.Errorf("derail case %s: oracle move %d: %v", c.CaseID, i+1, err)
		}
		st := e.Step(res.State, a)
		if !st.Valid {
			return ReplayResult{}, fmt.Errorf("derail case %s: oracle move %d is invalid: %s", c.CaseID, i+1, st.Message)
		}
		res.Prefix, res.State = append(res.Prefix, a), st.Next
	}
	if err := sameState(e, res.State, c.LastValidState); err != nil {
		return ReplayResult{}, fmt.Errorf("derail case %s: the oracle prefix does not reach last_valid_state: %v", c.CaseID, err)
	}
	k := c.InjectionStep + 1
	if a, err := e.DecodeAction(c.InjectedAction); err == nil {
		st := e.Step(res.State, a)
		if st.Valid {
			if err := sameState(e, st.Next, c.InjectedState); err != nil {
				return ReplayResult{}, fmt.Errorf("derail case %s: the injected action does not reach injected_state: %v", c.CaseID, err)
			}
			res.Prefix, res.State = append(res.Prefix, a), st.Next
			res.StopReason = StopPlanExhausted
			res.Error = fmt.Sprintf("Move %d (%s) is valid but took the plan off course; the plan ends there without reaching the goal.", k, compact(e.RawMove(a)))
			return res, nil
		}
		res.K, res.StopReason, res.Kind = k-1, StopInvalidMove, string(st.Kind)
		res.Error = fmt.Sprintf("Move %d (%s) is invalid: %s", k, compact(e.RawMove(a)), st.Message)
		return res, nil
	}
	res.K, res.StopReason, res.Kind = k-1, StopFormatError, KindFormatError
	res.Error = fmt.Sprintf("Move %d (%s) is not a valid action.", k, compact(c.InjectedAction))
	return res, nil
}

// sameState compares a state with a published one, both canonicalised.
func sameState(e envs.Env, s envs.State, want json.RawMessage) error {
	ws, err := e.DecodeState(want)
	if err != nil {
		return err
	}
	a, err := s.MarshalJSON()
	if err != nil {
		return err
	}
	b, err := ws.MarshalJSON()
	if err != nil {
		return err
	}
	if !bytes.Equal(a, b) {
		return fmt.Errorf("got %s, want %s", a, b)
	}
	return nil
}

// RunDerail runs one Derail-550 case: no first call; the derailed
// trajectory is the checkpoint, and the method's repair calls (repot: from
// the verified state; repot-no-prefix: the same without the verified tail;
// repot-restart: a whole plan from the initial state) try to reach the goal.
// The record's problem_id is the case id. Errors are as for RunProblem.
func RunDerail(ctx context.Context, deps Deps, opts Options, t DerailTask, method string) (summary.Record, Trace, error) {
	if !slices.Contains(DerailMethods, method) {
		return summary.Record{}, Trace{}, fmt.Errorf("method %q cannot run Derail cases (use %v)", method, DerailMethods)
	}
	r, err := newRun(deps, opts, t.Problem, method)
	if err != nil {
		return summary.Record{}, Trace{}, err
	}
	r.trace.ProblemID, r.trace.Environment, r.trace.Complexity = t.Case.CaseID, t.Case.Environment, t.Case.Complexity
	cp, err := derailCheckpoint(r.env, t, r.init)
	if err != nil {
		return summary.Record{}, Trace{}, err
	}
	r.derail = &DerailInfo{CaseID: t.Case.CaseID, InjectionStep: t.Case.InjectionStep, InjectionType: t.Case.InjectionType, Verified: len(cp.Prefix), Message: cp.Error}
	variant := map[string]prompt.Variant{summary.MethodRePoT: prompt.Standard, summary.MethodRePoTNoPrefix: prompt.NoPrefix, summary.MethodRePoTRestart: prompt.Restart}[method]
	final, err := r.repair(ctx, cp, variant, max(1, opts.RepairBudget))
	return r.finish(method, summary.RouteSuffixRepair, true, cp, final, err)
}
