package prompt

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"

	"repot.dev/repot-operator/contract"
)

func steps() map[string]Step {
	opts := []StepOption{{ID: "a0", Move: json.RawMessage(`[1,0,2]`)}, {ID: "a1", Move: json.RawMessage(`[1,0,1]`)}}
	return map[string]Step{
		"first call": {State: json.RawMessage(`{"pegs":{"A":[3,2,1]}}`), Options: opts},
		"a retry":    {State: json.RawMessage(`{"pegs":{"A":[3,2,1]}}`), Options: opts, Blocked: []string{"a1", "z9"}, RetryReason: "loop_recovery", Message: "The move loops;\nchoose again."},
		"no options": {State: json.RawMessage(`{}`)},
	}
}

// TestStepRoundTrip: ParseStep reads back what StepPrompt put in (the
// message on one line); other prompts are not step prompts.
func TestStepRoundTrip(t *testing.T) {
	p := hanoi3()
	for name, s := range steps() {
		got, err := ParseStep(StepPrompt(p, s))
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		want := s
		want.Message = oneLineText(s.Message)
		if d := cmp.Diff(want, got.Step); d != "" || got.Environment != p.Environment || string(got.Goal) != oneLine(p.GoalState) {
			t.Errorf("%s: round trip (-want +got):\n%s", name, d)
		}
	}
	if _, err := ParseStep(Initial(p)); err != ErrNotStep {
		t.Errorf("an initial prompt parsed as a step prompt: %v", err)
	}
	if _, err := ParseRecovery(StepPrompt(p, steps()["a retry"])); err != ErrNotRecovery {
		t.Errorf("a step prompt parsed as a recovery prompt: %v", err)
	}
}

func TestParseStepChoice(t *testing.T) {
	tests := []struct {
		name  string
		reply string
		want  StepChoice
		ok    bool
	}{
		{"plain object", `{"action_id": "a2", "ranked_action_ids": ["a2", "a0"], "predicted_next_state": {"x": 1}}`, StepChoice{ActionID: "a2", Ranked: []string{"a2", "a0"}, Predicted: json.RawMessage(`{"x":1}`)}, true},
		{"prose around the object", "I pick this one:\n{\"action_id\": \"a1\", \"rationale\": \"a } in a string\"}\nThat is all.", StepChoice{ActionID: "a1"}, true},
		{"a fenced block", "```json\n{\"action_id\": \"a0\", \"ranked_action_ids\": [\"a0\", 7, null, \"a3\"]}\n```", StepChoice{ActionID: "a0", Ranked: []string{"a0", "a3"}}, true},
		{"think removed", "<think>{\"action_id\": \"a9\"}</think>{\"action_id\": \"a1\"}", StepChoice{ActionID: "a1"}, true},
		{"the first parsable object wins", `{"action_id": a0} {"action_id": "a4"} {"action_id": "a5"}`, StepChoice{ActionID: "a4"}, true},
		{"ranked not a list is ignored; predicted not an object is dropped", `{"action_id": "a0", "ranked_action_ids": "a1", "predicted_next_state": [1]}`, StepChoice{ActionID: "a0"}, true},
		{"a top-level list is not an object", `[{"action_id": "a0"}]`, StepChoice{}, false},
		{"empty action id", `{"action_id": ""}`, StepChoice{}, false},
		{"numeric action id", `{"action_id": 0}`, StepChoice{}, false},
		{"no object", "move a0", StepChoice{}, false},
		{"empty", "  ", StepChoice{}, false},
	}
	for _, tc := range tests {
		got, err := ParseStepChoice(tc.reply)
		if (err == nil) != tc.ok {
			t.Errorf("%s: err = %v, want ok %v", tc.name, err, tc.ok)
			continue
		}
		if d := cmp.Diff(tc.want, got); d != "" {
			t.Errorf("%s: (-want +got):\n%s", tc.name, d)
		}
	}
}

// FuzzParseStep: ParseStep never panics and accepts only valid JSON.
func FuzzParseStep(f *testing.F) {
	p := hanoi3()
	for _, s := range steps() {
		f.Add(StepPrompt(p, s)[1].Content)
	}
	f.Add("Environment: x\nGoal state (JSON): {}\n" + StepMarker + "\nCurrent verified state (JSON): {}\nLegal move options (JSON, id and move): [{\"id\":1}]\n")
	f.Fuzz(func(t *testing.T, text string) {
		got, err := ParseStep([]contract.Message{{Role: contract.RoleUser, Content: text}})
		if err != nil {
			return
		}
		if !json.Valid(got.Goal) || !json.Valid(got.State) {
			t.Fatalf("accepted invalid JSON %q %q", got.Goal, got.State)
		}
	})
}

// FuzzParseStepChoice: the action-choice reader never panics, and an
// accepted choice has an id.
func FuzzParseStepChoice(f *testing.F) {
	for _, s := range []string{`{"action_id":"a0"}`, "x {\"action_id\": \"a1\", \"ranked_action_ids\": [\"a1\", 3]} y", "```json\n{\"action_id\":\"a2\"}\n```", `[1]`, `{`, `<think>{}</think>{"action_id":""}`, `{"a":"\"}"} {"action_id":"b"}`, "```", "<think>"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, reply string) {
		c, err := ParseStepChoice(reply)
		if err == nil && c.ActionID == "" {
			t.Fatalf("empty action id accepted from %q", reply)
		}
		if c.Predicted != nil && !json.Valid(c.Predicted) {
			t.Fatalf("invalid predicted state %q", c.Predicted)
		}
	})
}
