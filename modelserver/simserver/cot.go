package simserver

import (
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"math"
	"strconv"

	"repot.dev/repot-operator/contract/prompt"
	"repot.dev/repot-operator/envs"
)

// cotPlanScale is the plan length at which a chain-of-thought answer's
// chance of success is half the profile's PoT capability: writing every
// move out by hand slips more often the longer the plan, where a program
// computes it (CoTFactor).
const cotPlanScale = 30.0

// CoTFactor scales the profile's PoT capability for a chain-of-thought
// answer whose correct plan has n moves: 1/(1+n/30), so short plans are
// answered about as well as by a program and long ones much worse (a
// 255-move Hanoi plan keeps about a ninth).
func CoTFactor(n int) float64 { return 1 / (1 + float64(n)/cotPlanScale) }

// cotCorrelation is the share of the profile's Correlation that a CoT
// sample keeps: a sample reuses the problem's own success draw (shared by
// every sample of the problem) with probability Correlation/2, else it
// draws afresh, so self-consistency's samples are partly independent.
const cotCorrelation = 0.5

// cotFailures are the failure modes of a chain-of-thought answer, with
// their weights: a wrong move mid-plan, a plan that stops short, prose
// without a list, an answer cut off in the middle of its list.
var (
	cotFailures      = []Mode{ModeWrongMove, ModeShortPlan, ModeProse, ModeTruncated}
	cotFailureWeight = []float64{4, 2, 1, 1}
)

// decideCoT answers the chain-of-thought prompts of cot and
// self-consistency (prompt.IsSample) with the moves as {"actions": [...]}
// JSON, drawn by drawCoT and written by renderCoT.
func decideCoT(p *Profile, seed int64, c Call) (Decision, Reply, bool) {
	if !prompt.IsSample(c.Messages) {
		return Decision{}, Reply{}, false
	}
	d, dr := drawCoT(p, seed, c)
	return d, renderCoT(d, dr, c.MaxTokens), true
}

// cotDrawer is the draw of a chain-of-thought call: from (seed, prompt),
// with the request's seed folded in when it samples (temperature above 0
// and a seed given), so that samples of one prompt are independent yet
// reproducible; at temperature 0 identical prompts get identical answers.
func cotDrawer(seed int64, c Call) drawer {
	dr := promptKey(seed, c.Messages)
	if c.Temperature > 0 && c.Seed != nil {
		h := sha256.New()
		h.Write(dr.key[:])
		h.Write([]byte("\x00sample-seed\x00" + strconv.FormatInt(*c.Seed, 10)))
		copy(dr.key[:], h.Sum(nil))
	}
	return dr
}

// drawCoT draws the answer to a chain-of-thought prompt under profile p:
// it succeeds with probability capability x CoTFactor(len(plan)), where
// capability is the profile's PoT success curve at the problem's
// difficulty (as Decide gives a first PoT call); a failure is a wrong move
// mid-plan, a short plan, prose without a list, or a truncated answer. It
// returns the drawer the reply is written with.
func drawCoT(p *Profile, seed int64, c Call) (Decision, drawer) {
	dr := cotDrawer(seed, c)
	parsed, err := prompt.Parse(c.Messages)
	if err != nil {
		return Decision{Mode: ModeChat}, dr
	}
	e, err := envs.Lookup(parsed.Environment)
	if err != nil {
		return Decision{Mode: ModeChat}, dr
	}
	prob := &envs.Problem{Environment: parsed.Environment, InitialState: parsed.Initial, GoalState: parsed.Goal, MaxSteps: parsed.MaxSteps}
	d := Decision{Env: e, Problem: prob, Mode: ModeNoPlan}
	if parsed.Initial == nil {
		d.Mode = ModeNoState
		return d, dr
	}
	initial, err1 := e.DecodeState(parsed.Initial)
	goal, err2 := e.DecodeState(parsed.Goal)
	if err1 != nil || err2 != nil {
		return d, dr
	}
	d.Start = initial
	plan, err := solve(e, initial, goal)
	if err != nil {
		return d, dr
	}
	raw := rawMoves(e, plan)
	diff := difficulty(parsed.Environment, complexityOf(parsed.Environment, parsed.Initial))
	d.Prob = p.solveCurve(parsed.Environment).At(diff) * CoTFactor(len(plan))
	u := dr.u("solve")
	if dr.u("correlated") < p.Correlation*cotCorrelation {
		u = problemKey(seed, parsed.Environment, parsed.Initial, parsed.Goal).u("cot-solve")
	}
	if u < d.Prob || len(plan) == 0 {
		d.Mode, d.Moves = ModeCorrect, raw
		return d, dr
	}
	d.Mode = cotFailures[pick(dr.u("mode"), cotFailureWeight)]
	depth := int(math.Floor(math.Pow(dr.u("depth"), p.DepthShape) * float64(len(plan))))
	d.Depth = min(max(depth, 0), len(plan)-1)
	switch d.Mode {
	case ModeWrongMove:
		bad := illegalMove(e, prob, initial, plan, d.Depth)
		d.Moves = append(append(append([]json.RawMessage{}, raw[:d.Depth]...), bad), raw[d.Depth+1:]...)
	case ModeShortPlan:
		if d.Depth == 0 {
			d.Mode = ModeProse
			break
		}
		d.Moves = raw[:d.Depth]
	default:
		d.Moves = raw
	}
	return d, dr
}

// renderCoT writes a chain-of-thought answer. The moves come as
// {"actions": [...]}, in one of three drawn styles (the bare object, prose
// then a ```json block, prose then the object inline) so that the runner's
// parser meets each; prose has no list; a truncated answer stops in the
// middle of its list with finish reason "length". Cut at maxTokens like
// Render.
func renderCoT(d Decision, dr drawer, maxTokens int) Reply {
	if maxTokens <= 0 {
		maxTokens = DefaultMaxTokens
	}
	var content string
	obj := `{"actions": ` + jsonList(d.Moves) + `}`
	lead := ""
	if d.Problem != nil {
		lead = fmt.Sprintf("Let me plan this %s puzzle step by step, tracking the state after every move.\n\n", d.Problem.Environment)
	}
	switch d.Mode {
	case ModeChat:
		content = "OK. (This is the repot simulation, a stand-in for a language model; it answers RePoT planning prompts.)"
	case ModeNoPlan, ModeNoState:
		content = "I could not work out a plan for this problem."
	case ModeProse:
		content = lead + "The idea is to clear the way for the largest piece first, then rebuild on the target in order. " +
			"Following that strategy carefully leads to the goal state.\n"
	case ModeTruncated:
		full := lead + "```json\n" + obj + "\n```\n"
		cut := len(lead) + len("```json\n") + len(obj)/2
		return Reply{Content: full[:min(cut, len(full))], FinishReason: "length"}
	default:
		switch pick(dr.u("style"), []float64{1, 1, 1}) {
		case 0:
			content = obj
		case 1:
			content = lead + "Checking each move against the rules, the complete plan is:\n\n```json\n" + obj + "\n```\n"
		default:
			content = lead + "Putting the moves together, my answer is " + obj + "\n"
		}
	}
	if limit := maxTokens * CharsPerToken; len(content) > limit {
		return Reply{Content: content[:limit], FinishReason: "length"}
	}
	return Reply{Content: content, FinishReason: "stop"}
}
