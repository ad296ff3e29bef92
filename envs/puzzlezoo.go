package envs

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"sync"
)

// PuzzleZooLevel is one (environment, complexity) level of PuzzleZoo.
type PuzzleZooLevel struct {
	Env        string
	Complexity int
}

// PuzzleZooLevels lists the 31 levels in suite order: Hanoi 3-10, Checker
// 1-9, River 1-4, Blocksworld 3-12.
func PuzzleZooLevels() []PuzzleZooLevel {
	var out []PuzzleZooLevel
	add := func(env string, lo, hi int) {
		for c := lo; c <= hi; c++ {
			out = append(out, PuzzleZooLevel{env, c})
		}
	}
	add(HanoiName, 3, 10)
	add(CheckerName, 1, 9)
	add(RiverName, 1, 4)
	add(BlocksName, 3, 12)
	return out
}

// PuzzleZooSeeds is the number of instances per level.
const PuzzleZooSeeds = 25

var idPrefix = map[string]string{
	HanoiName:   "apple_hanoi",
	CheckerName: "apple_checker",
	RiverName:   "apple_river",
	BlocksName:  "apple_blocks",
}

// PuzzleZooID is the problem id of one instance, e.g.
// apple_hanoi_n03_seed0000_template00.
func PuzzleZooID(env string, complexity, seed int) string {
	return fmt.Sprintf("%s_n%02d_seed%04d_template00", idPrefix[env], complexity, seed)
}

// InitialAndGoal builds the start and goal states of a PuzzleZoo level.
func InitialAndGoal(env string, n int) (State, State, error) {
	switch env {
	case HanoiName:
		if n < 1 || n > 20 {
			return nil, nil, fmt.Errorf("hanoi: %d disks out of range 1-20", n)
		}
		tower := make([]int, n)
		for i := range tower {
			tower[i] = n - i
		}
		names := []string{"A", "B", "C"}
		return &HanoiState{PegNames: names, Pegs: [][]int{tower, {}, {}}},
			&HanoiState{PegNames: names, Pegs: [][]int{{}, {}, append([]int{}, tower...)}}, nil
	case CheckerName:
		if n < 1 || n > 20 {
			return nil, nil, fmt.Errorf("checker: %d per side out of range 1-20", n)
		}
		r, b := strings.Repeat("R", n), strings.Repeat("B", n)
		return &CheckerState{Board: r + "_" + b, LeftPiece: "R", RightPiece: "B"},
			&CheckerState{Board: b + "_" + r, LeftPiece: "R", RightPiece: "B"}, nil
	case RiverName:
		if n < 1 || n > 9 {
			return nil, nil, fmt.Errorf("river: %d pairs out of range 1-9", n)
		}
		var people []string
		for i := 1; i <= n; i++ {
			people = append(people, fmt.Sprintf("actor%d", i))
		}
		for i := 1; i <= n; i++ {
			people = append(people, fmt.Sprintf("agent%d", i))
		}
		sort.Strings(people)
		pairs := [][2]string{}
		for i := 1; i <= n; i++ {
			for j := 1; j <= n; j++ {
				if i != j {
					pairs = append(pairs, [2]string{fmt.Sprintf("actor%d", i), fmt.Sprintf("agent%d", j)})
				}
			}
		}
		capacity := 3
		if n == 1 {
			capacity = 2
		}
		start := &RiverState{Actors: people, BoatCapacity: capacity, BoatSide: "left", Left: strList(people), Right: []string{}, UnsafePairs: pairs, Variant: "apple_agents"}
		goal := &RiverState{Actors: people, BoatCapacity: capacity, BoatSide: "right", Left: []string{}, Right: strList(people), UnsafePairs: pairs, Variant: "apple_agents"}
		return start, goal, nil
	case BlocksName:
		if n < 1 || n > 26 {
			return nil, nil, fmt.Errorf("blocksworld: %d blocks out of range 1-26", n)
		}
		blocks := make([]string, n)
		for i := range blocks {
			blocks[i] = string(rune('A' + i))
		}
		h := (n + 1) / 2
		first, second := blocks[:h], blocks[h:]
		var inter []string
		for i := 0; i < h; i++ {
			inter = append(inter, first[i])
			if i < len(second) {
				inter = append(inter, second[i])
			}
		}
		return &BlocksState{Blocks: blocks, Stacks: [][]string{strList(first), strList(second), {}}},
			&BlocksState{Blocks: blocks, Stacks: [][]string{{}, {}, inter}}, nil
	}
	return nil, nil, fmt.Errorf("no PuzzleZoo generator for environment %q", env)
}

