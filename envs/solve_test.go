package envs

import (
	"errors"
	"math/rand/v2"

	"github.com/google/go-cmp/cmp"
	"testing"

	"repot.dev/repot-operator/envs/shareddata"
)

// randomWalk applies up to n random legal moves (deterministic for a seed).
func randomWalk(e Env, s State, n int, r *rand.Rand) State {
	for i := 0; i < n; i++ {
		legal := e.Legal(s)
		if len(legal) == 0 {
			return s
		}
		st := e.Step(s, legal[r.IntN(len(legal))])
		s = st.Next
	}
	return s
}

func checkPlan(t *testing.T, e Env, from, goal State, plan []Action, what string) {
	t.Helper()
	end, err := Replay(e, from, plan)
	if err != nil {
		t.Fatalf("%s: plan invalid: %v", what, err)
	}
	if !e.IsGoal(end, goal) {
		t.Fatalf("%s: plan of %d moves does not reach the goal", what, len(plan))
	}
}

// TestSolvePuzzleZoo solves every level from its start and from random
// reachable states.
func TestSolvePuzzleZoo(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for _, l := range PuzzleZooLevels() {
		e := mustEnv(t, l.Env)
		start, goal, err := InitialAndGoal(l.Env, l.Complexity)
		if err != nil {
			t.Fatal(err)
		}
		for k := 0; k < 8; k++ {
			from := randomWalk(e, start, k*7, r)
			plan, err := Solve(e, from, goal)
			if errors.Is(err, ErrNoPlan) && l.Env == CheckerName {
				continue // checker moves are irreversible: some states are dead ends
			}
			if err != nil {
				t.Fatalf("%s n=%d walk %d: %v", l.Env, l.Complexity, k, err)
			}
			checkPlan(t, e, from, goal, plan, l.Env)
		}
	}
}

// TestSolveShortest compares Solve with plain breadth-first search where
// Solve promises a shortest plan.
func TestSolveShortest(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for _, tc := range []struct {
		env string
		n   int
	}{{HanoiName, 3}, {HanoiName, 5}, {BlocksName, 4}, {BlocksName, 5}, {RiverName, 3}, {CheckerName, 3}} {
		e := mustEnv(t, tc.env)
		start, goal, _ := InitialAndGoal(tc.env, tc.n)
		for k := 0; k < 6; k++ {
			from := randomWalk(e, start, 3*k, r)
			want, err1 := forwardBFS(e, from, goal, bfsLimit)
			got, err2 := Solve(e, from, goal)
			if (err1 == nil) != (err2 == nil) {
				t.Fatalf("%s n=%d: BFS err %v, Solve err %v", tc.env, tc.n, err1, err2)
			}
			if len(want) != len(got) {
				t.Errorf("%s n=%d walk %d: Solve found %d moves, BFS %d", tc.env, tc.n, k, len(got), len(want))
			}
		}
	}
}

func TestSolveHanoiUnusualGoal(t *testing.T) {
	e := mustEnv(t, HanoiName)
	from := mustState(t, e, `{"peg_names":["A","B","C"],"pegs":{"A":[3,2,1],"B":[],"C":[]}}`)
	goal := mustState(t, e, `{"peg_names":["A","B","C"],"pegs":{"A":[1],"B":[3],"C":[2]}}`)
	plan, err := Solve(e, from, goal)
	if err != nil {
		t.Fatal(err)
	}
	checkPlan(t, e, from, goal, plan, "hanoi split goal")
}

func TestSolveBlocksGeneralGoal(t *testing.T) {
	e := mustEnv(t, BlocksName)
	r := rand.New(rand.NewPCG(5, 6))
	start, _, _ := InitialAndGoal(BlocksName, 10)
	for k := 0; k < 20; k++ {
		from := randomWalk(e, start, 30, r)
		goal := randomWalk(e, start, 40, r)
		plan, err := Solve(e, from, goal)
		if err != nil {
			t.Fatal(err)
		}
		checkPlan(t, e, from, goal, plan, "blocks 10 random goal")
	}
}

