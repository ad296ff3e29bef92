package methods

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"

	"repot.dev/repot-operator/contract"
	"repot.dev/repot-operator/envs"
)

// blocksInline is a three-block problem that the moves B 1->2 then C 0->2
// solve.
func blocksInline() *envs.Problem {
	return &envs.Problem{
		ProblemID: "blocks_inline", Environment: envs.BlocksName, Complexity: 3,
		InitialState: json.RawMessage(`{"blocks":["A","B","C"],"stacks":[["C"],["B"],["A"]]}`),
		GoalState:    json.RawMessage(`{"blocks":["A","B","C"],"stacks":[[],[],["A","B","C"]]}`),
		MinSteps:     2, MaxSteps: 10,
	}
}

// TestJudgeReplyNoisyJSON pins replies whose move objects carry extra keys
// with strings that hold brackets, escaped quotes and apostrophes, after a
// line of prose: the reference reads them (a JSON decode at the '[', extra
// keys kept) and the moves solve the problem.
func TestJudgeReplyNoisyJSON(t *testing.T) {
	p := blocksInline()
	e, err := p.Env()
	if err != nil {
		t.Fatal(err)
	}
	s, _ := p.Initial()
	goal, _ := p.Goal()
	tests := []struct {
		name    string
		reply   string
		success bool
		stop    string
	}{
		{"prose, then a list with a bracket, escaped quotes and an apostrophe in a note",
			"Plan:\n" + `[{"block": "B", "from": 1, "to": 2, "type": "move", "note": "put ] aside, then \"the rest\" (it's fine)"}, {"block": "C", "from": 0, "to": 2, "type": "move", "note": "x"}]` + "\nDone.",
			true, contract.StopGoal},
		{"nested lists in a note",
			"Plan:\n" + `[{"block": "B", "from": 1, "to": 2, "type": "move", "note": "[[1], [2, [3]]] ]]"}, {"block": "C", "from": 0, "to": 2, "type": "move", "note": [[0, 1], ["]"]]}]` + "\nDone.",
			true, contract.StopGoal},
		{"a closing bracket in the first string",
			"Here it is:\n" + `[{"note": "]", "block": "B", "from": 1, "to": 2, "type": "move"}, {"block": "C", "from": 0, "to": 2, "type": "move"}]`,
			true, contract.StopGoal},
		{"a Python literal with an apostrophe inside double quotes",
			"Plan:\n" + `[{'block': 'B', 'from': 1, 'to': 2, 'note': "it's ] fine"}, {'block': 'C', 'from': 0, 'to': 2, 'note': 'x'}]` + "\nDone.",
			true, contract.StopGoal},
		{"the same noisy list with a wrong move fails",
			"Plan:\n" + `[{"block": "C", "from": 1, "to": 2, "type": "move", "note": "put ] aside, then \"the rest\" (it's fine)"}]`,
			false, contract.StopInvalidMove},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			j := JudgeReply(e, p, s, goal, tc.reply)
			stop := ""
			if j.Chosen >= 0 {
				stop = j.Candidates[j.Chosen].StopReason
			}
			if d := cmp.Diff([]any{tc.success, tc.stop}, []any{j.Success, stop}); d != "" {
				t.Errorf("success/stop (-want +got):\n%s\ncandidates %+v", d, j.Candidates)
			}
		})
	}
}

// FuzzJudgeReply: judging a hostile reply never panics, and a success has
// a chosen candidate that reaches the goal.
func FuzzJudgeReply(f *testing.F) {
	for _, s := range []string{
		"Plan:\n" + `[{"block": "B", "from": 1, "to": 2, "type": "move", "note": "put ] aside, then \"the rest\" (it's fine)"}, {"block": "C", "from": 0, "to": 2, "type": "move", "note": "x"}]` + "\nDone.",
		`[{'block': 'B', 'from': 1, 'to': 2, 'note': "it's ] fine"}, {'block': 'C', 'from': 0, 'to': 2}]`,
		`[{"block": "B", "from": "1", "to": 2, "type": 7}]`, `[{"type": null}]`, `[{}]`, `[["B", 1, 2], ["C", 0, 2]]`,
	} {
		f.Add(s)
	}
	p := blocksInline()
	e, _ := p.Env()
	s, _ := p.Initial()
	goal, _ := p.Goal()
	f.Fuzz(func(t *testing.T, reply string) {
		j := JudgeReply(e, p, s, goal, reply)
		if j.Success && (j.Chosen < 0 || !j.Candidates[j.Chosen].ReachedGoal) {
			t.Fatalf("success without a chosen goal candidate: %+v", j)
		}
	})
}
