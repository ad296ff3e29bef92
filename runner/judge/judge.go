// Package judge re-judges stored traces (repot judge): from each trace's
// recorded model output (the completion, and for program-of-thought calls
// the program's recorded stdout) it recomputes the run's verdict with the
// exact verifier, independently of the trace's own success, replay and
// outcome fields.
//
// It reuses the program reader (contract/program), verified replay
// (contract/replay) and the engine's verifier (methods.JudgeReply,
// methods.CheckpointProblem), but not
// the methods' loops: each method's final plan is rebuilt from the calls'
// purposes. It lives in the engine because only the engine may import its
// verifier; `repot judge` (cmd/repot/judge.go) reads the cluster and the
// store and compares its verdicts (contract.TraceVerdict) with the ledger and the
// status.
//
// Re-judged: pot, pot-retry, repot, repot-no-prefix, repot-restart,
// repot-adaptive, cot and self-consistency; on derail-550 the four prompted
// conditions and repot-full, repot-no-prefix, repot-restart. Not re-judged
// (NotJudged says why): vex and the vex-* conditions, stateguard-rollback,
// repot-vrr, and the repot variants under a noisy verifier.
package judge

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"strings"

	"repot.dev/repot-operator/contract"
	"repot.dev/repot-operator/contract/program"
	"repot.dev/repot-operator/contract/replay"
	"repot.dev/repot-operator/envs"
	"repot.dev/repot-operator/runner/methods"
)

// Options are what of an evaluation's settings changes how a run decided
// success.
type Options struct {
	// NoisyVerifier is set when the evaluation ran the noisy-verifier
	// ablation (spec.vrr.verifierNoise): the repot loops then repaired
	// plans on verdicts the trace does not hold.
	NoisyVerifier bool
}

// Judge re-judges the traces of one evaluation's problem set.
type Judge struct {
	opts     Options
	problems map[string]*envs.Problem
	// derail is set for derail-550: the cases by case id.
	derail map[string]methods.DerailTask
}

// New loads the problems of suite (as the runner resolves them): the
// evaluation's problem data when problems is not nil (spec.problems: the
// PuzzleZoo or PlanBench schema, or the Derail-550 cases, which are paired
// with the generated PuzzleZoo-775), else the generated suite.
func New(suite string, problems io.Reader, opts Options) (*Judge, error) {
	if suite == "" {
		suite = envs.SuiteOpenSource
	}
	j := &Judge{opts: opts, problems: map[string]*envs.Problem{}}
	var ps []envs.Problem
	var err error
	switch {
	case suite == envs.SuiteDerail:
		if problems == nil {
			return nil, fmt.Errorf("suite %s needs its cases (spec.problems, or --problems FILE)", suite)
		}
		cases, err := envs.LoadDerailReader(problems, "the Derail-550 cases")
		if err != nil {
			return nil, err
		}
		pz, err := envs.Suite(envs.SuitePuzzleZoo)
		if err != nil {
			return nil, err
		}
		tasks, err := methods.DerailTasks(cases, pz)
		if err != nil {
			return nil, err
		}
		j.derail = make(map[string]methods.DerailTask, len(tasks))
		for _, t := range tasks {
			j.derail[t.Case.CaseID] = t
		}
		return j, nil
	case problems != nil:
		ps, err = envs.LoadProblems(problems)
	case suite == envs.SuitePlanBench:
		return nil, fmt.Errorf("suite %s needs its problems (spec.problems, or --problems FILE)", suite)
	default:
		ps, err = envs.Suite(suite)
	}
	if err != nil {
		return nil, err
	}
	for i := range ps {
		j.problems[ps[i].ProblemID] = &ps[i]
	}
	return j, nil
}

// Line re-judges one trace line (line is its 1-based position). A line
// that is not a trace gives a verdict with Malformed set; model text is
// never trusted to be well formed, and nothing in it makes Line panic.
func (j *Judge) Line(line int, data []byte) contract.TraceVerdict {
	var t contract.Trace
	if err := json.Unmarshal(data, &t); err != nil {
		return contract.TraceVerdict{Line: line, Malformed: "not a trace: " + err.Error()}
	}
	if t.Model == "" || t.Method == "" || t.ProblemID == "" {
		return contract.TraceVerdict{Line: line, Malformed: "not a trace: no model, method or problem_id"}
	}
	v := j.Trace(&t)
	v.Line = line
	return v
}