func TestSolvePlanBench(t *testing.T) {
	ps, err := LoadPlanBench(shareddata.Require(t, "planbench_blocksworld.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	r := rand.New(rand.NewPCG(7, 8))
	for i := range ps {
		p := &ps[i]
		e, _ := p.Env()
		s, _ := p.Initial()
		g, _ := p.Goal()
		for _, from := range []State{s, randomWalk(e, s, 15, r)} {
			plan, err := Solve(e, from, g)
			if err != nil {
				t.Fatalf("%s: %v", p.ProblemID, err)
			}
			checkPlan(t, e, from, g, plan, p.ProblemID)
		}
	}
}

func TestSolveDerail(t *testing.T) {
	cases, err := LoadDerail(shareddata.Require(t, "derail_550.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	pz, _ := Suite(SuitePuzzleZoo)
	index := IndexProblems(pz)
	dead := 0
	for _, c := range cases {
		p, _ := index(c.ProblemID)
		e, _ := p.Env()
		g, _ := p.Goal()
		for _, js := range [][]byte{c.LastValidState, c.InjectedState} {
			from, _ := e.DecodeState(js)
			plan, err := Solve(e, from, g)
			if errors.Is(err, ErrNoPlan) && c.Environment == CheckerName {
				dead++
				continue
			}
			if err != nil {
				t.Fatalf("%s: %v", c.CaseID, err)
			}
			checkPlan(t, e, from, g, plan, c.CaseID)
		}
	}
	t.Logf("%d checker states with no way to the goal", dead)
}

func TestSolveNil(t *testing.T) {
	if _, err := Solve(nil, nil, nil); err == nil {
		t.Error("Solve(nil) succeeded")
	}
}

func planJSON(t *testing.T, plan []Action) []string {
	t.Helper()
	out := make([]string, len(plan))
	for i, a := range plan {
		out[i] = jsonOf(t, a)
	}
	return out
}

// TestSpecialisedSearchMatchesGeneric checks the fast river, checker and PDDL
// searches against the generic breadth-first search: the very same plan
// (the enumeration order fixes the PuzzleZoo oracles).
func TestSpecialisedSearchMatchesGeneric(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 10))
	type tc struct {
		e     Env
		start State
		goal  State
	}
	var cases []tc
	for n := 1; n <= 4; n++ {
		s, g, _ := InitialAndGoal(RiverName, n)
		cases = append(cases, tc{mustEnv(t, RiverName), s, g})
	}
	for n := 1; n <= 5; n++ {
		s, g, _ := InitialAndGoal(CheckerName, n)
		cases = append(cases, tc{mustEnv(t, CheckerName), s, g})
	}
	pe := mustEnv(t, PDDLName)
	cases = append(cases,
		tc{pe, mustState(t, pe, `{"blocks":["a","b","c","d"],"clear":["a","b","d"],"holding":null,"on":{"b":"c"},"ontable":["a","c","d"]}`),
			mustState(t, pe, `{"blocks":["a","b","c","d"],"clear":[],"holding":null,"on":{"c":"b","a":"d"},"ontable":[]}`)},
		tc{pe, mustState(t, pe, `{"blocks":["a","b","c","d","e"],"clear":["e"],"holding":null,"on":{"e":"d","d":"c","c":"b","b":"a"},"ontable":["a"]}`),
			mustState(t, pe, `{"blocks":["a","b","c","d","e"],"clear":[],"holding":null,"on":{"a":"b","b":"c"},"ontable":["e"]}`)})
	for _, c := range cases {
		for k := 0; k < 6; k++ {
			from := randomWalk(c.e, c.start, 2*k, r)
			want, err1 := forwardBFS(c.e, from, c.goal, bfsLimit)
			got, err2 := Solve(c.e, from, c.goal)
			if errors.Is(err1, ErrNoPlan) && errors.Is(err2, ErrNoPlan) {
				continue // a checker dead end, for both
			}
			if err1 != nil || err2 != nil {
				t.Fatalf("%s: generic err %v, Solve err %v", c.e.Name(), err1, err2)
			}
			if d := cmp.Diff(planJSON(t, want), planJSON(t, got)); d != "" {
				t.Errorf("%s walk %d: plans differ (-generic +Solve):\n%s", c.e.Name(), k, d)
			}
		}
	}
}

// TestConcurrentUse runs suites, steps and Solve from several goroutines
// (meaningful under -race).
func TestConcurrentUse(t *testing.T) {
	done := make(chan error)
	for g := 0; g < 6; g++ {
		go func(g int) {
			l := PuzzleZooLevels()[g*5]
			e, _ := Lookup(l.Env)
			start, goal, _ := InitialAndGoal(l.Env, l.Complexity)
			if _, err := Suite(SuiteOpenSource); err != nil {
				done <- err
				return
			}
			plan, err := Solve(e, start, goal)
			if err == nil {
				_, err = Replay(e, start, plan)
			}
			done <- err
		}(g)
	}
	for g := 0; g < 6; g++ {
		if err := <-done; err != nil {
			t.Error(err)
		}
	}
}
