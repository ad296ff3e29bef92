package prompt

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"

	"repot.dev/repot-operator/contract"
)

func recoveries() map[string]Recovery {
	base := Recovery{
		Trace: []json.RawMessage{json.RawMessage(`[1,0,2]`), json.RawMessage(`[2,0,1]`)},
		Next:  json.RawMessage(`[1,2,0]`), Current: json.RawMessage(`{"pegs":{"A":[3,1]}}`),
	}
	eo := base
	eo.Flagged = true
	sf := eo
	sf.Checkpoint = json.RawMessage(`{"pegs":{"A":[3]}}`)
	sla := sf
	sla.Legal = []json.RawMessage{json.RawMessage(`[1,2,0]`), json.RawMessage(`[1,2,1]`)}
	return map[string]Recovery{"no_feedback": base, "error_only": eo, "state_feedback": sf, "state_plus_legal_actions": sla}
}

// TestRecoveryRoundTrip: ParseRecovery reads back exactly what
// RecoveryPrompt put in, per condition; other prompts are not recovery
// prompts.
func TestRecoveryRoundTrip(t *testing.T) {
	p := hanoi3()
	for name, r := range recoveries() {
		got, err := ParseRecovery(RecoveryPrompt(p, r))
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if d := cmp.Diff(r, got.Recovery); d != "" || got.Environment != p.Environment || string(got.Goal) != oneLine(p.GoalState) {
			t.Errorf("%s: round trip (-want +got):\n%s", name, d)
		}
	}
	if _, err := ParseRecovery(Initial(p)); err != ErrNotRecovery {
		t.Errorf("an initial prompt parsed as a recovery prompt: %v", err)
	}
}

// FuzzParseRecovery: ParseRecovery never panics and accepts only valid
// JSON.
func FuzzParseRecovery(f *testing.F) {
	p := hanoi3()
	for _, r := range recoveries() {
		f.Add(RecoveryPrompt(p, r)[1].Content)
	}
	f.Add("Environment: x\nInitial state (JSON): {}\nGoal state (JSON): {}\n" + RecoveryMarker + "\nVerified trace moves (JSON, in order): [\n")
	f.Fuzz(func(t *testing.T, text string) {
		got, err := ParseRecovery([]contract.Message{{Role: contract.RoleUser, Content: text}})
		if err != nil {
			return
		}
		for _, raw := range []json.RawMessage{got.Initial, got.Goal, got.Next, got.Current} {
			if !json.Valid(raw) {
				t.Fatalf("accepted invalid JSON %q", raw)
			}
		}
		if got.Checkpoint != nil && !json.Valid(got.Checkpoint) {
			t.Fatalf("accepted an invalid checkpoint %q", got.Checkpoint)
		}
	})
}