// Trace re-judges one trace.
func (j *Judge) Trace(t *contract.Trace) (v contract.TraceVerdict) {
	v = contract.TraceVerdict{Model: t.Model, Method: t.Method, ProblemID: t.ProblemID, TraceSuccess: t.Success}
	if t.Metadata.InfraError != "" || t.StoppedReason == contract.StopInfraError {
		v.InfraError = true
		return v
	}
	defer func() {
		// The verifier is fuzzed against model text; should it still fail
		// on some trace, that trace is reported, not the audit ended.
		if r := recover(); r != nil {
			v.Judged, v.Success = false, false
			v.NotJudged = fmt.Sprintf("the judge failed on this trace: %v", r)
		}
	}()
	if j.derail != nil {
		j.derailTrace(&v, t)
	} else {
		j.puzzleTrace(&v, t)
	}
	return v
}

// notJudged are the Derail conditions and the methods the judge does not
// re-judge, with the reason.
var notJudged = withMethodsNotJudged(map[string]string{
	contract.CondStateGuard:  "the step-by-step agent's commits depend on its per-state tabu and loop-recovery rules (a rebuilt run, not a replay)",
	contract.CondVEXFull:     "vex-full is a VEX run (see vex)",
	contract.CondVEXNoPrefix: "vex-no-prefix is a VEX run (see vex)",
	contract.CondVEXRestart:  "vex-restart-from-initial is a VEX run (see vex)",
})

// withMethodsNotJudged adds to conds the methods the contract says the
// judge does not re-judge (contract.MethodSpec.NotJudged).
func withMethodsNotJudged(conds map[string]string) map[string]string {
	for _, m := range contract.MethodSpecs {
		if m.NotJudged != "" {
			conds[m.Name] = m.NotJudged
		}
	}
	return conds
}

const noisyReason = "the evaluation ran a noisy verifier (spec.vrr.verifierNoise): its repairs were made on verdicts the trace does not hold"

func (j *Judge) puzzleTrace(v *contract.TraceVerdict, t *contract.Trace) {
	if why, ok := notJudged[t.Method]; ok {
		v.NotJudged = why
		return
	}
	p, ok := j.problems[t.ProblemID]
	if !ok {
		v.Inconsistent = fmt.Sprintf("problem %s is not in the evaluation's problem set", t.ProblemID)
		return
	}
	switch t.Method {
	case contract.MethodPoT, contract.MethodPoTRetry, contract.MethodAdaptive:
		j.potFamily(v, t, p, false)
	case contract.MethodRePoT, contract.MethodRePoTNoPrefix, contract.MethodRePoTRestart:
		if j.opts.NoisyVerifier {
			v.NotJudged = noisyReason
			return
		}
		j.potFamily(v, t, p, t.Method == contract.MethodRePoTRestart)
	case contract.MethodCoT, contract.MethodSelfConsistency:
		j.samples(v, t, p)
	default:
		v.NotJudged = fmt.Sprintf("method %q is not one the judge knows", t.Method)
	}
}

func (j *Judge) derailTrace(v *contract.TraceVerdict, t *contract.Trace) {
	if why, ok := notJudged[t.Method]; ok {
		v.NotJudged = why
		return
	}
	task, ok := j.derail[t.ProblemID]
	if !ok {
		v.Inconsistent = fmt.Sprintf("case %s is not in the evaluation's Derail-550 cases", t.ProblemID)
		return
	}
	if d := t.Metadata.Derail; d != nil && d.ProblemID != "" && d.ProblemID != task.Problem.ProblemID {
		v.Inconsistent = fmt.Sprintf("metadata.derail.problem_id is %s, but case %s derails %s", d.ProblemID, t.ProblemID, task.Problem.ProblemID)
		return
	}
	switch t.Method {
	case contract.CondNoFeedback, contract.CondErrorOnly, contract.CondStateFeedback, contract.CondStateLegal:
		j.prompted(v, t, task)
	case contract.CondRePoTFull, contract.CondRePoTNoPrefix:
		if j.opts.NoisyVerifier {
			v.NotJudged = noisyReason
			return
		}
		// The statement changes only the prompt, not the states.
		cp, err := methods.CheckpointProblem(task, "")
		if err != nil {
			v.Inconsistent = err.Error()
			return
		}
		j.potFamily(v, t, cp, false)
	case contract.CondRePoTRestart:
		if j.opts.NoisyVerifier {
			v.NotJudged = noisyReason
			return
		}
		// A whole repot run on the source problem (standard repair).
		j.potFamily(v, t, task.Problem, false)
	default:
		v.NotJudged = fmt.Sprintf("condition %q is not one the judge knows", t.Method)
	}
}

