package simserver

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"strings"

	"repot.dev/repot-operator/contract"
	"repot.dev/repot-operator/contract/prompt"
	"repot.dev/repot-operator/envs"
)

// Modes of simulated answers to prompted Derail-550 recovery prompts and to
// prompts that show no start state.
const (
	// ModeContinue is a recovery answer that carries on from the trace's
	// current (derailed) state instead of rolling back.
	ModeContinue Mode = "continue_from_current"
	// ModeNoState answers a first call that shows no start state (the
	// paper's one-sentence checkpoint statement): no plan can be computed.
	ModeNoState Mode = "no_state"
)

// Information levels of a recovery prompt, from what it carries.
const (
	infoNone       = "no_feedback"
	infoError      = "error_only"
	infoCheckpoint = "state_feedback"
	infoLegal      = "state_plus_legal_actions"
)

// recoveryFactor scales the profile's capability by what the prompt tells
// the model: a checkpoint, and legal moves from it, help most; an error
// signal alone little; nothing at all, almost nothing.
var recoveryFactor = map[string]float64{
	infoNone:       0.04,
	infoError:      0.18,
	infoCheckpoint: 0.62,
	infoLegal:      0.85,
}

// recoveryInfo names the information level of a parsed recovery prompt.
func recoveryInfo(r prompt.ParsedRecovery) string {
	switch {
	case r.Legal != nil:
		return infoLegal
	case r.Checkpoint != nil:
		return infoCheckpoint
	case r.Flagged:
		return infoError
	}
	return infoNone
}

// RecoveryDecision is the simulated answer to a recovery prompt.
type RecoveryDecision struct {
	Decision
	// Info is the prompt's information level (the condition it encodes).
	Info string
	// Draft, when not nil, is an earlier list the answer shows before its
	// final one.
	Draft []json.RawMessage
}

// DecideRecovery draws the answer to a prompted Derail-550 recovery prompt.
// The chance that the answer rolls back to the checkpoint and reaches the
// goal is the profile's fresh-attempt capability at the case's difficulty,
// lifted to 0.25 + 0.75 x capability, times the prompt's information
// factor. ok is false when msgs are not a recovery prompt.
func DecideRecovery(p *Profile, seed int64, msgs []contract.Message) (RecoveryDecision, bool) {
	r, err := prompt.ParseRecovery(msgs)
	if err != nil {
		return RecoveryDecision{}, false
	}
	d := RecoveryDecision{Info: recoveryInfo(r)}
	d.Mode = ModeNoPlan
	e, err := envs.Lookup(r.Environment)
	if err != nil {
		return d, true
	}
	goal, err1 := e.DecodeState(r.Goal)
	current, err2 := e.DecodeState(r.Current)
	if err1 != nil || err2 != nil {
		return d, true
	}
	// The checkpoint is the state after the verified trace from the
	// initial state; whether the answer rolls back to it is what the
	// information factor decides.
	checkpoint, ok := replayTrace(e, r)
	if !ok {
		return d, true
	}
	prob := &envs.Problem{Environment: r.Environment, GoalState: r.Goal}
	d.Env, d.Problem, d.Start = e, prob, checkpoint
	plan, err := solve(e, checkpoint, goal)
	if err != nil || len(plan) == 0 {
		return d, true
	}
	raw := rawMoves(e, plan)
	cpJSON, _ := json.Marshal(checkpoint)
	diff := difficulty(r.Environment, complexityOf(r.Environment, cpJSON))
	capability := p.solveCurve(r.Environment).At(diff)
	d.Prob = clamp01(recoveryFactor[d.Info] * (0.25 + 0.75*capability))
	dr := promptKey(seed, msgs)
	// The success draw is shared by every condition of the same case (the
	// same puzzle, trace and derailment): more information lifts the same
	// latent draw, so a case recovered with less information is recovered
	// with more.
	caseDraw := problemKey(seed, r.Environment, r.Initial, []byte(string(r.Goal)+"\x00"+string(r.Next)+"\x00"+string(r.Current)+"\x00"+jsonList(r.Trace)))
	if dr.u("draft") < 0.3 {
		if cur, err := solve(e, current, goal); err == nil && len(cur) > 0 {
			d.Draft = rawMoves(e, cur)
		}
	}
	if caseDraw.u("recover") < d.Prob {
		d.Mode, d.Moves = ModeCorrect, raw
		return d, true
	}
	derailed := !sameJSON(cpJSON, r.Current)
	weights := []float64{0, 3, 1, 1} // continue, wrong move, short plan, prose
	if derailed && d.Info != infoCheckpoint && d.Info != infoLegal {
		weights[0] = 6
	}
	modes := []Mode{ModeContinue, ModeWrongMove, ModeShortPlan, ModeProse}
	d.Mode = modes[pick(dr.u("mode"), weights)]
	depth := int(math.Floor(math.Pow(dr.u("depth"), p.DepthShape) * float64(len(plan))))
	d.Depth = min(max(depth, 0), len(plan)-1)
	switch d.Mode {
	case ModeContinue:
		cur, err := solve(e, current, goal)
		if err != nil || len(cur) == 0 {
			d.Mode = ModeProse
			break
		}
		d.Moves = rawMoves(e, cur)
	case ModeWrongMove:
		bad := illegalMove(e, prob, checkpoint, plan, d.Depth)
		d.Moves = append(append(append([]json.RawMessage{}, raw[:d.Depth]...), bad), raw[d.Depth+1:]...)
	case ModeShortPlan:
		if d.Depth == 0 {
			d.Mode = ModeProse
			break
		}
		d.Moves = raw[:d.Depth]
	}
	return d, true
}

