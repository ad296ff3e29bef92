package simserver

import (
	"encoding/json"
	"testing"
)

func TestComplexityOf(t *testing.T) {
	tests := []struct {
		env, state string
		want       int
	}{
		{"tower_of_hanoi", `{"peg_names":["A","B","C"],"pegs":{"A":[3,2,1],"B":[],"C":[]}}`, 3},
		{"checker_jumping", `{"board":"RRR_BBB","left_piece":"R","right_piece":"B"}`, 3},
		{"river_crossing", `{"actors":["actor1","actor2","agent1","agent2"],"left":["actor1"],"boat_capacity":3}`, 2},
		{"blocksworld", `{"blocks":["A","B","C","D"],"stacks":[["A","B"],["C","D"],[]]}`, 4},
		{"blocksworld_pddl", `{"blocks":["a","b","c","d","e"],"on":{"c":"b"}}`, 5},
		{"unknown", `{}`, 0},
		{"tower_of_hanoi", `not json`, 0},
	}
	for _, tc := range tests {
		if got := complexityOf(tc.env, json.RawMessage(tc.state)); got != tc.want {
			t.Errorf("complexityOf(%s, %s) = %d, want %d", tc.env, tc.state, got, tc.want)
		}
	}
	if difficulty("tower_of_hanoi", 3) != 0 || difficulty("tower_of_hanoi", 10) != 1 || difficulty("river_crossing", 99) != 1 {
		t.Error("difficulty does not span [0,1] over the levels")
	}
}

func TestComplexityOfSuiteProblems(t *testing.T) {
	for _, p := range suite(t) {
		if got := complexityOf(p.Environment, p.InitialState); got != p.Complexity {
			t.Errorf("%s: complexity %d read from the state, problem says %d", p.ProblemID, got, p.Complexity)
		}
	}
}
