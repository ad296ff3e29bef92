package envs

import (
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"repot.dev/repot-operator/envs/shareddata"
)

func TestMaxSteps(t *testing.T) {
	tests := []struct {
		env  string
		n    int
		want int
	}{
		{HanoiName, 3, 14}, {HanoiName, 10, 2046},
		{CheckerName, 1, 13}, {CheckerName, 9, 125},
		{RiverName, 1, 40}, {RiverName, 4, 160},
		{BlocksName, 1, 16}, {BlocksName, 3, 30}, {BlocksName, 12, 120},
	}
	for _, tc := range tests {
		if got := MaxSteps(tc.env, tc.n); got != tc.want {
			t.Errorf("MaxSteps(%s, %d) = %d, want %d", tc.env, tc.n, got, tc.want)
		}
	}
}

// TestPuzzleZooOracles replays every generated oracle plan.
func TestPuzzleZooOracles(t *testing.T) {
	ps, err := Suite(SuitePuzzleZoo)
	if err != nil {
		t.Fatal(err)
	}
	if len(ps) != 775 {
		t.Fatalf("%d problems, want 775", len(ps))
	}
	for i := range ps {
		p := &ps[i]
		replayOracle(t, p)
		if p.MinSteps != len(p.OracleSolution) {
			t.Errorf("%s: min_steps %d, oracle has %d", p.ProblemID, p.MinSteps, len(p.OracleSolution))
		}
		if i%PuzzleZooSeeds != 0 {
			continue // the prompt is the same for every seed of a level
		}
		musts := []string{"moves = [", "Rules:", "Goal"}
		if p.Environment != RiverName {
			musts = append(musts, "0-based")
		}
		for _, must := range musts {
			if !strings.Contains(p.NaturalLanguagePrompt, must) {
				t.Errorf("%s: prompt lacks %q", p.ProblemID, must)
			}
		}
	}
}

// replayOracle checks that a problem's oracle plan is valid and reaches the goal.
func replayOracle(t *testing.T, p *Problem) {
	t.Helper()
	e, err := p.Env()
	if err != nil {
		t.Fatal(err)
	}
	s, err := p.Initial()
	if err != nil {
		t.Fatal(err)
	}
	g, err := p.Goal()
	if err != nil {
		t.Fatal(err)
	}
	plan, err := p.Oracle()
	if err != nil {
		t.Fatalf("%s: %v", p.ProblemID, err)
	}
	if s, err = Replay(e, s, plan); err != nil {
		t.Fatalf("%s: oracle plan invalid at %v", p.ProblemID, err)
	}
	if !e.IsGoal(s, g) {
		t.Errorf("%s: oracle plan does not reach the goal", p.ProblemID)
	}
}

// TestPuzzleZooMatchesPublished compares the generated suite with the
// published file on every field except the prompt and metadata. The oracle
// plans are the same moves too: the Derail cases replay onto them.
func TestPuzzleZooMatchesPublished(t *testing.T) {
	path := shareddata.Require(t, "puzzlezoo_775.jsonl")
	pub, err := LoadProblemsFile(path)
	if err != nil {
		t.Fatal(err)
	}
	gen, err := Suite(SuitePuzzleZoo)
	if err != nil {
		t.Fatal(err)
	}
	if len(gen) != len(pub) {
		t.Fatalf("%d generated, %d published", len(gen), len(pub))
	}
	type view struct {
		ID, Env            string
		Complexity         int
		Initial, Goal      string
		MinSteps, MaxSteps int
		OracleLen          int
		Oracle             []string
	}
	mk := func(p *Problem) view {
		c := func(b []byte) string { s, _ := Canonical(b); return string(s) }
		var oracle []string
		for _, a := range p.OracleSolution {
			oracle = append(oracle, c(a))
		}
		return view{p.ProblemID, p.Environment, p.Complexity, c(p.InitialState), c(p.GoalState), p.MinSteps, p.MaxSteps, len(p.OracleSolution), oracle}
	}
	for i := range gen {
		if d := cmp.Diff(mk(&pub[i]), mk(&gen[i])); d != "" {
			t.Fatalf("problem %d differs (-published +generated):\n%s", i, d)
		}
	}
}

func TestOpenSource120(t *testing.T) {
	path := shareddata.Require(t, "open_source_120_ids.txt")
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	want := strings.Fields(string(b))
	ps, err := Suite(SuiteOpenSource)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, p := range ps {
		got = append(got, p.ProblemID)
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("open-source-120 ids (-want +got):\n%s", d)
	}
}

// TestStratifiedSampleSmall checks the sampler's round-robin on a toy input
// (independent of the published data).
func TestStratifiedSampleSmall(t *testing.T) {
	var ps []Problem
	for _, g := range []struct {
		env string
		c   int
	}{{"b", 1}, {"a", 2}, {"a", 1}} {
		for i := 0; i < 2; i++ {
			ps = append(ps, Problem{ProblemID: g.env + string(rune('0'+g.c)) + string(rune('x'+i)), Environment: g.env, Complexity: g.c})
		}
	}
	got := StratifiedSample(ps, 4, 0)
	var ids []string
	for _, p := range got {
		ids = append(ids, p.ProblemID)
	}
	if len(ids) != 4 || ids[0][:2] != "a1" || ids[1][:2] != "a2" || ids[2][:2] != "b1" || ids[3][:2] != "a1" {
		t.Errorf("sample order %v: want groups a1, a2, b1, a1", ids)
	}
	if ids[0] == ids[3] {
		t.Errorf("took %s twice", ids[0])
	}
}

func TestSuiteErrors(t *testing.T) {
	for _, name := range []string{"nope", SuitePlanBench, SuiteDerail} {
		if _, err := Suite(name); err == nil {
			t.Errorf("Suite(%q) succeeded", name)
		}
	}
}

func TestProblemMarshalSortedKeys(t *testing.T) {
	p := Problem{ProblemID: "x", Environment: CheckerName, Complexity: 1,
		InitialState: json.RawMessage(`{"board":"R_B","left_piece":"R","right_piece":"B"}`),
		GoalState:    json.RawMessage(`{"board":"B_R","left_piece":"R","right_piece":"B"}`)}
	b, err := json.Marshal(p)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"complexity":1,"environment":"checker_jumping","goal_state":{"board":"B_R","left_piece":"R","right_piece":"B"},"initial_state":{"board":"R_B","left_piece":"R","right_piece":"B"},"max_steps":0,"min_steps":0,"natural_language_prompt":"","oracle_solution":[],"problem_id":"x"}`
	if d := cmp.Diff(want, string(b)); d != "" {
		t.Errorf("(-want +got):\n%s", d)
	}
	c, _ := Canonical(b)
	if string(c) != string(b) {
		t.Errorf("problem JSON is not in canonical (sorted) form")
	}
}
