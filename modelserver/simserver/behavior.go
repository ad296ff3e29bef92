package simserver

import (
	"encoding/json"
	"fmt"
	"math"
	"strings"

	"repot.dev/repot-operator/contract"
	"repot.dev/repot-operator/contract/prompt"
	"repot.dev/repot-operator/envs"
)

// Mode is how a simulated answer turns out.
type Mode string

// The answer modes.
const (
	ModeCorrect   Mode = "correct"
	ModeEmpty     Mode = "empty"
	ModeProse     Mode = "prose"
	ModeCrash     Mode = "crash"
	ModeWrongMove Mode = "wrong_move"
	ModeShortPlan Mode = "short_plan"
	ModeTruncated Mode = "truncated"
	// ModeChat is the answer to a prompt that is not a RePoT prompt (such as
	// the readiness check).
	ModeChat Mode = "chat"
	// ModeNoPlan is the answer when the solver finds no plan.
	ModeNoPlan Mode = "no_plan"
)

var failureModes = []Mode{ModeEmpty, ModeProse, ModeCrash, ModeWrongMove, ModeShortPlan, ModeTruncated}

func (m FailureMix) weights() []float64 {
	return []float64{m.Empty, m.Prose, m.Crash, m.WrongMove, m.ShortPlan, m.Truncated}
}

// Decision is what the simulated model decided for one prompt, before the
// reply text is written.
type Decision struct {
	Mode Mode
	// Env is the environment and Problem the problem rebuilt from the prompt.
	Env     envs.Env
	Problem *envs.Problem
	// Start is the state the answer's moves apply from.
	Start envs.State
	// Moves are the raw moves the answer's program prints (or would have).
	Moves []json.RawMessage
	// Prob is the success probability the profile gave this prompt.
	Prob float64
	// Depth is the index of the wrong move, or the length of a short plan.
	Depth int
	// Repair is the parsed repair block, nil for fresh attempts.
	Repair *prompt.ParsedRepair
}

// Decide parses msgs and draws the answer's outcome from (seed, msgs) under
// profile p. It never fails: a prompt it cannot read gets ModeChat.
func Decide(p *Profile, seed int64, msgs []contract.Message) Decision {
	parsed, err := prompt.Parse(msgs)
	if err != nil {
		return Decision{Mode: ModeChat}
	}
	e, err := envs.Lookup(parsed.Environment)
	if err != nil {
		return Decision{Mode: ModeChat}
	}
	prob := &envs.Problem{Environment: parsed.Environment, InitialState: parsed.Initial,
		GoalState: parsed.Goal, MaxSteps: parsed.MaxSteps}
	d := Decision{Env: e, Problem: prob, Repair: parsed.Repair}
	goal, err := e.DecodeState(parsed.Goal)
	if err != nil {
		d.Mode = ModeNoPlan
		return d
	}
	if r := parsed.Repair; r != nil && r.Variant != prompt.Restart {
		s, err := e.DecodeState(r.Checkpoint.State)
		if err != nil {
			d.Mode = ModeNoPlan
			return d
		}
		d.Start = s
	} else if parsed.Initial == nil {
		// No start state shown (a checkpoint problem stated in the paper's
		// one sentence): nothing to plan from.
		d.Mode = ModeNoState
		return d
	} else {
		initial, err := e.DecodeState(parsed.Initial)
		if err != nil {
			d.Mode = ModeNoPlan
			return d
		}
		d.Start = initial
	}
	startJSON := parsed.Initial
	if startJSON == nil {
		startJSON, _ = json.Marshal(d.Start)
	}
	plan, err := solve(e, d.Start, goal)
	if err != nil {
		d.Mode = ModeNoPlan
		return d
	}
	dr := promptKey(seed, msgs)
	diff := difficulty(parsed.Environment, complexityOf(parsed.Environment, startJSON))
	curve := p.solveCurve(parsed.Environment)
	mix := p.Failures
	u := dr.u("solve")
	switch r := parsed.Repair; r {
	case nil:
		d.Prob = curve.At(diff)
		if dr.u("correlated") < p.Correlation {
			u = problemKey(seed, parsed.Environment, parsed.Initial, parsed.Goal).u("solve")
		}
	default:
		mix = p.RepairFailures
		f := 0.0
		if v := r.Checkpoint.Verified; v+len(plan) > 0 {
			f = float64(v) / float64(v+len(plan))
		}
		gain := p.RepairGain * (1 - 0.5*diff)
		switch r.Variant {
		case prompt.NoPrefix:
			d.Prob = clamp01(p.RepairBase + 0.5*gain*f)
		case prompt.Restart:
			base := curve.At(diff)
			d.Prob = clamp01(base + 0.5*gain*f*(1-base))
		default:
			d.Prob = clamp01(p.RepairBase + gain*f)
		}
		if spurious(e, prob, d.Start, r.Checkpoint.Message) {
			d.Prob = 1 - p.RepairBreak
		}
		if dr.u("persistent") < p.RepairPersistence {
			u = problemKey(seed, parsed.Environment, parsed.Initial, parsed.Goal).u("repair")
		}
	}
	raw := make([]json.RawMessage, len(plan))
	for i, a := range plan {
		raw[i] = e.RawMove(a)
	}
	if u < d.Prob || len(plan) == 0 {
		d.Mode, d.Moves = ModeCorrect, raw
		return d
	}
	d.Mode = failureModes[pick(dr.u("mode"), mix.weights())]
	depth := int(math.Floor(math.Pow(dr.u("depth"), p.DepthShape) * float64(len(plan))))
	depth = min(max(depth, 0), len(plan)-1)
	d.Depth = depth
	switch d.Mode {
	case ModeWrongMove:
		bad := illegalMove(e, prob, d.Start, plan, depth)
		d.Moves = append(append(append([]json.RawMessage{}, raw[:depth]...), bad), raw[depth+1:]...)
	case ModeShortPlan:
		if depth == 0 {
			d.Mode = ModeEmpty
			break
		}
		d.Moves = raw[:depth]
	default:
		d.Moves = raw
	}
	return d
}

