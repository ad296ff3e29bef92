package prompt

import (
	"encoding/json"
	"testing"

	"repot.dev/repot-operator/contract"
)

// FuzzParse checks that Parse never panics and that whatever it accepts has
// valid JSON states.
func FuzzParse(f *testing.F) {
	p := hanoi3()
	f.Add(Initial(p)[1].Content)
	f.Add(Fresh(p, 2)[1].Content)
	c := Checkpoint{Verified: 1, Tail: []json.RawMessage{json.RawMessage(`[1,0,2]`)}, State: json.RawMessage(`{"a":1}`), Message: "m"}
	for _, v := range []Variant{Standard, NoPrefix, Restart} {
		f.Add(Repair(p, c, v)[1].Content)
	}
	f.Add("Environment: x\nInitial state (JSON): [\nGoal state (JSON): {}\n" + Marker + "\nVerified moves so far: -1\n")
	f.Fuzz(func(t *testing.T, text string) {
		got, err := Parse([]contract.Message{{Role: contract.RoleUser, Content: text}})
		if err != nil {
			return
		}
		if (got.Initial != nil && !json.Valid(got.Initial)) || !json.Valid(got.Goal) || got.Environment == "" || got.Attempt < 0 {
			t.Fatalf("accepted a bad prompt: %+v", got)
		}
		if got.Repair != nil && !json.Valid(got.Repair.Checkpoint.State) {
			t.Fatalf("accepted a bad checkpoint: %+v", got.Repair)
		}
	})
}
