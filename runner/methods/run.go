package methods

import (
	"context"
	"errors"
	"fmt"
	"math"
	"time"

	"repot.dev/repot-operator/analysis/vrr"
	"repot.dev/repot-operator/contract"
	"repot.dev/repot-operator/contract/prompt"
	"repot.dev/repot-operator/contract/replay"
	"repot.dev/repot-operator/envs"
	"repot.dev/repot-operator/runner/concurrency"
	"repot.dev/repot-operator/runner/model"
	"repot.dev/repot-operator/runner/sandbox"
)

// Options are the method settings of a run.
type Options struct {
	// Model is the model name recorded in records and traces.
	Model       string
	Temperature float64
	// MaxTokens caps each completion (0 leaves it to the server).
	MaxTokens int
	// RepairBudget is repot's number of suffix-repair calls R (default 1).
	RepairBudget int
	// AdaptiveThresholdPermille is repot-adaptive's prefix-fraction threshold
	// below which a failed first plan gets a fresh retry (default 150).
	AdaptiveThresholdPermille int
	// SandboxMode is the sandbox confinement in force (sandbox.Python.Mode),
	// recorded in every trace.
	SandboxMode string
	// CheckpointStatement is how a Derail-550 checkpoint problem is stated:
	// "paper" (the default) or "full".
	CheckpointStatement string
	// VRR configures repot-vrr and the noisy-verifier ablation of the
	// repot loops (docs/vrr.md); its zero value is the exact verifier.
	VRR vrr.Config
	// VRREstimates are the frozen estimates repot-vrr stops by. The engine
	// calibrates them itself (two passes) when they are nil.
	VRREstimates *vrr.Estimates
	// VRRCalibrate makes repot-vrr run the whole budget like repot and
	// mark its record as calibration (the engine sets it on the
	// calibration slice).
	VRRCalibrate bool
	// SelfConsistencySamples is self-consistency's k, the most samples it
	// draws (default 8).
	SelfConsistencySamples int
	// VEX configures the vex method and the vex-* Derail conditions.
	VEX VEXOptions
	// StepAgent configures the stateguard-rollback Derail condition.
	StepAgent StepAgentOptions
}

// VEXOptions are VEX's knobs; the zero value of a field means the
// reference's default (DefaultVEXOptions).
type VEXOptions struct {
	// MaxLLMCalls is the call budget of one VEX run (default 12).
	MaxLLMCalls int
	// ChunkSize is K, the most moves one proposal is asked for (and, for
	// the JSON proposer, the most that count; the code proposer's printed
	// moves all count, as in the reference), by environment
	// (defaults: tower_of_hanoi 200, checker_jumping 64, river_crossing 16,
	// blocksworld 32; DefaultChunkSize elsewhere).
	ChunkSize map[string]int
	// Proposer is the proposer kind by environment: ProposerCode or
	// ProposerJSON (defaults: code for tower_of_hanoi and checker_jumping,
	// json elsewhere).
	Proposer map[string]string
	// HidePrefix hides the verified prefix from every proposal prompt (the
	// vex-no-prefix Derail condition): the prompt says no moves are verified.
	HidePrefix bool
}

// VEX proposer kinds.
const (
	ProposerJSON = "json"
	ProposerCode = "code"
)

// DefaultChunkSize is VEX's chunk size in an environment the defaults do
// not name.
const DefaultChunkSize = 32

// DefaultVEXOptions are the reference's locked VEX settings.
func DefaultVEXOptions() VEXOptions {
	return VEXOptions{
		MaxLLMCalls: 12,
		ChunkSize:   map[string]int{"tower_of_hanoi": 200, "checker_jumping": 64, "river_crossing": 16, "blocksworld": 32},
		Proposer:    map[string]string{"tower_of_hanoi": ProposerCode, "checker_jumping": ProposerCode, "river_crossing": ProposerJSON, "blocksworld": ProposerJSON},
	}
}

