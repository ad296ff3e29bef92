package prompt

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"repot.dev/repot-operator/contract"
	"repot.dev/repot-operator/envs"
)

// hanoi3 is envstest.Hanoi3 as a published problem states it: its id, its
// states spread over lines (prompts carry one-line JSON) and a statement that
// itself contains a line looking like a label.
func hanoi3() *envs.Problem {
	return &envs.Problem{
		ProblemID:   "apple_hanoi_n03_seed0000_template00",
		Environment: "tower_of_hanoi",
		Complexity:  3,
		// Spread over lines on purpose: prompts carry one-line JSON.
		InitialState: json.RawMessage("{\"peg_names\": [\"A\", \"B\", \"C\"],\n \"pegs\": {\"A\": [3, 2, 1], \"B\": [], \"C\": []}}"),
		GoalState:    json.RawMessage(`{"peg_names": ["A", "B", "C"], "pegs": {"A": [], "B": [], "C": [3, 2, 1]}}`),
		// A statement that itself contains a line looking like a label.
		NaturalLanguagePrompt: "Solve Tower of Hanoi with 3 disks.\nEnvironment: not_this_one\nReturn moves = [[disk, from_peg, to_peg], ...].",
		MaxSteps:              14,
	}
}

func TestInitialAndFreshRoundTrip(t *testing.T) {
	p := hanoi3()
	for _, attempt := range []int{1, 2, 3} {
		msgs := Fresh(p, attempt)
		if len(msgs) != 2 || msgs[0].Role != contract.RoleSystem || msgs[1].Role != contract.RoleUser {
			t.Fatalf("attempt %d: want system+user messages, got %+v", attempt, msgs)
		}
		got, err := Parse(msgs)
		if err != nil {
			t.Fatalf("attempt %d: Parse: %v", attempt, err)
		}
		want := Parsed{
			Environment: "tower_of_hanoi",
			Initial:     json.RawMessage(`{"peg_names":["A","B","C"],"pegs":{"A":[3,2,1],"B":[],"C":[]}}`),
			Goal:        json.RawMessage(`{"peg_names":["A","B","C"],"pegs":{"A":[],"B":[],"C":[3,2,1]}}`),
			MaxSteps:    14,
			Attempt:     attempt,
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("attempt %d: Parse mismatch (-want +got):\n%s", attempt, diff)
		}
	}
	if diff := cmp.Diff(Initial(p), Fresh(p, 1)); diff != "" {
		t.Errorf("Initial differs from Fresh(p, 1):\n%s", diff)
	}
	if strings.Contains(Initial(p)[1].Content, "Attempt:") {
		t.Error("first attempt should carry no Attempt line")
	}
	if Fresh(p, 2)[1].Content == Fresh(p, 1)[1].Content {
		t.Error("attempt 2 prompt equals attempt 1 prompt")
	}
	if !strings.Contains(Initial(p)[1].Content, "Solve Tower of Hanoi with 3 disks.") {
		t.Error("prompt lacks the natural-language statement")
	}
}

func TestRepairRoundTrip(t *testing.T) {
	p := hanoi3()
	c := Checkpoint{
		Verified:   5,
		Tail:       []json.RawMessage{json.RawMessage(`[2,0,1]`), json.RawMessage(`[1,2,1]`), json.RawMessage(`[3,0,2]`), json.RawMessage(`[1,1,0]`)},
		State:      json.RawMessage(`{"peg_names":["A","B","C"],"pegs":{"A":[1],"B":[2],"C":[3]}}`),
		Legal:      []json.RawMessage{json.RawMessage(`[1,0,1]`), json.RawMessage(`[1,0,2]`), json.RawMessage(`[2,1,2]`)},
		LegalTotal: 3,
		Message:    "Cannot place a larger disk on a smaller disk.",
	}
	for _, v := range []Variant{Standard, NoPrefix, Restart} {
		t.Run(string(v), func(t *testing.T) {
			msgs := Repair(p, c, v)
			got, err := Parse(msgs)
			if err != nil {
				t.Fatalf("Parse: %v", err)
			}
			wantC := c
			if v == NoPrefix {
				wantC.Tail = nil
			}
			want := Parsed{
				Environment: "tower_of_hanoi",
				Initial:     json.RawMessage(`{"peg_names":["A","B","C"],"pegs":{"A":[3,2,1],"B":[],"C":[]}}`),
				Goal:        json.RawMessage(`{"peg_names":["A","B","C"],"pegs":{"A":[],"B":[],"C":[3,2,1]}}`),
				MaxSteps:    14,
				Attempt:     1,
				Repair:      &ParsedRepair{Variant: v, Checkpoint: wantC},
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("Parse mismatch (-want +got):\n%s", diff)
			}
			text := msgs[1].Content
			i := strings.Index(text, Marker)
			if i < 0 {
				t.Fatal("repair prompt lacks the marker line")
			}
			// The stable part is the first prompt's problem part.
			stablePart := text[:i]
			initial := Initial(p)[1].Content
			if !strings.HasPrefix(initial, strings.TrimRight(stablePart, "\n")) {
				t.Errorf("stable part of the repair prompt is not a prefix of the initial prompt:\n%s", stablePart)
			}
			if !strings.Contains(text[i:], c.Message) {
				t.Error("checkpoint block lacks the verifier message")
			}
		})
	}
}

