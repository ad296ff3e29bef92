package simserver

import (
	"encoding/json"
	"strings"
)

// levelRange is the complexity range of each environment in the suites
// (PuzzleZoo levels; PlanBench has 3-12 blocks).
var levelRange = map[string][2]int{
	"tower_of_hanoi":   {3, 10},
	"checker_jumping":  {1, 9},
	"river_crossing":   {1, 4},
	"blocksworld":      {3, 12},
	"blocksworld_pddl": {3, 12},
}

// complexityOf reads a problem's complexity from its initial state (the
// prompt carries states, not the complexity): disks, pieces per side,
// actor/agent pairs, or blocks. 0 when the state is not understood.
func complexityOf(env string, state json.RawMessage) int {
	var s struct {
		Pegs      map[string][]int `json:"pegs"`
		Board     string           `json:"board"`
		LeftPiece string           `json:"left_piece"`
		Actors    []string         `json:"actors"`
		Stacks    [][]string       `json:"stacks"`
		Blocks    []string         `json:"blocks"`
	}
	// River states have a "left" list that no field here claims, so the
	// decoding is not confused by it; type mismatches are ignored.
	_ = json.Unmarshal(state, &s)
	switch env {
	case "tower_of_hanoi":
		n := 0
		for _, p := range s.Pegs {
			n += len(p)
		}
		return n
	case "checker_jumping":
		piece := s.LeftPiece
		if piece == "" {
			piece = "R"
		}
		return strings.Count(s.Board, piece)
	case "river_crossing":
		return len(s.Actors) / 2
	case "blocksworld":
		n := 0
		for _, st := range s.Stacks {
			n += len(st)
		}
		return n
	case "blocksworld_pddl":
		return len(s.Blocks)
	}
	return 0
}

// difficulty maps a complexity onto [0,1] within the environment's range.
func difficulty(env string, complexity int) float64 {
	r, ok := levelRange[env]
	if !ok || r[1] <= r[0] {
		return 0.5
	}
	return clamp01(float64(complexity-r[0]) / float64(r[1]-r[0]))
}