// setup decodes what every replay of p needs.
type setup struct {
	e          envs.Env
	p          *envs.Problem
	init, goal envs.State
	maxSteps   int
}

func newSetup(p *envs.Problem) (setup, error) {
	e, err := p.Env()
	if err != nil {
		return setup{}, err
	}
	init, err := p.Initial()
	if err != nil {
		return setup{}, fmt.Errorf("problem %s: initial state: %w", p.ProblemID, err)
	}
	goal, err := p.Goal()
	if err != nil {
		return setup{}, fmt.Errorf("problem %s: goal state: %w", p.ProblemID, err)
	}
	s := setup{e: e, p: p, init: init, goal: goal, maxSteps: p.MaxSteps}
	if s.maxSteps <= 0 {
		s.maxSteps = math.MaxInt
	}
	return s, nil
}

// replay replays moves (or a call's failure) from a state within budget.
func (s setup) replay(moves []json.RawMessage, failure string, from envs.State, budget int) replay.Result {
	if failure != "" {
		return replay.Result{Prefix: []envs.Action{}, State: from, K: -1, StopReason: failure}
	}
	return replay.Replay(s.e, s.p, from, s.goal, moves, budget)
}

// programPlan reads a program-of-thought call's plan as the runner does:
// the completion's program (which must be the recorded one, since the
// recorded stdout is its output), its sandbox failure, else the moves its
// stdout (or code) gives. failure is the stop reason when there is no plan.
func programPlan(c *contract.CallTrace) (moves []json.RawMessage, failure, inconsistent string) {
	code := program.Extract(c.Completion)
	if code != c.Code {
		return nil, "", fmt.Sprintf("call %d: the recorded program is not the completion's program", c.Index)
	}
	if strings.TrimSpace(code) == "" {
		return nil, contract.StopNoPlan, ""
	}
	if c.SandboxFailure != "" {
		return nil, contract.StopProgramError, ""
	}
	moves, err := program.ParseMoves(c.Stdout, code)
	if err != nil {
		return nil, contract.StopFormatError, ""
	}
	return moves, "", ""
}

// potFamily re-judges a run that starts with a PoT call from the initial
// state: a fresh retry (pot-retry, repot-adaptive's fresh routes) keeps the
// better of the two attempts; a repair replays its plan from the committed
// plan's verified prefix (its checkpoint) and appends it, or, for
// repot-restart (restart), replays it from the initial state on its own.
// No call may follow a plan that reached the goal.
func (j *Judge) potFamily(v *contract.TraceVerdict, t *contract.Trace, p *envs.Problem, restart bool) {
	s, err := newSetup(p)
	if err != nil {
		v.Inconsistent = err.Error()
		return
	}
	if len(t.Calls) == 0 || t.Calls[0].Purpose != contract.PurposeInitial {
		v.Inconsistent = "the run does not start with an initial call"
		return
	}
	var final replay.Result
	how := ""
	for i := range t.Calls {
		c := &t.Calls[i]
		if i > 0 && final.ReachedGoal {
			v.Inconsistent = fmt.Sprintf("call %d follows a plan that reached the goal", i)
			return
		}
		moves, failure, bad := programPlan(c)
		if bad != "" {
			v.Inconsistent = bad
			return
		}
		switch {
		case i == 0:
			final = s.replay(moves, failure, s.init, s.maxSteps)
			how = "call 0 (initial)"
		case c.Purpose == contract.PurposeFreshRetry:
			res := s.replay(moves, failure, s.init, s.maxSteps)
			if methods.Better(res, final) {
				final, how = res, fmt.Sprintf("call %d (fresh retry)", i)
			}
		case c.Purpose == contract.PurposeRepair && restart:
			final = s.replay(moves, failure, s.init, s.maxSteps)
			how = fmt.Sprintf("call %d (repair from the initial state)", i)
		case c.Purpose == contract.PurposeRepair:
			from := len(final.Prefix)
			res := s.replay(moves, failure, final.State, s.maxSteps-from)
			final = replay.Resume(final, res)
			how = fmt.Sprintf("call %d (repair from move %d)", i, from)
		default:
			v.Inconsistent = fmt.Sprintf("call %d has purpose %q, not one of %s's", i, c.Purpose, t.Method)
			return
		}
	}
	v.Judged, v.Success = true, final.ReachedGoal
	v.Detail = fmt.Sprintf("%s: %d verified moves, %s", how, len(final.Prefix), final.StopReason)
}

