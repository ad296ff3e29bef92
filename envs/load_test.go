package envs

import (
	"errors"
	"io"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/google/go-cmp/cmp"

	"repot.dev/repot-operator/envs/shareddata"
)

func TestPlanBench(t *testing.T) {
	ps, err := LoadPlanBench(shareddata.Require(t, "planbench_blocksworld.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	if len(ps) != 378 {
		t.Fatalf("%d PlanBench problems, want 378", len(ps))
	}
	empty := 0
	for i := range ps {
		if len(ps[i].OracleSolution) == 0 {
			// 88 published records carry no oracle plan; Solve must still
			// find one (TestSolvePlanBench).
			empty++
			continue
		}
		replayOracle(t, &ps[i])
	}
	t.Logf("%d of %d PlanBench records have an oracle plan; %d have none", len(ps)-empty, len(ps), empty)
}

func TestDerail(t *testing.T) {
	cases, err := LoadDerail(shareddata.Require(t, "derail_550.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	if len(cases) != 550 {
		t.Fatalf("%d Derail cases, want 550", len(cases))
	}
	pz, err := Suite(SuitePuzzleZoo)
	if err != nil {
		t.Fatal(err)
	}
	index := IndexProblems(pz)
	for _, c := range cases {
		p, ok := index(c.ProblemID)
		if !ok {
			t.Errorf("%s: unknown problem %s", c.CaseID, c.ProblemID)
			continue
		}
		e, _ := p.Env()
		s, _ := p.Initial()
		if c.InjectionStep > len(p.OracleSolution) {
			t.Errorf("%s: injection_step %d beyond the oracle's %d moves", c.CaseID, c.InjectionStep, len(p.OracleSolution))
			continue
		}
		for _, raw := range p.OracleSolution[:c.InjectionStep] {
			a, _ := e.DecodeAction(raw)
			st := e.Step(s, a)
			if !st.Valid {
				t.Fatalf("%s: oracle move invalid: %s", c.CaseID, st.Message)
			}
			s = st.Next
		}
		want, _ := e.DecodeState(c.LastValidState)
		if d := cmp.Diff(jsonOf(t, want), jsonOf(t, s)); d != "" {
			t.Errorf("%s: last_valid_state differs from the state after %d oracle moves (-want +got):\n%s", c.CaseID, c.InjectionStep, d)
		}
		if c.InjectionType == "legal_wrong_action" {
			a, err := e.DecodeAction(c.InjectedAction)
			if err != nil {
				t.Errorf("%s: injected_action: %v", c.CaseID, err)
				continue
			}
			st := e.Step(s, a)
			inj, _ := e.DecodeState(c.InjectedState)
			if !st.Valid || jsonOf(t, st.Next) != jsonOf(t, inj) {
				t.Errorf("%s: the injected action does not lead to injected_state", c.CaseID)
			}
		}
	}
}

const goodProblem = `{"complexity":1,"environment":"checker_jumping","goal_state":{"board":"B_R","left_piece":"R","right_piece":"B"},"initial_state":{"board":"R_B","left_piece":"R","right_piece":"B"},"max_steps":13,"min_steps":3,"natural_language_prompt":"p","oracle_solution":[{"from":0,"piece":"R","to":1,"type":"slide"}],"problem_id":"p1"}`

func TestLoadProblemsErrors(t *testing.T) {
	tests := []struct {
		name      string
		input     string
		wantN     int
		wantLines []int
		wantIn    string
	}{
		{"good", goodProblem + "\n\n", 1, nil, ""},
		{"not json", goodProblem + "\n{oops\n", 1, []int{2}, "line 2"},
		{"unknown env", strings.Replace(goodProblem, "checker_jumping", "chess", 1), 0, []int{1}, "unknown environment"},
		{"bad state", strings.Replace(goodProblem, `"R_B"`, `"R__B"`, 1), 0, []int{1}, "initial_state"},
		{"bad oracle", strings.Replace(goodProblem, `"slide"`, `"hop"`, 1), 0, []int{1}, "oracle_solution[0]"},
		{"duplicate", goodProblem + "\n" + goodProblem, 1, []int{2}, "duplicate problem_id"},
		{"array", "[1,2]\n" + goodProblem, 1, []int{1}, "line 1"},
		{"trailing", goodProblem + " 5", 0, []int{1}, "trailing"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ps, err := LoadProblems(strings.NewReader(tc.input))
			if len(ps) != tc.wantN {
				t.Errorf("%d problems, want %d", len(ps), tc.wantN)
			}
			var le *LoadError
			if tc.wantLines == nil {
				if err != nil {
					t.Fatalf("unexpected error: %v", err)
				}
				return
			}
			if !errors.As(err, &le) {
				t.Fatalf("error %v, want *LoadError", err)
			}
			var lines []int
			for _, l := range le.Lines {
				lines = append(lines, l.Line)
			}
			if d := cmp.Diff(tc.wantLines, lines); d != "" {
				t.Errorf("bad lines (-want +got):\n%s", d)
			}
			if !strings.Contains(err.Error(), tc.wantIn) {
				t.Errorf("error %q lacks %q", err, tc.wantIn)
			}
		})
	}
}

func TestLoadDerailErrors(t *testing.T) {
	good := `{"case_id":"c1","complexity":1,"environment":"checker_jumping","injected_action":{"type":"invalid_recovery_probe"},"injected_state":{"board":"_RB","left_piece":"R","right_piece":"B"},"injection_step":1,"injection_type":"invalid_action","last_valid_state":{"board":"_RB","left_piece":"R","right_piece":"B"},"problem_id":"p"}`
	in := good + "\nnull\n" + strings.Replace(good, `"c1"`, `"c2"`, 1) + "\n" + strings.Replace(good, `"injection_step":1`, `"injection_step":-1`, 1)
	cs, err := LoadDerailReader(strings.NewReader(in), "test")
	if len(cs) != 2 {
		t.Errorf("%d cases, want 2", len(cs))
	}
	var le *LoadError
	if !errors.As(err, &le) || len(le.Lines) != 2 || le.Lines[0].Line != 2 || le.Lines[1].Line != 4 {
		t.Fatalf("error %v, want lines 2 and 4", err)
	}
}

// TestLoadReadErrorNamesTheLine: a read that fails mid-file (a broken
// connection, a line over the size limit) is reported on the line that
// could not be read, after the good lines before it.
func TestLoadReadErrorNamesTheLine(t *testing.T) {
	in := io.MultiReader(strings.NewReader(goodProblem+"\n\n"), iotest.ErrReader(errors.New("connection reset")))
	ps, err := LoadProblems(in)
	if len(ps) != 1 {
		t.Errorf("%d problems, want 1", len(ps))
	}
	var le *LoadError
	if !errors.As(err, &le) {
		t.Fatalf("error %v, want *LoadError", err)
	}
	want := []LineError{{Line: 3, Reason: "cannot read: connection reset"}}
	if d := cmp.Diff(want, le.Lines); d != "" {
		t.Errorf("lines (-want +got):\n%s", d)
	}
}
