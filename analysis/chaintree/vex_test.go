package chaintree

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"repot.dev/repot-operator/contract"
	"repot.dev/repot-operator/runner/methods"
	"repot.dev/repot-operator/runner/runnertest"
)

// chunk is a JSON chunk reply of moves.
func chunk(moves ...json.RawMessage) runnertest.Reply {
	parts := make([]string, len(moves))
	for i, m := range moves {
		parts[i] = string(m)
	}
	return runnertest.Reply{Raw: true, Code: `{"actions": [` + strings.Join(parts, ", ") + `]}`}
}

// TestVEXTraceChains: a VEX run's chunks continue from the moves verified
// before them, so its chain tree is one path from the start: the solved
// branch is the whole plan (not each chunk from the start), the backtrack
// hangs off the moves verified when the chunk was rejected, and a move the
// run skipped as blocked is no node.
func TestVEXTraceChains(t *testing.T) {
	f := hanoi(t)
	illegal := json.RawMessage(`[4, 0, 2]`)
	client := &runnertest.ScriptedClient{Script: []runnertest.Reply{
		// Five moves, then one the verifier rejects.
		chunk(append(append([]json.RawMessage{}, f.model[:5]...), illegal)...),
		// The rejected move again (skipped: blocked at that state), then
		// five more.
		chunk(append([]json.RawMessage{illegal}, f.model[5:10]...)...),
		chunk(f.model[10:]...),
	}}
	opts := methods.DefaultOptions()
	opts.Model = "m"
	opts.VEX.Proposer[f.p.Environment] = methods.ProposerJSON
	deps := methods.Deps{Client: client, Sandbox: runnertest.FakeSandbox, Clock: runnertest.NewFakeClock()}
	rec, tr, err := methods.RunProblem(context.Background(), deps, opts, f.p, contract.MethodVEX)
	if err != nil {
		t.Fatal(err)
	}
	if !rec.Success || rec.Calls != 3 || rec.VEX.Rollbacks != 1 {
		t.Fatalf("the scripted VEX run: success %v, %d calls, vex %+v; want success in 3 calls with 1 rollback", rec.Success, rec.Calls, rec.VEX)
	}
	exs, err := Examples(&tr, Options{})
	if err != nil {
		t.Fatal(err)
	}
	var backtracks, continues [][]string
	var answer []string
	for _, ex := range exs {
		switch ex.Action {
		case ActionBacktrack:
			backtracks = append(backtracks, movesOf(ex))
		case ActionContinue:
			continues = append(continues, movesOf(ex))
		case ActionAnswer:
			answer = movesOf(ex)
		}
	}
	str := func(ms []json.RawMessage) []string {
		out := make([]string, len(ms))
		for i, m := range ms {
			out[i] = string(compactRaw(m))
		}
		return out
	}
	if diff := cmp.Diff(str(f.model), answer); diff != "" {
		t.Errorf("the answer's path (-the whole plan +got):\n%s", diff)
	}
	if len(continues) != len(f.model) {
		t.Errorf("%d continue examples, want one per move of the plan (%d)", len(continues), len(f.model))
	}
	want := [][]string{str(append(append([]json.RawMessage{}, f.model[:5]...), illegal))}
	if diff := cmp.Diff(want, backtracks); diff != "" {
		t.Errorf("backtracks (-want +got):\n%s", diff)
	}
}
