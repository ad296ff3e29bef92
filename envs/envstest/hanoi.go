// Package envstest holds problem fixtures for tests across the module: one
// home for the small problems that tests of the verifiers, the prompts, the
// methods, the engine and the simulated server share.
package envstest

import (
	"encoding/json"

	"repot.dev/repot-operator/envs"
)

// Hanoi3 is a 3-disk Tower of Hanoi problem from peg A to peg C (id
// "hanoi3", 7 moves at best, a step limit of 14).
func Hanoi3() *envs.Problem {
	return &envs.Problem{
		ProblemID:    "hanoi3",
		Environment:  envs.HanoiName,
		Complexity:   3,
		InitialState: json.RawMessage(`{"peg_names":["A","B","C"],"pegs":{"A":[3,2,1],"B":[],"C":[]}}`),
		GoalState:    json.RawMessage(`{"peg_names":["A","B","C"],"pegs":{"A":[],"B":[],"C":[3,2,1]}}`),
		MinSteps:     7,
		MaxSteps:     14,
	}
}

// Hanoi3Solution is Hanoi3's optimal plan as a model prints it.
var Hanoi3Solution = []string{"[1,0,2]", "[2,0,1]", "[1,2,1]", "[3,0,2]", "[1,1,0]", "[2,1,2]", "[1,0,2]"}