func TestRepairFlattensMultilineMessage(t *testing.T) {
	c := Checkpoint{State: json.RawMessage(`{}`), Message: "line one\nline two"}
	got, err := Parse(Repair(hanoi3(), c, Standard))
	if err != nil {
		t.Fatal(err)
	}
	if got.Repair.Checkpoint.Message != "line one line two" {
		t.Errorf("message = %q", got.Repair.Checkpoint.Message)
	}
}

func TestParseErrors(t *testing.T) {
	good := Initial(hanoi3())[1].Content
	tests := []struct {
		name string
		msgs []contract.Message
		want string
	}{
		{"no user message", []contract.Message{{Role: contract.RoleSystem, Content: "x"}}, "no user message"},
		{"no environment", []contract.Message{{Role: contract.RoleUser, Content: "hello"}}, "Environment"},
		{"bad initial JSON", []contract.Message{{Role: contract.RoleUser, Content: strings.Replace(good, "Initial state (JSON): {", "Initial state (JSON): {{", 1)}}, "not valid JSON"},
		{"no goal", []contract.Message{{Role: contract.RoleUser, Content: strings.Replace(good, "Goal state (JSON): ", "Goal: ", 1)}}, "Goal state"},
		{"bad attempt", []contract.Message{{Role: contract.RoleUser, Content: good + "Attempt: two\n"}}, "not a count"},
		{"repair without count", []contract.Message{{Role: contract.RoleUser, Content: good + Marker + "\n"}}, "Verified moves"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse(tc.msgs)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("Parse error = %v, want one containing %q", err, tc.want)
			}
		})
	}
}

func TestNewCheckpoint(t *testing.T) {
	e, err := envs.Lookup("tower_of_hanoi")
	if err != nil {
		t.Skipf("envs not ready: %v", err)
	}
	p := hanoi3()
	s, err := e.DecodeState(p.InitialState)
	if err != nil {
		t.Fatal(err)
	}
	var prefix []envs.Action
	for _, raw := range []string{`[1,0,2]`, `[2,0,1]`, `[1,2,1]`, `[3,0,2]`, `[1,1,0]`} {
		a, err := e.Normalize(p, s, json.RawMessage(raw))
		if err != nil {
			t.Fatalf("normalize %s: %v", raw, err)
		}
		st := e.Step(s, a)
		if !st.Valid {
			t.Fatalf("step %s invalid: %s", raw, st.Message)
		}
		prefix, s = append(prefix, a), st.Next
	}
	c, err := NewCheckpoint(e, prefix, s, "Cannot place a larger disk on a smaller disk.")
	if err != nil {
		t.Fatal(err)
	}
	if c.Verified != 5 || len(c.Tail) != TailLen {
		t.Errorf("verified=%d tail=%d, want 5 and %d", c.Verified, len(c.Tail), TailLen)
	}
	if c.LegalTotal != len(e.Legal(s)) || len(c.Legal) != c.LegalTotal {
		t.Errorf("legal %d of %d, env says %d", len(c.Legal), c.LegalTotal, len(e.Legal(s)))
	}
	// The tail renders the last moves the way a model prints them.
	for i, raw := range c.Tail {
		if want := e.RawMove(prefix[1+i]); string(raw) != oneLine(want) {
			t.Errorf("tail[%d] = %s, want %s", i, raw, want)
		}
	}
	got, err := Parse(Repair(p, c, Standard))
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(c, got.Repair.Checkpoint); diff != "" {
		t.Errorf("checkpoint round trip (-want +got):\n%s", diff)
	}
}
