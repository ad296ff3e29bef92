package simserver

import (
	"encoding/json"
	"fmt"
	"slices"

	"repot.dev/repot-operator/contract/prompt"
	"repot.dev/repot-operator/envs"
)

// ModeUnknownID is a step answer that names an id no option has.
const ModeUnknownID Mode = "unknown_id"

// ModeBlockedID is a step answer that names an id blocked at the state.
const ModeBlockedID Mode = "blocked_id"

// stepFloor and stepGain give the chance that a step answer names a move
// on a shortest path to the goal: stepFloor + stepGain x the profile's
// fresh-attempt capability at the state's difficulty (one move is far
// easier than a whole plan: 0.9 for a strong profile on small problems).
const (
	stepFloor = 0.6
	stepGain  = 0.4
)

// stepWeights weigh the wrong answers: another legal id, an unknown id, a
// blocked id (when there is one), a reply without JSON.
var stepWeights = []float64{5, 1.5, 1, 1}

// decideStep answers the step-by-step agent's action-choice prompts
// (prompt.StepPrompt): with probability stepFloor + stepGain x capability
// the id of the first move of a shortest path from the shown state to the
// goal, ranked first; otherwise another legal id (ranked before the right
// one), an id no option has, a blocked id, or prose. The draws come from
// the whole prompt, so a retry (its blocked ids and reason differ) draws
// afresh.
func decideStep(p *Profile, seed int64, c Call) (Decision, Reply, bool) {
	ps, err := prompt.ParseStep(c.Messages)
	if err != nil {
		return Decision{}, Reply{}, false
	}
	d := Decision{Mode: ModeProse}
	prose := Reply{Content: "I am not sure which move to take next. (repot simulation)", FinishReason: "stop"}
	e, err := envs.Lookup(ps.Environment)
	if err != nil {
		return d, prose, true
	}
	state, err1 := e.DecodeState(ps.State)
	goal, err2 := e.DecodeState(ps.Goal)
	if err1 != nil || err2 != nil || len(ps.Options) == 0 {
		return d, prose, true
	}
	d.Env, d.Start = e, state
	d.Problem = &envs.Problem{Environment: ps.Environment, InitialState: ps.State, GoalState: ps.Goal}
	right := ""
	if plan, err := solve(e, state, goal); err == nil && len(plan) > 0 {
		move := string(e.RawMove(plan[0]))
		for _, o := range ps.Options {
			if string(o.Move) == move {
				right = o.ID
				break
			}
		}
		d.Moves = rawMoves(e, plan)
	}
	capability := p.solveCurve(ps.Environment).At(difficulty(ps.Environment, complexityOf(ps.Environment, ps.State)))
	d.Prob = clamp01(stepFloor + stepGain*capability)
	dr := promptKey(seed, c.Messages)
	var others []string
	for _, o := range ps.Options {
		if o.ID != right && !slices.Contains(ps.Blocked, o.ID) {
			others = append(others, o.ID)
		}
	}
	if right != "" && dr.u("step") < d.Prob {
		d.Mode = ModeCorrect
		return d, stepReply(right, append([]string{right}, others...)), true
	}
	weights := append([]float64{}, stepWeights...)
	if len(others) == 0 {
		weights[0] = 0
	}
	if len(ps.Blocked) == 0 {
		weights[2] = 0
	}
	ranked := func(first string) []string {
		out := []string{first}
		if right != "" {
			out = append(out, right)
		}
		return out
	}
	switch pick(dr.u("wrong"), weights) {
	case 0:
		d.Mode = ModeWrongMove
		id := others[int(dr.u("which")*float64(len(others)))%len(others)]
		return d, stepReply(id, ranked(id)), true
	case 1:
		d.Mode = ModeUnknownID
		id := fmt.Sprintf("a%d", len(ps.Options)+int(dr.u("which")*3))
		return d, stepReply(id, []string{id}), true
	case 2:
		d.Mode = ModeBlockedID
		id := ps.Blocked[int(dr.u("which")*float64(len(ps.Blocked)))%len(ps.Blocked)]
		return d, stepReply(id, []string{id}), true
	}
	return d, prose, true
}

// stepReply renders an action choice as the JSON object the prompt asks
// for.
func stepReply(id string, ranked []string) Reply {
	b, _ := json.Marshal(struct {
		ActionID  string   `json:"action_id"`
		Ranked    []string `json:"ranked_action_ids"`
		Rationale string   `json:"rationale"`
	}{id, ranked, "repot simulation"})
	return Reply{Content: string(b), FinishReason: "stop"}
}
