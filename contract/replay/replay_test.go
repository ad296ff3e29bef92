package replay

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"

	"repot.dev/repot-operator/contract"
	"repot.dev/repot-operator/envs"
	"repot.dev/repot-operator/envs/envstest"
)

func raws(moves ...string) []json.RawMessage {
	out := make([]json.RawMessage, len(moves))
	for i, m := range moves {
		out[i] = json.RawMessage(m)
	}
	return out
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestReplay(t *testing.T) {
	p := envstest.Hanoi3()
	e, err := p.Env()
	if err != nil {
		t.Fatal(err)
	}
	init, _ := p.Initial()
	goal, _ := p.Goal()
	afterTwo := `{"peg_names":["A","B","C"],"pegs":{"A":[3],"B":[2],"C":[1]}}`
	tests := []struct {
		name     string
		plan     []json.RawMessage
		maxSteps int
		// want fields
		prefixLen  int
		state      string
		k          int
		kind       string
		goal       bool
		stop       string
		permille   int
		errorEmpty bool
	}{
		{"solution", raws(envstest.Hanoi3Solution...), 14, 7, string(mustMarshal(goal)), -1, "", true, contract.StopGoal, 1000, true},
		{"extra moves after goal are ignored", raws(append(append([]string{}, envstest.Hanoi3Solution...), "[1,2,0]", "[1,0,2]")...), 14, 7, "", -1, "", true, contract.StopGoal, 778, true},
		{"empty plan", nil, 14, 0, string(mustMarshal(init)), -1, "", false, contract.StopNoPlan, 0, false},
		{"invalid second move", raws("[1,0,2]", "[1,0,1]", "[2,0,1]"), 14, 1, "", 1, string(envs.InvalidTransition), false, contract.StopInvalidMove, 333, false},
		{"larger on smaller", raws("[1,0,2]", "[2,0,2]"), 14, 1, "", 1, string(envs.ConstraintViolation), false, contract.StopInvalidMove, 500, false},
		{"format error", raws("[1,0,2]", `"up"`), 14, 1, "", 1, contract.KindFormatError, false, contract.StopFormatError, 500, false},
		{"plan exhausted", raws("[1,0,2]", "[2,0,1]"), 14, 2, afterTwo, -1, "", false, contract.StopPlanExhausted, 1000, false},
		{"max steps", raws(envstest.Hanoi3Solution...), 2, 2, afterTwo, 2, "", false, contract.StopMaxSteps, 286, false},
		{"max steps zero", raws("[1,0,2]"), 0, 0, string(mustMarshal(init)), 0, "", false, contract.StopMaxSteps, 0, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := Replay(e, p, init, goal, tc.plan, tc.maxSteps)
			if len(got.Prefix) != tc.prefixLen || got.K != tc.k || got.Kind != tc.kind || got.ReachedGoal != tc.goal || got.StopReason != tc.stop || got.PrefixPermille() != tc.permille || got.PlanLen != len(tc.plan) {
				t.Errorf("Replay = prefix %d k %d kind %q goal %v stop %q permille %d planlen %d; want prefix %d k %d kind %q goal %v stop %q permille %d",
					len(got.Prefix), got.K, got.Kind, got.ReachedGoal, got.StopReason, got.PrefixPermille(), got.PlanLen, tc.prefixLen, tc.k, tc.kind, tc.goal, tc.stop, tc.permille)
			}
			if tc.state != "" {
				if diff := cmp.Diff(tc.state, string(mustMarshal(got.State))); diff != "" {
					t.Errorf("state (-want +got):\n%s", diff)
				}
			}
			if (got.Error == "") != tc.errorEmpty {
				t.Errorf("Error = %q, want empty %v", got.Error, tc.errorEmpty)
			}
		})
	}
}

func TestReplayFromGoal(t *testing.T) {
	p := envstest.Hanoi3()
	e, _ := p.Env()
	goal, _ := p.Goal()
	got := Replay(e, p, goal, goal, raws("[1,2,0]"), 14)
	if !got.ReachedGoal || got.StopReason != contract.StopGoal || len(got.Prefix) != 0 {
		t.Errorf("Replay from the goal = %+v, want goal with empty prefix", got)
	}
}

func TestReplayMessageNamesMove(t *testing.T) {
	p := envstest.Hanoi3()
	e, _ := p.Env()
	init, _ := p.Initial()
	goal, _ := p.Goal()
	got := Replay(e, p, init, goal, raws("[1, 0, 2]", "[2,0,2]"), 14)
	want := "Move 2 ([2,0,2]) is invalid: "
	if len(got.Error) < len(want) || got.Error[:len(want)] != want {
		t.Errorf("Error = %q, want prefix %q", got.Error, want)
	}
}

func mustMarshal(v json.Marshaler) []byte {
	b, err := v.MarshalJSON()
	if err != nil {
		panic(err)
	}
	return b
}

// TestResume: a repair's plan is the checkpoint's verified prefix, then the
// continuation's; the state, stop and error are the continuation's.
func TestResume(t *testing.T) {
	p := envstest.Hanoi3()
	e, err := p.Env()
	if err != nil {
		t.Fatal(err)
	}
	init, _ := p.Initial()
	goal, _ := p.Goal()
	sol := envstest.Hanoi3Solution
	// The first plan breaks at move 3; the repair completes the solution.
	first := Replay(e, p, init, goal, raws(sol[0], sol[1], "[1,0,1]"), 14)
	if first.StopReason != contract.StopInvalidMove || len(first.Prefix) != 2 {
		t.Fatalf("first plan: %+v", first)
	}
	cont := Replay(e, p, first.State, goal, raws(sol[2:]...), 14-len(first.Prefix))
	got := Resume(first, cont)
	whole := Replay(e, p, init, goal, raws(sol...), 14)
	if diff := cmp.Diff(whole.Prefix, got.Prefix); diff != "" {
		t.Errorf("prefix (-whole plan +resumed):\n%s", diff)
	}
	if !got.ReachedGoal || got.StopReason != contract.StopGoal || got.PlanLen != 2+len(sol[2:]) || got.K != -1 {
		t.Errorf("resumed %+v", got)
	}
	// Resuming never writes into the checkpoint's prefix.
	if len(first.Prefix) != 2 {
		t.Errorf("the checkpoint's prefix changed: %v", first.Prefix)
	}
	// A continuation that breaks keeps its own move index and message.
	bad := Replay(e, p, first.State, goal, raws(sol[2], "[3,0,0]"), 12)
	if r := Resume(first, bad); r.K != bad.K || r.Error != bad.Error || len(r.Prefix) != 3 || r.ReachedGoal {
		t.Errorf("resumed a broken repair: %+v", r)
	}
}
