package methods

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"repot.dev/repot-operator/contract"
	"repot.dev/repot-operator/contract/prompt"
	"repot.dev/repot-operator/contract/replay"
	"repot.dev/repot-operator/envs"
)

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

// CheckStatement returns the checkpoint statement s, or its default when s
// is empty; an unknown statement is an error.
func CheckStatement(s string) (string, error) {
	switch s {
	case "":
		return contract.StatementPaper, nil
	case contract.StatementPaper, contract.StatementFull:
		return s, nil
	}
	return "", fmt.Errorf("checkpoint statement %q: use %q (the paper's one sentence) or %q", s, contract.StatementPaper, contract.StatementFull)
}

// derailPrefix checks a case against its problem: the first InjectionStep
// oracle moves are valid and lead to last_valid_state, and a decodable
// injected action applied there leads to injected_state (for an
// invalid_action case injected_state must equal last_valid_state). It
// returns the oracle moves as actions.
func derailPrefix(e envs.Env, t DerailTask) ([]envs.Action, envs.State, error) {
	c, p := t.Case, t.Problem
	if c.Environment != p.Environment {
		return nil, nil, fmt.Errorf("derail case %s: environment %s, but problem %s is %s", c.CaseID, c.Environment, p.ProblemID, p.Environment)
	}
	if c.InjectionStep > len(p.OracleSolution) {
		return nil, nil, fmt.Errorf("derail case %s: injection step %d beyond the %d-move oracle plan", c.CaseID, c.InjectionStep, len(p.OracleSolution))
	}
	s, err := p.Initial()
	if err != nil {
		return nil, nil, fmt.Errorf("derail case %s: problem %s: %w", c.CaseID, p.ProblemID, err)
	}
	var prefix []envs.Action
	for i, raw := range p.OracleSolution[:c.InjectionStep] {
		a, err := e.DecodeAction(raw)
		if err != nil {
			return nil, nil, fmt.Errorf("derail case %s: oracle move %d: %v", c.CaseID, i+1, err)
		}
		st := e.Step(s, a)
		if !st.Valid {
			return nil, nil, fmt.Errorf("derail case %s: oracle move %d is invalid: %s", c.CaseID, i+1, st.Message)
		}
		prefix, s = append(prefix, a), st.Next
	}
	if err := sameState(e, s, c.LastValidState); err != nil {
		return nil, nil, fmt.Errorf("derail case %s: the oracle prefix does not reach last_valid_state: %v", c.CaseID, err)
	}
	if a, err := e.DecodeAction(c.InjectedAction); err == nil {
		if st := e.Step(s, a); st.Valid {
			if err := sameState(e, st.Next, c.InjectedState); err != nil {
				return nil, nil, fmt.Errorf("derail case %s: the injected action does not reach injected_state: %v", c.CaseID, err)
			}
			return prefix, s, nil
		}
	}
	if err := sameState(e, s, c.InjectedState); err != nil {
		return nil, nil, fmt.Errorf("derail case %s: the injected action is not legal, yet injected_state is not last_valid_state: %v", c.CaseID, err)
	}
	return prefix, s, nil
}

// CheckpointProblem is the case's checkpoint problem (REPOT.md section 7):
// the source problem starting at last_valid_state (the injected action is
// NOT applied), the same goal, the oracle suffix from k, min_steps its
// length and max_steps max(source max_steps, 3 x suffix). Its statement is
// the paper's one sentence (statement "paper": no checkpoint state, no
// rules, no move format, and no initial state in the prompt) or, with
// "full", the source statement's rules and move format with the
// checkpoint state as the start.
func CheckpointProblem(t DerailTask, statement string) (*envs.Problem, error) {
	statement, err := CheckStatement(statement)
	if err != nil {
		return nil, err
	}
	e, err := t.Problem.Env()
	if err != nil {
		return nil, err
	}
	if _, _, err := derailPrefix(e, t); err != nil {
		return nil, err
	}
	src, c := t.Problem, t.Case
	suffix := src.OracleSolution[c.InjectionStep:]
	cp := &envs.Problem{
		ProblemID:      src.ProblemID + "@checkpoint",
		Environment:    src.Environment,
		Complexity:     src.Complexity,
		InitialState:   compactRaw(c.LastValidState),
		GoalState:      src.GoalState,
		OracleSolution: suffix,
		MinSteps:       len(suffix),
		MaxSteps:       max(src.MaxSteps, 3*len(suffix)),
		Metadata:       src.Metadata,
	}
	switch statement {
	case contract.StatementPaper:
		cp.NaturalLanguagePrompt = fmt.Sprintf("Continue this %s puzzle from the checkpoint state and reach the goal state %s.", src.Environment, compactRaw(src.GoalState))
		cp.HideInitialState = true
	default:
		cp.NaturalLanguagePrompt = fmt.Sprintf("Continue this %s puzzle from a checkpoint. The rules and the answer format are those of the original puzzle below; "+
			"only its starting arrangement is replaced: start from the checkpoint state %s, not from the original start.\n\nOriginal puzzle:\n%s",
			src.Environment, compactRaw(c.LastValidState), src.NaturalLanguagePrompt)
	}
	return cp, nil
}

