package methods

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"

	"repot.dev/repot-operator/contract"
	"repot.dev/repot-operator/contract/prompt"
	"repot.dev/repot-operator/contract/replay"
	"repot.dev/repot-operator/envs"
)

// Per-call outcomes of the step-by-step agent in traces
// (CallTrace.Outcome); the last call's outcome may instead be the run's
// stop reason when the run ended there.
const (
	stepCommitted    = "committed"
	stepUnknownID    = "unknown_action_id"
	stepBlockedID    = "blocked_action_id"
	stepLoopRecovery = "loop_recovery"
)

// Retry reasons shown in the next step prompt.
const (
	retryFormat     = "format_error"
	retryUnknown    = "unknown_action_id"
	retryLoop       = "loop_recovery"
	retryInvalid    = "invalid_transition"
	loopRecoveryMsg = "The chosen move would return to a state already visited that is not the goal; choose again from the current verified state."
)

// stepOptions fills in the zero fields of o from DefaultStepAgentOptions.
func stepOptions(o StepAgentOptions) StepAgentOptions {
	d := DefaultStepAgentOptions()
	if o.MaxRetries <= 0 {
		o.MaxRetries = d.MaxRetries
	}
	if o.MaxStateVisits <= 0 {
		o.MaxStateVisits = d.MaxStateVisits
	}
	if o.MaxStepsMultiplier <= 0 {
		o.MaxStepsMultiplier = d.MaxStepsMultiplier
	}
	if o.MaxTokens <= 0 {
		o.MaxTokens = d.MaxTokens
	}
	return o
}

// stepOption is one legal move with its id.
type stepOption struct {
	id     string
	action envs.Action
}

// stateKey is a state's canonical JSON.
func stateKey(s envs.State) string {
	b, err := s.MarshalJSON()
	if err != nil {
		return fmt.Sprintf("%p", s)
	}
	return string(b)
}

// runStateGuard runs the stateguard-rollback Derail condition: the
// reference's step-by-step agent in its search variant on the case's
// checkpoint problem. Each call shows the current verified state, the legal
// moves with ids ("a0", "a1", ... in the environment's legal order), the
// ids blocked at this state, and why the agent is asked again; the reply
// names an id and ranks ids. The chosen option is the first ranked id, not
// blocked, whose successor is a state not yet visited, else the first
// ranked id not blocked, else action_id unless it is blocked. An
// unreadable reply, an unknown or blocked id, and a move that would return
// to a visited non-goal state (refused once per state, when another
// unblocked option exists) are rollbacks: the state stays, the id is
// blocked at this state, and a retry is counted; a committed move resets
// the retries. The run ends at the goal, after more than MaxRetries
// retries in a row (retry_budget_exhausted, or repetition_loop when the
// last refusal was a blocked id or a loop), when a non-goal state is
// entered MaxStateVisits times (repetition_loop), or after max_steps x
// MaxStepsMultiplier calls (max_steps).
func runStateGuard(ctx context.Context, deps Deps, opts Options, t DerailTask) (contract.Record, contract.Trace, error) {
	cp, err := CheckpointProblem(t, opts.CheckpointStatement)
	if err != nil {
		return contract.Record{}, contract.Trace{}, err
	}
	so := stepOptions(opts.StepAgent)
	callOpts := opts
	if callOpts.MaxTokens <= 0 || so.MaxTokens < callOpts.MaxTokens {
		callOpts.MaxTokens = so.MaxTokens
	}
	r, err := newRun(deps, callOpts, cp, contract.CondStateGuard)
	if err != nil {
		return contract.Record{}, contract.Trace{}, err
	}
	sg := &stepGuard{r: r, o: so, p: cp, state: r.init, visits: map[string]int{stateKey(r.init): 1},
		blocked: map[string]map[string]bool{}, loopUsed: map[string]bool{}, stats: &contract.StepAgentStats{}}
	res, err := sg.loop(ctx)
	rec, tr, ferr := r.finish(contract.CondStateGuard, contract.RouteNoExtraCall, false, res, res, err)
	if ferr == nil || rec.Aborted {
		rec.StepAgent = sg.stats
	}
	return rec, tr, ferr
}

// stepGuard is the state of one step-by-step agent run.
type stepGuard struct {
	r     *run
	o     StepAgentOptions
	p     *envs.Problem
	state envs.State
	// visits counts the entries into each state (the start counts one).
	visits map[string]int
	// blocked are the refused ids by state; loopUsed the states whose
	// one loop recovery is spent.
	blocked  map[string]map[string]bool
	loopUsed map[string]bool

	retries     int
	retryReason string
	lastError   string
	committed   []envs.Action
	stats       *contract.StepAgentStats
}

// result is the run's outcome as a replay.Result.
func (g *stepGuard) result(stop string) replay.Result {
	res := replay.Result{Prefix: g.committed, State: g.state, K: -1, PlanLen: len(g.committed), StopReason: stop}
	if res.Prefix == nil {
		res.Prefix = []envs.Action{}
	}
	res.ReachedGoal = g.r.env.IsGoal(g.state, g.r.goal)
	if res.ReachedGoal {
		res.StopReason = contract.StopGoal
	} else {
		res.Error = g.lastError
	}
	return res
}