// MaxSteps is the PuzzleZoo step budget of a level.
func MaxSteps(env string, n int) int {
	switch env {
	case HanoiName:
		return 2 * ((1 << n) - 1)
	case CheckerName:
		return n*n + 4*n + 8
	case RiverName:
		return 40 * n
	case BlocksName:
		return max(16, 10*n)
	}
	return 0
}

func mustJSON(m json.Marshaler) json.RawMessage {
	b, err := m.MarshalJSON()
	if err != nil {
		panic(err) // the environments' states always encode
	}
	return b
}

// GenerateLevel builds the PuzzleZooSeeds problems of one level, with the
// oracle plan (breadth-first shortest; the optimal recursion for Hanoi; the
// constructive plan for Blocksworld above 7 blocks).
func GenerateLevel(env string, n int) ([]Problem, error) {
	e, err := Lookup(env)
	if err != nil {
		return nil, err
	}
	start, goal, err := InitialAndGoal(env, n)
	if err != nil {
		return nil, err
	}
	plan, err := Solve(e, start, goal)
	if err != nil {
		return nil, fmt.Errorf("%s n=%d: oracle: %v", env, n, err)
	}
	oracle := make([]json.RawMessage, len(plan))
	for i, a := range plan {
		oracle[i] = mustJSON(a)
	}
	method := "breadth_first_search"
	switch {
	case env == HanoiName:
		method = "optimal_recursion"
	case env == BlocksName && n > 7:
		method = "constructive"
	}
	init, gl := mustJSON(start), mustJSON(goal)
	prompt := Prompt(env, n, start, goal)
	out := make([]Problem, PuzzleZooSeeds)
	for seed := range out {
		meta, _ := json.Marshal(map[string]any{
			"benchmark_family": "puzzlezoo_core",
			"generator":        "repot-operator envs",
			"oracle":           method,
			"oracle_min_steps": len(plan),
			"output_format":    outputFormat[env],
			"seed":             seed,
			"template_id":      0,
		})
		out[seed] = Problem{
			ProblemID:             PuzzleZooID(env, n, seed),
			Environment:           env,
			Complexity:            n,
			InitialState:          init,
			GoalState:             gl,
			NaturalLanguagePrompt: prompt,
			OracleSolution:        oracle,
			MinSteps:              len(plan),
			MaxSteps:              MaxSteps(env, n),
			Metadata:              meta,
		}
	}
	return out, nil
}

var (
	puzzleZooOnce sync.Once
	puzzleZoo     []Problem
	puzzleZooErr  error
)

// PuzzleZoo returns the 775 PuzzleZoo problems in suite order (generated
// once, then copied).
func PuzzleZoo() ([]Problem, error) {
	puzzleZooOnce.Do(func() {
		for _, l := range PuzzleZooLevels() {
			ps, err := GenerateLevel(l.Env, l.Complexity)
			if err != nil {
				puzzleZooErr = err
				return
			}
			puzzleZoo = append(puzzleZoo, ps...)
		}
	})
	if puzzleZooErr != nil {
		return nil, puzzleZooErr
	}
	return append([]Problem(nil), puzzleZoo...), nil
}
