package methods

import (
	"context"
	"encoding/json"
	"fmt"

	"repot.dev/repot-operator/contract"
	"repot.dev/repot-operator/contract/program"
	"repot.dev/repot-operator/contract/prompt"
	"repot.dev/repot-operator/contract/replay"
	"repot.dev/repot-operator/envs"
	"repot.dev/repot-operator/runner/model"
)

func init() {
	register(contract.MethodVEX, behaviour{own: vex})
}

// maxBlockedPerState caps the moves remembered as rejected at one state
// (the reference's per-state tabu list).
const maxBlockedPerState = 5

// vexSettings are a run's resolved VEX options.
type vexSettings struct {
	budget   int
	size     int
	proposer string
	hide     bool
}

// vexSettings resolves r.opts.VEX for the run's environment: a zero or
// missing value falls back to DefaultVEXOptions, then to DefaultChunkSize
// and the JSON proposer.
func (r *run) vexSettings() vexSettings {
	d, o, env := DefaultVEXOptions(), r.opts.VEX, r.p.Environment
	s := vexSettings{budget: o.MaxLLMCalls, size: o.ChunkSize[env], proposer: o.Proposer[env], hide: o.HidePrefix}
	if s.budget <= 0 {
		s.budget = d.MaxLLMCalls
	}
	if s.size <= 0 {
		s.size = d.ChunkSize[env]
	}
	if s.size <= 0 {
		s.size = DefaultChunkSize
	}
	if s.proposer != ProposerJSON && s.proposer != ProposerCode {
		s.proposer = d.Proposer[env]
	}
	if s.proposer == "" {
		s.proposer = ProposerJSON
	}
	return s
}

// blockedMove is a move the verifier rejected at a state.
type blockedMove struct {
	sig  string
	move json.RawMessage
	msg  string
}

func isBlocked(bs []blockedMove, sig string) bool {
	for _, b := range bs {
		if b.sig == sig {
			return true
		}
	}
	return false
}

// jsonKey is the canonical JSON of a state or an action ("" if it does not
// encode).
func jsonKey(v json.Marshaler) string {
	b, err := v.MarshalJSON()
	if err != nil {
		return ""
	}
	return string(b)
}

// vex is verified execution (the reference's VEXExecutor): while the
// verified state is not the goal and calls remain, one call proposes a
// chunk of moves from the verified state; the moves are checked in order
// and committed until one fails to normalize or is rejected (a rollback:
// the rest of the chunk is dropped). A move already rejected at the state
// it would apply to is skipped silently; a rejected move joins its state's
// blocked list (at most 5, no duplicates), which later prompts show. A
// reply that gives no moves uses its call. The verifier's last message is
// shown in the next prompt and cleared by a chunk that commits a move. The
// run also stops when the problem's max_steps moves are committed.
func vex(ctx context.Context, r *run, method string) (contract.Record, contract.Trace, error) {
	cfg := r.vexSettings()
	stats := &contract.VEXStats{Proposer: cfg.proposer, ChunkSize: cfg.size}
	state := r.init
	committed := []envs.Action{}
	blocked := map[string][]blockedMove{}
	lastErr := ""
	var first replay.Result
	haveFirst := false
	stop := ""
	var runErr error
	for {
		if r.env.IsGoal(state, r.goal) {
			stop = contract.StopGoal
			break
		}
		if stats.LLMCalls >= cfg.budget {
			stop = contract.StopCallBudget
			break
		}
		if len(committed) >= r.maxSteps {
			stop = contract.StopMaxSteps
			break
		}
		key := jsonKey(state)
		shown := make([]prompt.BlockedMove, 0, len(blocked[key]))
		for _, b := range blocked[key] {
			shown = append(shown, prompt.BlockedMove{Move: b.move, Message: b.msg})
		}
		ch, err := prompt.NewChunk(r.env, cfg.proposer, committed, state, shown, lastErr, cfg.size, cfg.hide)
		if err != nil {
			return contract.Record{}, contract.Trace{}, fmt.Errorf("problem %s: %w", r.p.ProblemID, err)
		}
		ct, resp, err := r.complete(ctx, contract.PurposeChunk, prompt.ChunkPrompt(r.p, ch))
		if err != nil {
			runErr = err
			break
		}
		stats.LLMCalls++
		stats.ChunkAttempts++
		pl, err := r.proposeChunk(ctx, ct, resp, cfg, state)
		r.trace.Calls = append(r.trace.Calls, *ct)
		if err != nil {
			runErr = err
			break
		}
		from := len(committed)
		res := replay.Result{Prefix: []envs.Action{}, State: state, K: -1, PlanLen: len(pl.moves)}
		switch {
		case pl.failure != "":
			res.StopReason, res.Error = pl.failure, pl.message
			lastErr = pl.message
		case len(pl.moves) == 0:
			res.StopReason, res.Error = contract.StopNoPlan, "The answer proposed no moves."
			lastErr = res.Error
		default:
			res.StopReason = contract.StopPlanExhausted
			res.Error = fmt.Sprintf("All %d proposed moves were checked; the goal is not reached yet.", len(pl.moves))
			for i, raw := range pl.moves {
				if len(committed) >= r.maxSteps {
					res.K, res.StopReason = i, contract.StopMaxSteps
					res.Error = fmt.Sprintf("The step limit of %d moves is reached without reaching the goal.", r.maxSteps)
					break
				}
				a, err := r.env.Normalize(r.p, state, raw)
				if err != nil {
					stats.Rollbacks++
					res.K, res.StopReason, res.Kind = i, contract.StopFormatError, contract.KindFormatError
					res.Error = fmt.Sprintf("The move %s could not be read: %v", replay.Compact(raw), err)
					lastErr = res.Error
					break
				}
				key, sig := jsonKey(state), jsonKey(a)
				if isBlocked(blocked[key], sig) {
					continue
				}
				st := r.env.Step(state, a)
				if !st.Valid {
					stats.Rollbacks++
					msg := st.Message
					if msg == "" {
						msg = string(st.Kind)
					}
					if msg == "" {
						msg = "rejected"
					}
					if len(blocked[key]) < maxBlockedPerState {
						blocked[key] = append(blocked[key], blockedMove{sig: sig, move: r.env.RawMove(a), msg: msg})
					}
					res.K, res.StopReason, res.Kind = i, contract.StopInvalidMove, string(st.Kind)
					res.Error = fmt.Sprintf("The move %s was rejected: %s", replay.Compact(raw), msg)
					lastErr = res.Error
					break
				}
				committed = append(committed, a)
				res.Prefix = append(res.Prefix, a)
				state, res.State = st.Next, st.Next
				if r.env.IsGoal(state, r.goal) {
					res.ReachedGoal, res.StopReason, res.Error = true, contract.StopGoal, ""
					break
				}
			}
			if len(res.Prefix) > 0 {
				lastErr = ""
			}
		}
		r.setReplay(len(r.trace.Calls)-1, from, res)
		if !haveFirst {
			first, haveFirst = res, true
		}
	}
	stats.Committed = len(committed)
	final := replay.Result{Prefix: committed, State: state, K: -1, ReachedGoal: stop == contract.StopGoal, StopReason: stop, PlanLen: len(committed)}
	route := contract.RouteNoExtraCall
	if first.ReachedGoal {
		route = contract.RouteInitialSuccess
	}
	rec, tr, err := r.finish(method, route, false, first, final, runErr)
	if err == nil {
		rec.VEX = stats
	}
	return rec, tr, err
}