// StepAgentOptions are the step-by-step agent's knobs (the reference's
// AgentConfig defaults).
type StepAgentOptions struct {
	// MaxRetries is how many rejected proposals in a row end the run
	// (default 3: the fourth ends it).
	MaxRetries int
	// MaxStateVisits ends the run when a non-goal state is entered this
	// often (default 4).
	MaxStateVisits int
	// MaxStepsMultiplier bounds the agent's calls by the problem's
	// max_steps times it (default 2).
	MaxStepsMultiplier int
	// MaxTokens caps each action choice's completion (default 2048, and
	// never above Options.MaxTokens).
	MaxTokens int
}

// DefaultStepAgentOptions are the reference's settings.
func DefaultStepAgentOptions() StepAgentOptions {
	return StepAgentOptions{MaxRetries: 3, MaxStateVisits: 4, MaxStepsMultiplier: 2, MaxTokens: 2048}
}

// DefaultOptions are the paper's settings.
func DefaultOptions() Options {
	return Options{MaxTokens: 16384, RepairBudget: 1, AdaptiveThresholdPermille: 150,
		SelfConsistencySamples: 8, VEX: DefaultVEXOptions(), StepAgent: DefaultStepAgentOptions()}
}

// Deps are the external dependencies of a run.
type Deps struct {
	Client  model.Client
	Sandbox sandbox.Sandbox
	// Clock measures wall time; nil means the system clock.
	Clock model.Clock
	// Gate bounds model calls in flight; nil means no bound.
	Gate *concurrency.Gate
	// Sleep waits between sandbox retries; nil means a timer that honours
	// ctx.
	Sleep func(ctx context.Context, d time.Duration) error
}

// run is the state of one (problem, method) run.
type run struct {
	deps       Deps
	opts       Options
	p          *envs.Problem
	env        envs.Env
	init, goal envs.State
	// maxSteps is the problem's step limit, or no limit when the problem
	// gives none (max_steps 0).
	maxSteps int

	started bool
	start   time.Time
	calls   int
	usage   contract.Usage
	retries int
	trace   contract.Trace

	// rounds, loopStop and repairAttempts are the repair loop's
	// (repairLoop).
	rounds         []contract.Round
	loopStop       string
	repairAttempts int
}

// RunProblem runs one method on one problem and returns its record and
// trace. Model failures are results; an infrastructure failure after the
// client's retries gives a record with InfraError set. It returns ErrAborted
// when ctx ended first, with the aborted attempt's record when a model call
// of it returned (contract.Record.Aborted; else the zero record), and another error only for a
// problem or method it cannot run at all.
func RunProblem(ctx context.Context, deps Deps, opts Options, p *envs.Problem, method string) (contract.Record, contract.Trace, error) {
	if !contract.ValidMethod(method) {
		return contract.Record{}, contract.Trace{}, fmt.Errorf("unknown method %q (known: %v)", method, contract.Methods)
	}
	r, err := newRun(deps, opts, p, method)
	if err != nil {
		return contract.Record{}, contract.Trace{}, err
	}
	b := behaviours[method]
	if b.own != nil {
		return b.own(ctx, r, method)
	}
	var lp loopSpec
	if recordsRounds(method, opts) {
		if lp, err = loopFor(method, opts); err != nil {
			return contract.Record{}, contract.Trace{}, fmt.Errorf("problem %s: %w", p.ProblemID, err)
		}
	}
	first, err := r.fromInitial(ctx, contract.PurposeInitial, prompt.Initial(p))
	if err != nil {
		return r.finish(method, contract.RouteNoExtraCall, false, replay.Result{}, replay.Result{}, err)
	}
	if lp.record {
		// The loop judges the first plan too: a noisy verdict may reject a
		// plan that reached the goal.
		final, err := r.repairLoop(ctx, first, lp)
		switch {
		case r.repairAttempts > 0:
			return r.finish(method, contract.RouteSuffixRepair, true, first, final, err)
		case first.ReachedGoal:
			return r.finish(method, contract.RouteInitialSuccess, false, first, final, err)
		default:
			return r.finish(method, contract.RouteNoExtraCall, false, first, final, err)
		}
	}
	if first.ReachedGoal {
		return r.finish(method, contract.RouteInitialSuccess, false, first, first, nil)
	}
	return b.afterFailedPlan(ctx, r, method, first)
}

