package simserver

import (
	"encoding/json"
	"testing"

	"repot.dev/repot-operator/envs"
)

// hanoi3 is a 3-disk Tower of Hanoi problem and its start state.
func hanoi3(t testing.TB) (envs.Env, *envs.Problem, envs.State) {
	t.Helper()
	e, err := envs.Lookup("tower_of_hanoi")
	if err != nil {
		t.Fatal(err)
	}
	p := &envs.Problem{Environment: "tower_of_hanoi", InitialState: json.RawMessage(`{"peg_names":["A","B","C"],"pegs":{"A":[3,2,1],"B":[],"C":[]}}`), GoalState: json.RawMessage(`{"peg_names":["A","B","C"],"pegs":{"A":[],"B":[],"C":[3,2,1]}}`)}
	s, err := e.DecodeState(p.InitialState)
	if err != nil {
		t.Fatal(err)
	}
	return e, p, s
}

func TestSpurious(t *testing.T) {
	e, p, s := hanoi3(t)
	for msg, want := range map[string]bool{
		"Move 1 ([1, 0, 2]) is invalid: the verifier rejected it.": true,  // legal: a spurious rejection
		"Move 1 ([2, 0, 1]) is invalid: disk 2 is not on top.":     false, // really illegal
		"The program printed no moves.":                            false,
		"Move 1 (":                                                 false,
	} {
		if got := spurious(e, p, s, msg); got != want {
			t.Errorf("spurious(%q) = %v, want %v", msg, got, want)
		}
	}
}

// FuzzSpurious: the message parser never panics.
func FuzzSpurious(f *testing.F) {
	e, p, s := hanoi3(f)
	f.Add("Move 1 ([1, 0, 2]) is invalid: the verifier rejected it.")
	f.Add("Move 3 (x) is invalid:")
	f.Add("Move ) is invalid: (")
	f.Fuzz(func(t *testing.T, msg string) { spurious(e, p, s, msg) })
}