// samples re-judges cot (one sample) and self-consistency (samples until
// one reaches the goal): each sample's move list is read from its
// completion and replayed from the initial state.
func (j *Judge) samples(v *contract.TraceVerdict, t *contract.Trace, p *envs.Problem) {
	s, err := newSetup(p)
	if err != nil {
		v.Inconsistent = err.Error()
		return
	}
	if len(t.Calls) == 0 {
		v.Inconsistent = "the run has no call"
		return
	}
	if t.Method == contract.MethodCoT && len(t.Calls) > 1 {
		v.Inconsistent = fmt.Sprintf("cot makes one call, the trace has %d", len(t.Calls))
		return
	}
	for i := range t.Calls {
		c := &t.Calls[i]
		if c.Purpose != contract.PurposeSample {
			v.Inconsistent = fmt.Sprintf("call %d has purpose %q, not %q", i, c.Purpose, contract.PurposeSample)
			return
		}
		if v.Success {
			v.Inconsistent = fmt.Sprintf("call %d follows a sample that reached the goal", i)
			return
		}
		moves, err := program.ExtractActions(c.Completion)
		failure := ""
		if err != nil {
			failure = contract.StopFormatError
		}
		res := s.replay(moves, failure, s.init, s.maxSteps)
		if res.ReachedGoal {
			v.Success = true
			v.Detail = fmt.Sprintf("call %d (sample): %d moves reach the goal", i, len(res.Prefix))
		}
	}
	v.Judged = true
	if !v.Success {
		v.Detail = fmt.Sprintf("none of %d samples reaches the goal", len(t.Calls))
	}
}

// prompted re-judges a prompted Derail condition: the candidates of its one
// reply, replayed from last_valid_state (methods.JudgeReply).
func (j *Judge) prompted(v *contract.TraceVerdict, t *contract.Trace, task methods.DerailTask) {
	if len(t.Calls) != 1 || t.Calls[0].Purpose != contract.PurposeRecovery {
		v.Inconsistent = "a prompted condition makes one recovery call"
		return
	}
	cp, err := methods.CheckpointProblem(task, "")
	if err != nil {
		v.Inconsistent = err.Error()
		return
	}
	s, err := newSetup(task.Problem)
	if err != nil {
		v.Inconsistent = err.Error()
		return
	}
	checkpoint, err := cp.Initial()
	if err != nil {
		v.Inconsistent = err.Error()
		return
	}
	jd := methods.JudgeReply(s.e, task.Problem, checkpoint, s.goal, t.Calls[0].Completion)
	v.Judged, v.Success = true, jd.Success
	v.Detail = fmt.Sprintf("%d candidates from last_valid_state", len(jd.Candidates))
	if jd.Success {
		for i, c := range jd.Candidates {
			if c.ReachedGoal {
				v.Detail = fmt.Sprintf("candidate %d of %d (%d moves) reaches the goal from last_valid_state", i, len(jd.Candidates), c.Moves)
				break
			}
		}
	}
}