// behaviour is what one method does beyond what the contract says of it
// (contract.MethodSpec): a method of contract.LoopOwn runs its own calls
// from the start (own); one of contract.LoopPoT begins with a PoT call, and
// afterFailedPlan is its step when that plan did not reach the goal (and
// it records no repair-loop rounds).
type behaviour struct {
	own             func(ctx context.Context, r *run, method string) (contract.Record, contract.Trace, error)
	afterFailedPlan func(ctx context.Context, r *run, method string, first replay.Result) (contract.Record, contract.Trace, error)
}

// behaviours holds each method's behaviour by name; each method's file
// registers its own.
var behaviours = map[string]behaviour{}

// register records what method does. A name registered twice, a name the
// contract does not list, or a behaviour that does not match the
// contract's loop of the method panics when the binary starts: a method
// claimed by two files, or run otherwise than the contract says, is a bug.
func register(method string, b behaviour) {
	spec, ok := contract.LookupMethod(method)
	switch {
	case !ok:
		panic("methods: " + method + " is not in contract.MethodSpecs")
	case hasBehaviour(method):
		panic("methods: " + method + " is registered twice")
	case spec.Loop == contract.LoopOwn && (b.own == nil || b.afterFailedPlan != nil),
		spec.Loop == contract.LoopPoT && (b.afterFailedPlan == nil || b.own != nil):
		panic("methods: " + method + "'s behaviour does not match its loop in the contract (" + string(spec.Loop) + ")")
	}
	behaviours[method] = b
}

func hasBehaviour(method string) bool { _, ok := behaviours[method]; return ok }

// newRun prepares a run of p.
func newRun(deps Deps, opts Options, p *envs.Problem, method string) (*run, error) {
	if deps.Clock == nil {
		deps.Clock = model.SystemClock
	}
	if deps.Gate == nil {
		deps.Gate = concurrency.NewGate(1 << 30)
	}
	if deps.Sleep == nil {
		deps.Sleep = model.SleepContext
	}
	e, err := p.Env()
	if err != nil {
		return nil, fmt.Errorf("problem %s: %w", p.ProblemID, err)
	}
	init, err := p.Initial()
	if err != nil {
		return nil, fmt.Errorf("problem %s: initial state: %w", p.ProblemID, err)
	}
	goal, err := p.Goal()
	if err != nil {
		return nil, fmt.Errorf("problem %s: goal state: %w", p.ProblemID, err)
	}
	r := &run{deps: deps, opts: opts, p: p, env: e, init: init, goal: goal, maxSteps: p.MaxSteps}
	if r.maxSteps <= 0 {
		r.maxSteps = math.MaxInt
	}
	r.trace = contract.Trace{ProblemID: p.ProblemID, Environment: p.Environment, Complexity: p.Complexity, Model: opts.Model, Method: method, Calls: []contract.CallTrace{}}
	return r, nil
}

// fromInitial makes a call whose plan starts at the initial state and
// replays it.
func (r *run) fromInitial(ctx context.Context, purpose string, msgs []contract.Message) (replay.Result, error) {
	pl, idx, err := r.call(ctx, purpose, msgs)
	if err != nil {
		return replay.Result{}, err
	}
	res := r.replayPlan(pl, r.init, r.maxSteps)
	r.setReplay(idx, 0, res)
	return res, nil
}

// Better reports whether attempt a beats attempt b: success first, then the
// longer verified prefix. Ties go to b (the earlier attempt).
func Better(a, b replay.Result) bool {
	if a.ReachedGoal != b.ReachedGoal {
		return a.ReachedGoal
	}
	return len(a.Prefix) > len(b.Prefix)
}

// replayPlan replays a call's plan from a state with a step budget; a call
// that gave no plan stops at once with its failure.
func (r *run) replayPlan(pl plan, from envs.State, budget int) replay.Result {
	if pl.failure != "" {
		return replay.Result{Prefix: []envs.Action{}, State: from, K: -1, StopReason: pl.failure, Error: pl.message}
	}
	return replay.Replay(r.env, r.p, from, r.goal, pl.moves, budget)
}

func (r *run) setReplay(idx, from int, res replay.Result) {
	r.trace.Calls[idx].Replay = replay.Trace(from, res)
	r.trace.Calls[idx].Outcome = res.StopReason
}