// illegalMove finds a raw move that is rejected in the state reached after
// plan[:depth]: preferably another move of the plan that is illegal there
// (a plausible slip), else one that fails to normalize.
func illegalMove(e envs.Env, p *envs.Problem, start envs.State, plan []envs.Action, depth int) json.RawMessage {
	s := start
	for _, a := range plan[:depth] {
		st := e.Step(s, a)
		if !st.Valid {
			break
		}
		s = st.Next
	}
	order := make([]int, 0, len(plan))
	for j := depth + 1; j < len(plan); j++ {
		order = append(order, j)
	}
	for j := depth - 1; j >= 0; j-- {
		order = append(order, j)
	}
	for _, j := range order {
		raw := e.RawMove(plan[j])
		a, err := e.Normalize(p, s, raw)
		if err != nil {
			continue
		}
		if st := e.Step(s, a); !st.Valid {
			return raw
		}
	}
	for _, cand := range []string{`[99, 0, 1]`, `["nobody"]`, `["fly", "z"]`, `[0]`} {
		raw := json.RawMessage(cand)
		a, err := e.Normalize(p, s, raw)
		if err != nil {
			return raw
		}
		if st := e.Step(s, a); !st.Valid {
			return raw
		}
	}
	return json.RawMessage(fmt.Sprintf(`["no-such-move-%d"]`, depth))
}

// spurious reports whether a repair prompt's message rejects a move that is
// legal at the checkpoint: the verdict of a noisy verifier on a valid plan.
// The message has the verifier's form "Move N (MOVE) is invalid: ...".
func spurious(e envs.Env, p *envs.Problem, at envs.State, message string) bool {
	open := strings.Index(message, " (")
	end := strings.Index(message, ") is invalid:")
	if !strings.HasPrefix(message, "Move ") || open < 0 || end < open+2 {
		return false
	}
	a, err := e.Normalize(p, at, json.RawMessage(message[open+2:end]))
	if err != nil {
		return false
	}
	return e.Step(at, a).Valid
}
