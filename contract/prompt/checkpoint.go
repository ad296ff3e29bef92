package prompt

import (
	"encoding/json"
	"fmt"

	"repot.dev/repot-operator/envs"
)

// NewCheckpoint builds the checkpoint of a verified prefix: the prefix's
// actions (all of them; the last TailLen are shown), the state after them,
// and the verifier's message. Legal moves are computed from the state.
func NewCheckpoint(e envs.Env, prefix []envs.Action, state envs.State, message string) (Checkpoint, error) {
	st, err := json.Marshal(state)
	if err != nil {
		return Checkpoint{}, fmt.Errorf("encode verified state: %w", err)
	}
	c := Checkpoint{Verified: len(prefix), State: st, Message: oneLineText(message)}
	from := max(len(prefix)-TailLen, 0)
	for _, a := range prefix[from:] {
		c.Tail = append(c.Tail, compact(e.RawMove(a)))
	}
	legal := e.Legal(state)
	c.LegalTotal = len(legal)
	for i, a := range legal {
		if i == MaxLegal {
			break
		}
		c.Legal = append(c.Legal, compact(e.RawMove(a)))
	}
	return c, nil
}

func compact(raw json.RawMessage) json.RawMessage { return json.RawMessage(oneLine(raw)) }
