package simserver

import (
	"testing"

	"repot.dev/repot-operator/envs"
	"repot.dev/repot-operator/envs/envstest"
)

// hanoi3 is envstest.Hanoi3 with its environment and start state.
func hanoi3(t testing.TB) (envs.Env, *envs.Problem, envs.State) {
	t.Helper()
	e, err := envs.Lookup("tower_of_hanoi")
	if err != nil {
		t.Fatal(err)
	}
	p := envstest.Hanoi3()
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