// markStart starts the run's wall clock at its first model call (time spent
// queueing for the first slot is not the run's).
func (r *run) markStart() {
	if !r.started {
		r.started, r.start = true, r.deps.Clock.Now()
	}
}

// finish builds the record and trace. err is nil, an *infraError (the run
// becomes an infra-error record), ErrAborted or a setup error (both
// returned; with ErrAborted, the aborted attempt's record when a call of
// it returned: aborted).
func (r *run) finish(method, route string, repairUsed bool, first, final replay.Result, err error) (contract.Record, contract.Trace, error) {
	var ie *infraError
	if errors.Is(err, ErrAborted) {
		return r.aborted(method), contract.Trace{}, err
	}
	if err != nil && !errors.As(err, &ie) {
		return contract.Record{}, contract.Trace{}, err
	}
	wall := time.Duration(0)
	if r.started {
		wall = r.deps.Clock.Now().Sub(r.start)
	}
	rec := contract.Record{
		Model: r.opts.Model, ProblemID: r.trace.ProblemID, Environment: r.trace.Environment, Complexity: r.trace.Complexity, Method: method,
		Success: final.ReachedGoal, StoppedReason: final.StopReason, Route: route, RepairUsed: repairUsed,
		Calls: r.calls, PromptTokens: r.usage.Prompt, CompletionTokens: r.usage.Completion,
		CachedTokens: r.usage.Cached, ReasoningTokens: r.usage.Reasoning,
		InitialPlanLen: first.PlanLen, InitialPrefixPermille: first.PrefixPermille(), InitialSuccess: first.ReachedGoal,
		InfraRetries: r.retries, WallMillis: wall.Milliseconds(),
	}
	if r.started {
		rec.StartedUnixMilli = r.start.UnixMilli()
	}
	if ie != nil {
		rec.Success, rec.StoppedReason, rec.InfraError = false, contract.StopInfraError, ie.msg
	}
	rec.CapTexts()
	if r.rounds != nil {
		rec.Rounds, rec.LoopStop = r.rounds, r.loopStop
		if m := r.opts.VRR.Votes; m > 1 || r.opts.VRR.Noise.Active() {
			rec.Votes = max(m, 1)
		}
		rec.VRRCalibration = method == contract.MethodVRR && r.opts.VRRCalibrate
	}
	t := r.trace
	t.Success, t.StoppedReason = rec.Success, rec.StoppedReason
	t.TokensIn, t.TokensOut = rec.PromptTokens, rec.CompletionTokens
	t.WallTime = wall.Seconds()
	t.Metadata = contract.TraceMetadata{
		Route: route, RepairUsed: repairUsed, Calls: rec.Calls, CachedTokens: rec.CachedTokens, ReasoningTokens: rec.ReasoningTokens,
		InitialPlanLen: rec.InitialPlanLen, InitialPrefixPermille: rec.InitialPrefixPermille, InitialSuccess: rec.InitialSuccess,
		FinalPrefixLen: len(final.Prefix), InfraError: rec.InfraError, InfraRetries: rec.InfraRetries, Problem: r.p.Metadata,
		SandboxMode: r.opts.SandboxMode,
	}
	return rec, t, nil
}

// aborted is the record of an attempt stopped before it finished
// (contract.Record.Aborted): the calls and tokens of its model calls that
// returned, so that a budget counts what the server spent; the zero record
// when none returned (nothing to count).
func (r *run) aborted(method string) contract.Record {
	if r.calls == 0 || !r.started {
		return contract.Record{}
	}
	return contract.Record{
		Model: r.opts.Model, ProblemID: r.trace.ProblemID, Environment: r.trace.Environment, Complexity: r.trace.Complexity, Method: method,
		Aborted: true, Calls: r.calls, PromptTokens: r.usage.Prompt, CompletionTokens: r.usage.Completion,
		CachedTokens: r.usage.Cached, ReasoningTokens: r.usage.Reasoning, InfraRetries: r.retries,
		StartedUnixMilli: r.start.UnixMilli(), WallMillis: r.deps.Clock.Now().Sub(r.start).Milliseconds(),
	}
}