func (g *stepGuard) loop(ctx context.Context) (replay.Result, error) {
	r, e := g.r, g.r.env
	maxCalls := g.p.MaxSteps * g.o.MaxStepsMultiplier
	for g.stats.Steps < maxCalls {
		if e.IsGoal(g.state, r.goal) {
			return g.result(contract.StopGoal), nil
		}
		key := stateKey(g.state)
		legal := e.Legal(g.state)
		options := make([]stepOption, len(legal))
		shown := make([]prompt.StepOption, len(legal))
		for i, a := range legal {
			id := fmt.Sprintf("a%d", i)
			options[i] = stepOption{id: id, action: a}
			shown[i] = prompt.StepOption{ID: id, Move: e.RawMove(a)}
		}
		blocked := g.blockedAt(key)
		msgs := prompt.StepPrompt(g.p, prompt.Step{State: compactState(g.state), Options: shown, Blocked: blocked, RetryReason: g.retryReason, Message: g.lastError})
		ct, resp, err := r.complete(ctx, contract.PurposeStep, msgs)
		if err != nil {
			return g.result(""), err
		}
		g.stats.Steps++
		stop := g.decide(key, options, blocked, ct, resp.Content, resp.FinishReason)
		r.trace.Calls = append(r.trace.Calls, *ct)
		if stop != "" {
			r.trace.Calls[len(r.trace.Calls)-1].Outcome = stop
			return g.result(stop), nil
		}
	}
	if e.IsGoal(g.state, r.goal) {
		return g.result(contract.StopGoal), nil
	}
	return g.result(contract.StopMaxSteps), nil
}

// blockedAt lists the ids blocked at the state key, sorted.
func (g *stepGuard) blockedAt(key string) []string {
	var out []string
	for id := range g.blocked[key] {
		out = append(out, id)
	}
	slices.Sort(out)
	return out
}

func (g *stepGuard) block(key, id string) {
	if g.blocked[key] == nil {
		g.blocked[key] = map[string]bool{}
	}
	g.blocked[key][id] = true
}

// refuse counts a rollback and a retry; it returns the stop reason when
// the retries are spent.
func (g *stepGuard) refuse(ct *contract.CallTrace, outcome, reason, msg, stop string) string {
	ct.Outcome = outcome
	g.stats.Rollbacks++
	g.retries++
	g.retryReason, g.lastError = reason, msg
	if g.retries > g.o.MaxRetries {
		return stop
	}
	return ""
}

// decide reads one reply and applies its choice; it returns the run's stop
// reason when the run ends with this call.
func (g *stepGuard) decide(key string, options []stepOption, blocked []string, ct *contract.CallTrace, reply, finish string) string {
	e := g.r.env
	choice, err := prompt.ParseStepChoice(reply)
	if err != nil {
		ct.ParseError = err.Error()
		outcome := contract.StopFormatError
		if finish == "length" {
			outcome = contract.StopTruncated
		}
		return g.refuse(ct, outcome, retryFormat, err.Error(), contract.StopRetryBudget)
	}
	opt := g.choose(choice, options, blocked)
	if opt == nil {
		id := choice.ActionID
		g.block(key, id)
		if slices.Contains(blocked, id) {
			return g.refuse(ct, stepBlockedID, retryLoop, fmt.Sprintf("Option id %q is blocked at this state: it repeats a refused or looping move.", id), contract.StopRepetitionLoop)
		}
		return g.refuse(ct, stepUnknownID, retryUnknown, fmt.Sprintf("Option id %q is not one of the legal move options at this state.", id), contract.StopRetryBudget)
	}
	ct.Plan = []json.RawMessage{e.RawMove(opt.action)}
	st := e.Step(g.state, opt.action)
	if st.Valid {
		nextKey := stateKey(st.Next)
		wouldLoop := g.visits[nextKey] > 0 && !e.IsGoal(st.Next, g.r.goal)
		alternative := false
		for _, o := range options {
			if o.id != opt.id && !slices.Contains(blocked, o.id) {
				alternative = true
				break
			}
		}
		if wouldLoop && alternative && !g.loopUsed[key] {
			g.loopUsed[key] = true
			g.block(key, opt.id)
			g.stats.LoopRecoveries++
			return g.refuse(ct, stepLoopRecovery, retryLoop, loopRecoveryMsg, contract.StopRepetitionLoop)
		}
		ct.Outcome = stepCommitted
		g.state, g.committed = st.Next, append(g.committed, opt.action)
		g.retries, g.retryReason, g.lastError = 0, "", ""
		g.visits[nextKey]++
		if g.visits[nextKey] >= g.o.MaxStateVisits && !e.IsGoal(g.state, g.r.goal) {
			return contract.StopRepetitionLoop
		}
		return ""
	}
	g.block(key, opt.id)
	return g.refuse(ct, contract.StopInvalidMove, retryInvalid, st.Message, contract.StopRetryBudget)
}

// choose is the search variant's choice: the first ranked id, not blocked,
// whose successor is unvisited; else the first ranked id not blocked; else
// action_id unless blocked (nil when none is selectable).
func (g *stepGuard) choose(c prompt.StepChoice, options []stepOption, blocked []string) *stepOption {
	byID := make(map[string]*stepOption, len(options))
	for i := range options {
		byID[options[i].id] = &options[i]
	}
	isBlocked := func(id string) bool { return slices.Contains(blocked, id) }
	if len(c.Ranked) > 0 {
		for _, id := range c.Ranked {
			o := byID[id]
			if o == nil || isBlocked(id) {
				continue
			}
			st := g.r.env.Step(g.state, o.action)
			if !st.Valid {
				continue
			}
			if g.visits[stateKey(st.Next)] == 0 {
				return o
			}
		}
		for _, id := range c.Ranked {
			if o := byID[id]; o != nil && !isBlocked(id) {
				return o
			}
		}
	}
	if isBlocked(c.ActionID) {
		return nil
	}
	return byID[c.ActionID]
}

// compactState is a state's JSON for a prompt.
func compactState(s envs.State) json.RawMessage {
	b, err := s.MarshalJSON()
	if err != nil {
		return json.RawMessage("null")
	}
	return b
}
