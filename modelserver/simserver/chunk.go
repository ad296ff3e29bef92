package simserver

import (
	"encoding/json"
	"fmt"
	"math"
	"strings"

	"repot.dev/repot-operator/contract/prompt"
	"repot.dev/repot-operator/envs"
)

// Chunk success: a proposal of k moves out of a whole plan of n (verified
// moves plus the moves left) is all correct with probability
// chunkFloor + (1-chunkFloor) x c^(k/n), where c is the profile's
// whole-plan success at the problem's difficulty: a short chunk is much
// likelier to be right than a whole plan, and even a model that never
// writes a whole plan right gets some chunks right.
const chunkFloor = 0.3

// decideChunk answers a VEX proposal prompt (prompt.ChunkPrompt): it
// solves the problem from the prompt's verified state and proposes its
// first Size moves. With the chunk success probability they are all
// correct; otherwise the move at a drawn slot is replaced by a move the
// verifier rejects there (never one of the moves the prompt lists as
// rejected), so the verifier rolls back from it. The JSON proposer's
// answer is {"actions":[...]}, sometimes in a fenced block with prose
// around it; the code proposer's is a Python program printing the moves.
// ok is false when the prompt is not a proposal prompt.
func decideChunk(p *Profile, seed int64, c Call) (Decision, Reply, bool) {
	pc, err := prompt.ParseChunk(c.Messages)
	if err != nil {
		return Decision{}, Reply{}, false
	}
	dr := promptKey(seed, c.Messages)
	d := Decision{Mode: ModeNoPlan, Problem: &envs.Problem{Environment: pc.Environment, InitialState: pc.Initial, GoalState: pc.Goal, MaxSteps: pc.MaxSteps}}
	e, err := envs.Lookup(pc.Environment)
	if err != nil {
		return d, renderChunk(d, pc.Chunk.Proposer, dr, c.MaxTokens), true
	}
	d.Env = e
	goal, err1 := e.DecodeState(pc.Goal)
	state, err2 := e.DecodeState(pc.Chunk.State)
	if err1 != nil || err2 != nil {
		return d, renderChunk(d, pc.Chunk.Proposer, dr, c.MaxTokens), true
	}
	d.Start = state
	plan, err := solve(e, state, goal)
	if err != nil {
		return d, renderChunk(d, pc.Chunk.Proposer, dr, c.MaxTokens), true
	}
	k := min(pc.Chunk.Size, len(plan))
	raw := rawMoves(e, plan[:k])
	startJSON := pc.Initial
	if startJSON == nil {
		startJSON = pc.Chunk.State
	}
	whole := p.solveCurve(pc.Environment).At(difficulty(pc.Environment, complexityOf(pc.Environment, startJSON)))
	frac := 1.0
	if n := pc.Chunk.Verified + len(plan); n > 0 {
		frac = float64(k) / float64(n)
	}
	d.Prob = clamp01(chunkFloor + (1-chunkFloor)*math.Pow(whole, frac))
	if k == 0 || dr.u("chunk") < d.Prob {
		d.Mode, d.Moves = ModeCorrect, raw
		return d, renderChunk(d, pc.Chunk.Proposer, dr, c.MaxTokens), true
	}
	j := min(int(dr.u("slot")*float64(k)), k-1)
	bad := chunkIllegal(e, d.Problem, state, plan, j, pc.Chunk.Blocked)
	d.Mode, d.Depth = ModeWrongMove, j
	d.Moves = append(append(append([]json.RawMessage{}, raw[:j]...), bad), raw[j+1:]...)
	return d, renderChunk(d, pc.Chunk.Proposer, dr, c.MaxTokens), true
}

// chunkIllegal is a move the verifier rejects after plan[:j] from state
// and that is not among the moves already rejected at state.
func chunkIllegal(e envs.Env, p *envs.Problem, state envs.State, plan []envs.Action, j int, blocked []prompt.BlockedMove) json.RawMessage {
	bad := illegalMove(e, p, state, plan, j)
	if j > 0 || !isRejected(e, p, state, bad, blocked) {
		return bad
	}
	for _, a := range plan {
		raw := e.RawMove(a)
		n, err := e.Normalize(p, state, raw)
		if err == nil && !e.Step(state, n).Valid && !isRejected(e, p, state, raw, blocked) {
			return raw
		}
	}
	// A move that does not even read is never on the rejected list (the
	// list holds moves the verifier stepped and rejected).
	return json.RawMessage(`["no-such-move"]`)
}

// isRejected reports whether raw is, once normalized at state, one of the
// blocked moves.
func isRejected(e envs.Env, p *envs.Problem, state envs.State, raw json.RawMessage, blocked []prompt.BlockedMove) bool {
	a, err := e.Normalize(p, state, raw)
	if err != nil {
		return false
	}
	sig, err := json.Marshal(a)
	if err != nil {
		return false
	}
	for _, b := range blocked {
		if n, err := e.Normalize(p, state, b.Move); err == nil {
			if bs, err := json.Marshal(n); err == nil && string(bs) == string(sig) {
				return true
			}
		}
	}
	return false
}

// renderChunk writes the answer to a proposal prompt, cut at maxTokens like
// Render.
func renderChunk(d Decision, proposer string, dr drawer, maxTokens int) Reply {
	if proposer == prompt.ChunkCode {
		return Render(d, maxTokens, false)
	}
	if maxTokens <= 0 {
		maxTokens = DefaultMaxTokens
	}
	var b strings.Builder
	switch {
	case d.Mode == ModeNoPlan:
		b.WriteString("I could not work out the next moves for this puzzle. (repot simulation)\n")
	case dr.u("prose") < 0.3:
		fmt.Fprintf(&b, "Continuing from the verified state, the next %d moves are:\n\n```json\n{\"actions\": %s}\n```\n\nThey follow the rules as far as I can tell.\n", len(d.Moves), jsonList(d.Moves))
	default:
		fmt.Fprintf(&b, "{\"actions\": %s}", jsonList(d.Moves))
	}
	content := b.String()
	if limit := maxTokens * CharsPerToken; len(content) > limit {
		return Reply{Content: content[:limit], FinishReason: "length"}
	}
	return Reply{Content: content, FinishReason: "stop"}
}
