package replay

import (
	"encoding/json"
	"fmt"

	"repot.dev/repot-operator/contract"
	"repot.dev/repot-operator/envs"
)

// Result is the outcome of a verified replay.
type Result struct {
	// Prefix is the valid part of the plan, as normalized actions.
	Prefix []envs.Action
	// State is the state after Prefix.
	State envs.State
	// K is the index in the plan of the move that stopped the replay (the
	// first invalid or unnormalizable move, or the first move beyond the
	// step limit); -1 when the replay stopped at the goal or at the plan's end.
	K int
	// Error is the verifier's message for move K (or why the plan stopped
	// short), shown to the model in a repair prompt; "" at the goal.
	Error string
	// Kind is the verifier's error kind for move K, or contract.KindFormatError.
	Kind string
	// ReachedGoal reports whether State satisfies the goal.
	ReachedGoal bool
	// StopReason is one of contract.StopGoal, contract.StopInvalidMove, contract.StopFormatError,
	// contract.StopMaxSteps, contract.StopPlanExhausted, contract.StopNoPlan.
	StopReason string
	// PlanLen is the number of moves in the plan.
	PlanLen int
}

// PrefixPermille is the verified prefix fraction |prefix|/|plan| in
// thousandths, rounded half up (0 for an empty plan).
func (r Result) PrefixPermille() int {
	if r.PlanLen == 0 {
		return 0
	}
	return (2000*len(r.Prefix) + r.PlanLen) / (2 * r.PlanLen)
}

// Replay applies plan to state move by move through the problem's exact
// verifier. It stops at the first move that fails to normalize or is
// invalid, when the goal is reached, or when maxSteps moves have been
// applied and more remain. It never calls a model. A state that is already
// the goal stops the replay before the first move.
func Replay(e envs.Env, p *envs.Problem, state envs.State, goal envs.State, plan []json.RawMessage, maxSteps int) Result {
	res := Result{State: state, K: -1, PlanLen: len(plan), Prefix: []envs.Action{}}
	if e.IsGoal(state, goal) {
		res.ReachedGoal, res.StopReason = true, contract.StopGoal
		return res
	}
	if len(plan) == 0 {
		res.StopReason = contract.StopNoPlan
		res.Error = "The program printed no moves."
		return res
	}
	for i, raw := range plan {
		if len(res.Prefix) >= maxSteps {
			res.K, res.StopReason = i, contract.StopMaxSteps
			res.Error = fmt.Sprintf("The plan exceeds the step limit of %d moves without reaching the goal.", maxSteps)
			return res
		}
		a, err := e.Normalize(p, res.State, raw)
		if err != nil {
			res.K, res.StopReason, res.Kind = i, contract.StopFormatError, contract.KindFormatError
			res.Error = fmt.Sprintf("Move %d (%s) could not be read: %v", i+1, Compact(raw), err)
			return res
		}
		st := e.Step(res.State, a)
		if !st.Valid {
			res.K, res.StopReason, res.Kind = i, contract.StopInvalidMove, string(st.Kind)
			res.Error = fmt.Sprintf("Move %d (%s) is invalid: %s", i+1, Compact(raw), st.Message)
			return res
		}
		res.Prefix = append(res.Prefix, a)
		res.State = st.Next
		if e.IsGoal(res.State, goal) {
			res.ReachedGoal, res.StopReason = true, contract.StopGoal
			return res
		}
	}
	res.StopReason = contract.StopPlanExhausted
	res.Error = fmt.Sprintf("All %d moves are valid, but the goal is not reached after them.", len(plan))
	return res
}

// Resume is the plan a repair from checkpoint's verified prefix commits:
// that prefix followed by what the repair plan's replay from checkpoint's
// state (cont) verified, with cont's state, error and stop, and the two
// plans' lengths added. K stays cont's index in the repair plan. The engine
// (runner/methods) and the judge both resume through it.
func Resume(checkpoint, cont Result) Result {
	from := len(checkpoint.Prefix)
	prefix := make([]envs.Action, 0, from+len(cont.Prefix))
	prefix = append(append(prefix, checkpoint.Prefix...), cont.Prefix...)
	return Result{
		Prefix: prefix, State: cont.State, K: cont.K, Error: cont.Error, Kind: cont.Kind,
		ReachedGoal: cont.ReachedGoal, StopReason: cont.StopReason, PlanLen: from + cont.PlanLen,
	}
}

// Compact renders a raw move on one line, cut to a readable length.
func Compact(raw json.RawMessage) string {
	var v any
	s := string(raw)
	if json.Unmarshal(raw, &v) == nil {
		if b, err := json.Marshal(v); err == nil {
			s = string(b)
		}
	}
	const maxLen = 120
	if len(s) > maxLen {
		s = s[:maxLen] + "..."
	}
	return s
}

// Trace is a replay result as traces record it.
func Trace(from int, r Result) *contract.ReplayTrace {
	var state json.RawMessage
	if r.State != nil {
		if b, err := r.State.MarshalJSON(); err == nil {
			state = b
		}
	}
	return &contract.ReplayTrace{
		From: from, PrefixLen: len(r.Prefix), PlanLen: r.PlanLen, PrefixPermille: r.PrefixPermille(),
		K: r.K, Error: r.Error, Kind: r.Kind, ReachedGoal: r.ReachedGoal, StopReason: r.StopReason, State: state,
	}
}