// proposeChunk reads one proposal: the code proposer runs the reply's
// program in the sandbox (r.execute) and takes every move it prints, as
// the reference's code proposer does; the JSON proposer reads
// {"actions":[...]} (program.ChunkActions) and keeps its first cfg.size
// moves, after checking that each move not given as a JSON object
// normalizes along the proposal from state. The error is an *infraError or ErrAborted.
func (r *run) proposeChunk(ctx context.Context, ct *contract.CallTrace, resp model.Response, cfg vexSettings, state envs.State) (plan, error) {
	if cfg.proposer == ProposerCode {
		return r.execute(ctx, ct, resp)
	}
	moves, err := program.ChunkActions(resp.Content)
	if err != nil {
		ct.ParseError = err.Error()
		reason, msg := contract.StopNoPlan, "The answer could not be read: "+err.Error()+"."
		if resp.FinishReason == "length" {
			reason, msg = contract.StopTruncated, "The answer was cut off at the token limit; "+msg
		}
		ct.Outcome = reason
		return plan{failure: reason, message: msg}, nil
	}
	// The reference's JSON proposer normalizes every move along the
	// proposal (from the verified state, applying the valid ones) before
	// the loop sees it: a move that is not a JSON object and does not
	// normalize fails the whole reply.
	cur := state
	for i, raw := range moves {
		a, err := r.env.Normalize(r.p, cur, raw)
		if err != nil {
			if program.FirstByte(raw) == '{' {
				continue
			}
			ct.Plan, ct.ParseError, ct.Outcome = moves, err.Error(), contract.StopFormatError
			return plan{failure: contract.StopFormatError, message: fmt.Sprintf("Move %d (%s) could not be read: %v", i+1, replay.Compact(raw), err)}, nil
		}
		if st := r.env.Step(cur, a); st.Valid {
			cur = st.Next
		}
	}
	if len(moves) > cfg.size {
		moves = moves[:cfg.size]
	}
	ct.Plan = moves
	return plan{moves: moves}, nil
}

// runVEXCondition runs a vex-* Derail condition: vex-full is a VEX run on
// the case's checkpoint problem (from last_valid_state); vex-no-prefix the
// same with the verified moves hidden from every prompt; and
// vex-restart-from-initial a VEX run on the source problem from its
// initial state, with the same call budget.
func runVEXCondition(ctx context.Context, deps Deps, opts Options, t DerailTask, condition string) (contract.Record, contract.Trace, error) {
	switch condition {
	case contract.CondVEXFull, contract.CondVEXNoPrefix:
		statement, err := CheckStatement(opts.CheckpointStatement)
		if err != nil {
			return contract.Record{}, contract.Trace{}, err
		}
		cp, err := CheckpointProblem(t, statement)
		if err != nil {
			return contract.Record{}, contract.Trace{}, err
		}
		o := opts
		o.VEX.HidePrefix = condition == contract.CondVEXNoPrefix
		return RunProblem(ctx, deps, o, cp, contract.MethodVEX)
	case contract.CondVEXRestart:
		o := opts
		o.VEX.HidePrefix = false
		return RunProblem(ctx, deps, o, t.Problem, contract.MethodVEX)
	}
	return contract.Record{}, contract.Trace{}, fmt.Errorf("condition %q is not a VEX condition", condition)
}