// replayTrace applies the prompt's verified trace to its initial state.
func replayTrace(e envs.Env, r prompt.ParsedRecovery) (envs.State, bool) {
	s, err := e.DecodeState(r.Initial)
	if err != nil {
		return nil, false
	}
	p := &envs.Problem{Environment: r.Environment, InitialState: r.Initial, GoalState: r.Goal}
	for _, raw := range r.Trace {
		a, err := e.Normalize(p, s, raw)
		if err != nil {
			return nil, false
		}
		st := e.Step(s, a)
		if !st.Valid {
			return nil, false
		}
		s = st.Next
	}
	return s, true
}

func sameJSON(a, b []byte) bool {
	var x, y bytes.Buffer
	if json.Compact(&x, a) != nil || json.Compact(&y, b) != nil {
		return false
	}
	return bytes.Equal(x.Bytes(), y.Bytes())
}

func rawMoves(e envs.Env, plan []envs.Action) []json.RawMessage {
	out := make([]json.RawMessage, len(plan))
	for i, a := range plan {
		out[i] = e.RawMove(a)
	}
	return out
}

// RenderRecovery writes the reply to a recovery prompt: prose, an optional
// draft list, then the answer's list in a JSON block and once more after
// "Final answer:". Cut at maxTokens like Render.
func RenderRecovery(d RecoveryDecision, maxTokens int) Reply {
	if maxTokens <= 0 {
		maxTokens = DefaultMaxTokens
	}
	var b strings.Builder
	switch d.Mode {
	case ModeNoPlan:
		b.WriteString("I could not work out the moves for this puzzle. (repot simulation)\n")
	case ModeProse:
		b.WriteString("The trace went wrong somewhere, but I am not able to say which moves fix it.\n")
	default:
		if d.Draft != nil {
			fmt.Fprintf(&b, "Carrying on from where the trace is now would give %s.\n", jsonList(d.Draft))
			b.WriteString("Let me check that against what the feedback says.\n\n")
		}
		from := "the checkpoint"
		if d.Mode == ModeContinue {
			from = "the trace's current state"
		}
		fmt.Fprintf(&b, "Working from %s, the moves are:\n\n```json\n%s\n```\n\nFinal answer: %s\n", from, jsonList(d.Moves), jsonList(d.Moves))
	}
	content := b.String()
	if limit := maxTokens * CharsPerToken; len(content) > limit {
		return Reply{Content: content[:limit], FinishReason: "length"}
	}
	return Reply{Content: content, FinishReason: "stop"}
}

func jsonList(moves []json.RawMessage) string {
	var b strings.Builder
	b.WriteByte('[')
	for i, m := range moves {
		if i > 0 {
			b.WriteString(", ")
		}
		var c bytes.Buffer
		if json.Compact(&c, m) == nil {
			b.Write(c.Bytes())
		} else {
			b.Write(m)
		}
	}
	b.WriteByte(']')
	return b.String()
}
