package prompt

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"repot.dev/repot-operator/contract"
)

// TestSampleRoundTrip: a CoT prompt parses back to the problem's lines, is
// recognised by IsSample, asks for JSON and not for a program, and is the
// same on every call.
func TestSampleRoundTrip(t *testing.T) {
	p := hanoi3()
	msgs := Sample(p)
	if len(msgs) != 2 || msgs[0].Role != contract.RoleSystem || msgs[1].Role != contract.RoleUser {
		t.Fatalf("want system+user messages, got %+v", msgs)
	}
	got, err := Parse(msgs)
	if err != nil {
		t.Fatalf("Parse: %v", err)
	}
	want := Parsed{
		Environment: "tower_of_hanoi",
		Initial:     json.RawMessage(`{"peg_names":["A","B","C"],"pegs":{"A":[3,2,1],"B":[],"C":[]}}`),
		Goal:        json.RawMessage(`{"peg_names":["A","B","C"],"pegs":{"A":[],"B":[],"C":[3,2,1]}}`),
		MaxSteps:    14,
		Attempt:     1,
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Parse mismatch (-want +got):\n%s", diff)
	}
	user := msgs[1].Content
	if !strings.Contains(user, `{"actions": [...]}`) || strings.Contains(user, "```python") {
		t.Errorf("the prompt should ask for {\"actions\": [...]} and no program:\n%s", user)
	}
	if diff := cmp.Diff(msgs, Sample(p)); diff != "" {
		t.Errorf("Sample is not deterministic:\n%s", diff)
	}
}

func TestIsSample(t *testing.T) {
	p := hanoi3()
	cp := Checkpoint{Verified: 1, State: json.RawMessage(`{}`), Message: "m"}
	for _, tc := range []struct {
		name string
		msgs []contract.Message
		want bool
	}{
		{"sample", Sample(p), true},
		{"initial", Initial(p), false},
		{"fresh", Fresh(p, 2), false},
		{"repair", Repair(p, cp, Standard), false},
		{"marker only in system", []contract.Message{{Role: contract.RoleSystem, Content: SampleMarker}, {Role: contract.RoleUser, Content: "x"}}, false},
		{"marker inside a line", []contract.Message{{Role: contract.RoleUser, Content: "see " + SampleMarker}}, false},
		{"no messages", nil, false},
	} {
		if got := IsSample(tc.msgs); got != tc.want {
			t.Errorf("%s: IsSample = %v, want %v", tc.name, got, tc.want)
		}
	}
}
