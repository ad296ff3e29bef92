package envs

import (
	"errors"
	"fmt"
	"strings"
	"testing"
)

// hanoiTower is a state with n disks on peg A (goal: all on C when toC).
func hanoiTower(t *testing.T, n int, toC bool) State {
	t.Helper()
	disks := make([]string, n)
	for i := range disks {
		disks[i] = fmt.Sprint(n - i)
	}
	tower := "[" + strings.Join(disks, ",") + "]"
	js := `{"peg_names":["A","B","C"],"pegs":{"A":` + tower + `,"B":[],"C":[]}}`
	if toC {
		js = `{"peg_names":["A","B","C"],"pegs":{"A":[],"B":[],"C":` + tower + `}}`
	}
	return mustState(t, mustEnv(t, HanoiName), js)
}

// TestHanoiPerfectPlanBounded: the recursion's plan has 2^n-1 moves, so it
// must refuse states with many disks (a 40-disk state from a problems file
// or a prompt would otherwise exhaust memory) and keep serving PuzzleZoo.
func TestHanoiPerfectPlanBounded(t *testing.T) {
	for _, tc := range []struct {
		n      int
		wantOK bool
	}{{10, true}, {maxPerfectPlanDisks + 1, false}, {40, false}} {
		plan, ok := hanoiPerfectPlan(hanoiTower(t, tc.n, false), hanoiTower(t, tc.n, true))
		if ok != tc.wantOK {
			t.Errorf("%d disks: ok = %v, want %v", tc.n, ok, tc.wantOK)
		}
		if ok && len(plan) != 1<<tc.n-1 {
			t.Errorf("%d disks: %d moves, want %d", tc.n, len(plan), 1<<tc.n-1)
		}
	}
}

// TestRiverStateSizeBounded: Legal enumerates every group up to the boat's
// capacity, so DecodeState refuses states with more than riverMaxPeople.
func TestRiverStateSizeBounded(t *testing.T) {
	state := func(pairs int) string {
		var people []string
		for i := 1; i <= pairs; i++ {
			people = append(people, fmt.Sprintf(`"actor%02d"`, i), fmt.Sprintf(`"agent%02d"`, i))
		}
		list := "[" + strings.Join(people, ",") + "]"
		return `{"actors":` + list + `,"boat_capacity":8,"boat_side":"left","left":` + list + `,"right":[],"unsafe_pairs":[],"variant":"apple_agents"}`
	}
	e := mustEnv(t, RiverName)
	if _, err := e.DecodeState([]byte(state(riverMaxPeople / 2))); err != nil {
		t.Errorf("%d people: %v", riverMaxPeople, err)
	}
	_, err := e.DecodeState([]byte(state(riverMaxPeople/2 + 1)))
	if err == nil || !strings.Contains(err.Error(), "at most") {
		t.Errorf("%d people: err = %v, want a size error", riverMaxPeople+2, err)
	}
}

// TestRiverSearchBounded: an unsolvable river problem (nine pairs, a boat of
// three) ends with ErrNoPlan at the work limit instead of searching its
// whole space; a solvable five-pair problem stays within the limit.
func TestRiverSearchBounded(t *testing.T) {
	e := mustEnv(t, RiverName)
	for _, tc := range []struct {
		pairs    int
		solvable bool
	}{{5, true}, {9, false}} {
		start, goal, err := InitialAndGoal(RiverName, tc.pairs)
		if err != nil {
			t.Fatal(err)
		}
		plan, err := Solve(e, start, goal)
		if !tc.solvable {
			if !errors.Is(err, ErrNoPlan) {
				t.Errorf("%d pairs: err = %v, want ErrNoPlan", tc.pairs, err)
			}
			continue
		}
		if err != nil {
			t.Fatalf("%d pairs: %v", tc.pairs, err)
		}
		checkPlan(t, e, start, goal, plan, fmt.Sprintf("river %d pairs", tc.pairs))
	}
}