func compactRaw(raw json.RawMessage) json.RawMessage {
	var b bytes.Buffer
	if err := json.Compact(&b, raw); err != nil {
		return raw
	}
	return json.RawMessage(b.Bytes())
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

// RunDerail runs one Derail-550 case under one condition and returns a
// schema-2 record (Method is the condition, ProblemID the case id):
//
//   - no_feedback, error_only, state_feedback, state_plus_legal_actions: one
//     call with the recovery prompt, judged by JudgeReply from
//     last_valid_state;
//   - repot-full: a whole repot run (first PoT call, then repair) on the
//     checkpoint problem; repot-no-prefix: the same with the verified tail
//     hidden from the repair prompt; repot-restart: a whole repot run on the
//     source problem from its initial state.
//
// opts.CheckpointStatement selects the checkpoint problem's statement
// ("paper" by default, or "full"). Errors are as for RunProblem.
func RunDerail(ctx context.Context, deps Deps, opts Options, t DerailTask, condition string) (contract.Record, contract.Trace, error) {
	statement, err := CheckStatement(opts.CheckpointStatement)
	if err != nil {
		return contract.Record{}, contract.Trace{}, err
	}
	info := &contract.DerailInfo{CaseID: t.Case.CaseID, ProblemID: t.Problem.ProblemID, InjectionStep: t.Case.InjectionStep,
		InjectionType: t.Case.InjectionType, Condition: condition, CheckpointStatement: statement}
	var rec contract.Record
	var tr contract.Trace
	switch condition {
	case contract.CondRePoTFull, contract.CondRePoTNoPrefix:
		cp, cerr := CheckpointProblem(t, statement)
		if cerr != nil {
			return contract.Record{}, contract.Trace{}, cerr
		}
		method := contract.MethodRePoT
		if condition == contract.CondRePoTNoPrefix {
			method = contract.MethodRePoTNoPrefix
		}
		rec, tr, err = RunProblem(ctx, deps, opts, cp, method)
	case contract.CondRePoTRestart:
		rec, tr, err = RunProblem(ctx, deps, opts, t.Problem, contract.MethodRePoT)
	case contract.CondNoFeedback, contract.CondErrorOnly, contract.CondStateFeedback, contract.CondStateLegal:
		rec, tr, err = runPrompted(ctx, deps, opts, t, condition, info)
	case contract.CondStateGuard:
		rec, tr, err = runStateGuard(ctx, deps, opts, t)
	case contract.CondVEXFull, contract.CondVEXNoPrefix, contract.CondVEXRestart:
		rec, tr, err = runVEXCondition(ctx, deps, opts, t, condition)
	default:
		return contract.Record{}, contract.Trace{}, fmt.Errorf("condition %q is not a Derail-550 condition (use %v)", condition, contract.DerailConditions)
	}
	// An aborted attempt is named like the condition's records.
	if err != nil && !(errors.Is(err, ErrAborted) && rec.Aborted) {
		return rec, tr, err
	}
	rec.ProblemID, rec.Method = t.Case.CaseID, condition
	rec.Environment, rec.Complexity = t.Case.Environment, t.Case.Complexity
	if rec.Derail == nil {
		rec.Derail = &contract.DerailRecord{}
	}
	rec.Derail.Schema, rec.Derail.CheckpointStatement, rec.Derail.InjectionType = contract.DerailSchema, statement, t.Case.InjectionType
	rec.CapTexts()
	tr.ProblemID, tr.Method = t.Case.CaseID, condition
	tr.Environment, tr.Complexity = t.Case.Environment, t.Case.Complexity
	tr.Metadata.Derail = info
	return rec, tr, err
}

// recoveryFor is what the prompt of a prompted condition carries (REPOT.md
// section 7): always the k verified oracle moves, the injected move as the
// trace's next move and injected_state as its current state; error_only
// adds that the move or state was flagged; state_feedback adds
// last_valid_state as the checkpoint; state_plus_legal_actions adds the
// legal moves from it.
func recoveryFor(e envs.Env, t DerailTask, prefix []envs.Action, checkpoint envs.State, condition string) prompt.Recovery {
	r := prompt.Recovery{Trace: make([]json.RawMessage, 0, len(prefix)), Current: compactRaw(t.Case.InjectedState)}
	for _, a := range prefix {
		r.Trace = append(r.Trace, e.RawMove(a))
	}
	r.Next = compactRaw(t.Case.InjectedAction)
	if a, err := e.DecodeAction(t.Case.InjectedAction); err == nil {
		r.Next = e.RawMove(a)
	}
	switch condition {
	case contract.CondErrorOnly:
		r.Flagged = true
	case contract.CondStateFeedback, contract.CondStateLegal:
		r.Flagged, r.Checkpoint = true, compactRaw(t.Case.LastValidState)
		if condition == contract.CondStateLegal {
			r.Legal = []json.RawMessage{}
			for _, a := range e.Legal(checkpoint) {
				r.Legal = append(r.Legal, e.RawMove(a))
			}
		}
	}
	return r
}

// runPrompted makes a prompted condition's one call and judges the reply.
func runPrompted(ctx context.Context, deps Deps, opts Options, t DerailTask, condition string, info *contract.DerailInfo) (contract.Record, contract.Trace, error) {
	r, err := newRun(deps, opts, t.Problem, condition)
	if err != nil {
		return contract.Record{}, contract.Trace{}, err
	}
	prefix, checkpoint, err := derailPrefix(r.env, t)
	if err != nil {
		return contract.Record{}, contract.Trace{}, err
	}
	msgs := prompt.RecoveryPrompt(t.Problem, recoveryFor(r.env, t, prefix, checkpoint, condition))
	ct, resp, err := r.complete(ctx, contract.PurposeRecovery, msgs)
	if err != nil {
		return r.finish(condition, contract.RouteNoExtraCall, false, replay.Result{}, replay.Result{}, err)
	}
	j := JudgeReply(r.env, r.p, checkpoint, r.goal, resp.Content)
	info.Candidates, info.Chosen = make([]contract.JudgedCandidate, len(j.Candidates)), &j.Chosen
	for i, c := range j.Candidates {
		info.Candidates[i] = c.JudgedCandidate
	}
	res := replay.Result{Prefix: []envs.Action{}, State: checkpoint, K: -1}
	if j.Chosen >= 0 {
		c := j.Candidates[j.Chosen]
		ct.Plan = c.raw
		res.PlanLen, res.State, res.K, res.Kind, res.Error = c.Moves, c.state, c.k, c.kind, c.Error
		res.Prefix = make([]envs.Action, c.Valid) // only its length is reported
		res.ReachedGoal, res.StopReason = j.Success, c.StopReason
	} else {
		res.StopReason, res.Error = contract.StopNoPlan, "The reply holds no move list."
		if resp.FinishReason == "length" {
			res.StopReason = contract.StopTruncated
		}
		ct.ParseError = res.Error
	}
	if j.Success {
		res.StopReason = contract.StopGoal
	}
	ct.Replay, ct.Outcome = replay.Trace(0, res), res.StopReason
	r.trace.Calls = append(r.trace.Calls, *ct)
	// The candidates and the chosen one are in the trace (info); the
	// record stays small, as the ledgers hold thousands of them.
	return r.finish(condition, contract.RouteNoExtraCall, false, res, res, nil)
}
