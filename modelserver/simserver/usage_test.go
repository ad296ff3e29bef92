package simserver

import (
	"encoding/json"
	"testing"

	"repot.dev/repot-operator/contract/prompt"
	"repot.dev/repot-operator/envs"
)

// TestCachedTokensOfVEXChunks: a VEX run's first chunk prompt has only its
// system message cached; a later chunk of the run has its stable part
// cached too, as a repair prompt has.
func TestCachedTokensOfVEXChunks(t *testing.T) {
	p := &envs.Problem{ProblemID: "h3", Environment: envs.HanoiName, MaxSteps: 14,
		InitialState: json.RawMessage(`{"peg_names":["A","B","C"],"pegs":{"A":[3,2,1],"B":[],"C":[]}}`),
		GoalState:    json.RawMessage(`{"peg_names":["A","B","C"],"pegs":{"A":[],"B":[],"C":[3,2,1]}}`)}
	e, err := p.Env()
	if err != nil {
		t.Fatal(err)
	}
	init, _ := p.Initial()
	a, err := e.Normalize(p, init, json.RawMessage(`[1, 0, 2]`))
	if err != nil {
		t.Fatal(err)
	}
	after := e.Step(init, a).Next
	first, err := prompt.NewChunk(e, "json", nil, init, nil, "", 8, false)
	if err != nil {
		t.Fatal(err)
	}
	later, err := prompt.NewChunk(e, "json", []envs.Action{a}, after, nil, "", 8, false)
	if err != nil {
		t.Fatal(err)
	}
	d := Decision{Mode: ModeCorrect}
	system := prompt.ChunkPrompt(p, first)[:1]
	sysOnly := cachedTokens(system, d)
	if got := cachedTokens(prompt.ChunkPrompt(p, first), d); got != sysOnly {
		t.Errorf("the first chunk has %d tokens cached, want the system message's %d", got, sysOnly)
	}
	if got := cachedTokens(prompt.ChunkPrompt(p, later), d); got <= sysOnly {
		t.Errorf("a later chunk has %d tokens cached, want more than the system message's %d", got, sysOnly)
	}
}
