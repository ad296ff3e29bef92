package envs

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func mustEnv(t testing.TB, name string) Env {
	t.Helper()
	e, err := Lookup(name)
	if err != nil {
		t.Fatal(err)
	}
	return e
}

func mustState(t testing.TB, e Env, js string) State {
	t.Helper()
	s, err := e.DecodeState([]byte(js))
	if err != nil {
		t.Fatalf("decode state %s: %v", js, err)
	}
	return s
}

func jsonOf(t testing.TB, m json.Marshaler) string {
	t.Helper()
	if m == nil {
		return "null"
	}
	b, err := m.MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestStateRoundTrip checks that decoding and re-encoding a state gives the
// same bytes, keys sorted, for every environment.
func TestStateRoundTrip(t *testing.T) {
	tests := []struct{ env, js string }{
		{HanoiName, `{"peg_names":["A","B","C"],"pegs":{"A":[3,2],"B":[],"C":[1]}}`},
		{CheckerName, `{"board":"RR_BB","left_piece":"R","right_piece":"B"}`},
		{RiverName, `{"actors":["actor1","actor2","agent1","agent2"],"boat_capacity":3,"boat_side":"right","left":["actor2","agent2"],"right":["actor1","agent1"],"unsafe_pairs":[["actor1","agent2"],["actor2","agent1"]],"variant":"apple_agents"}`},
		{RiverName, `{"actors":["actor1","agent1"],"boat_capacity":2,"boat_side":"left","left":["actor1","agent1"],"right":[],"unsafe_pairs":[],"variant":"apple_agents"}`},
		{BlocksName, `{"blocks":["A","B","C"],"stacks":[["A","B"],[],["C"]]}`},
		{PDDLName, `{"blocks":["a","b","c"],"clear":["a","c"],"holding":null,"on":{"a":"b"},"ontable":["b","c"]}`},
		{PDDLName, `{"blocks":["a","b"],"clear":["b"],"holding":"a","on":{},"ontable":["b"]}`},
	}
	for _, tc := range tests {
		t.Run(tc.env, func(t *testing.T) {
			e := mustEnv(t, tc.env)
			s := mustState(t, e, tc.js)
			if d := cmp.Diff(tc.js, jsonOf(t, s)); d != "" {
				t.Errorf("re-encoded state differs (-want +got):\n%s", d)
			}
			again := mustState(t, e, jsonOf(t, s))
			if d := cmp.Diff(jsonOf(t, s), jsonOf(t, again)); d != "" {
				t.Errorf("second round trip differs:\n%s", d)
			}
		})
	}
}

// TestStep runs one move through Normalize and Step for each environment.
func TestStep(t *testing.T) {
	tests := []struct {
		name, env, state, raw string
		wantAction            string // "" when Normalize must fail
		wantKind              ErrorKind
		wantNext              string
	}{
		{"hanoi ok", HanoiName, `{"peg_names":["A","B","C"],"pegs":{"A":[2,1],"B":[],"C":[]}}`, `[1, 0, 2]`,
			`{"disk":1,"from":"A","to":"C","type":"move"}`, NoError, `{"peg_names":["A","B","C"],"pegs":{"A":[2],"B":[],"C":[1]}}`},
		{"hanoi peg names", HanoiName, `{"peg_names":["A","B","C"],"pegs":{"A":[2,1],"B":[],"C":[]}}`, `[1, "A", "B"]`,
			`{"disk":1,"from":"A","to":"B","type":"move"}`, NoError, `{"peg_names":["A","B","C"],"pegs":{"A":[2],"B":[1],"C":[]}}`},
		{"hanoi larger on smaller", HanoiName, `{"peg_names":["A","B","C"],"pegs":{"A":[2],"B":[],"C":[1]}}`, `[2, 0, 2]`,
			`{"disk":2,"from":"A","to":"C","type":"move"}`, ConstraintViolation, ``},
		{"hanoi same peg", HanoiName, `{"peg_names":["A","B","C"],"pegs":{"A":[2,1],"B":[],"C":[]}}`, `[1, 0, 0]`,
			`{"disk":1,"from":"A","to":"A","type":"move"}`, InvalidTransition, ``},
		{"hanoi empty source", HanoiName, `{"peg_names":["A","B","C"],"pegs":{"A":[2,1],"B":[],"C":[]}}`, `[1, 1, 0]`,
			`{"disk":1,"from":"B","to":"A","type":"move"}`, InvalidTransition, ``},
		{"hanoi not on top", HanoiName, `{"peg_names":["A","B","C"],"pegs":{"A":[2,1],"B":[],"C":[]}}`, `[2, 0, 1]`,
			`{"disk":2,"from":"A","to":"B","type":"move"}`, InvalidTransition, ``},
		{"hanoi unknown peg", HanoiName, `{"peg_names":["A","B","C"],"pegs":{"A":[2,1],"B":[],"C":[]}}`, `[1, 3, 0]`, ``, NoError, ``},
		{"hanoi short", HanoiName, `{"peg_names":["A","B","C"],"pegs":{"A":[2,1],"B":[],"C":[]}}`, `[1, 0]`, ``, NoError, ``},
		{"checker slide", CheckerName, `{"board":"R_B","left_piece":"R","right_piece":"B"}`, `["R", 0, 1]`,
			`{"from":0,"piece":"R","to":1,"type":"slide"}`, NoError, `{"board":"_RB","left_piece":"R","right_piece":"B"}`},
		{"checker jump", CheckerName, `{"board":"_RB","left_piece":"R","right_piece":"B"}`, `["B", "2", "0"]`,
			`{"from":2,"piece":"B","to":0,"type":"jump"}`, NoError, `{"board":"BR_","left_piece":"R","right_piece":"B"}`},
		{"checker backwards", CheckerName, `{"board":"B_R","left_piece":"R","right_piece":"B"}`, `["R", 2, 1]`,
			`{"from":2,"piece":"R","to":1,"type":"slide"}`, InvalidTransition, ``},
		{"checker not into empty", CheckerName, `{"board":"R_B","left_piece":"R","right_piece":"B"}`, `["R", 0, 2]`,
			`{"from":0,"piece":"R","to":2,"type":"jump"}`, InvalidTransition, ``},
		{"checker out of board", CheckerName, `{"board":"R_B","left_piece":"R","right_piece":"B"}`, `["R", -1, 1]`,
			`{"from":-1,"piece":"R","to":1,"type":"jump"}`, InvalidTransition, ``},
		{"river cross", RiverName, `{"actors":["actor1","agent1"],"boat_capacity":2,"boat_side":"left","left":["actor1","agent1"],"right":[],"unsafe_pairs":[],"variant":"apple_agents"}`, `["agent1"]`,
			`{"from":"left","passengers":["agent1"],"to":"right","type":"cross"}`, NoError,
			`{"actors":["actor1","agent1"],"boat_capacity":2,"boat_side":"right","left":["actor1"],"right":["agent1"],"unsafe_pairs":[],"variant":"apple_agents"}`},
		{"river empty boat", RiverName, `{"actors":["actor1","agent1"],"boat_capacity":2,"boat_side":"left","left":["actor1","agent1"],"right":[],"unsafe_pairs":[],"variant":"apple_agents"}`, `[]`,
			`{"from":"left","passengers":[],"to":"right","type":"cross"}`, InvalidTransition, ``},
		{"river unsafe", RiverName, `{"actors":["actor1","actor2","agent1","agent2"],"boat_capacity":3,"boat_side":"left","left":["actor1","actor2","agent1","agent2"],"right":[],"unsafe_pairs":[["actor1","agent2"],["actor2","agent1"]],"variant":"apple_agents"}`, `["agent1"]`,
			`{"from":"left","passengers":["agent1"],"to":"right","type":"cross"}`, ConstraintViolation, ``},
		{"river not on bank", RiverName, `{"actors":["actor1","agent1"],"boat_capacity":2,"boat_side":"left","left":["actor1"],"right":["agent1"],"unsafe_pairs":[],"variant":"apple_agents"}`, `["agent1"]`,
			`{"from":"left","passengers":["agent1"],"to":"right","type":"cross"}`, InvalidTransition, ``},
		{"blocks move", BlocksName, `{"blocks":["A","B"],"stacks":[["A","B"],[],[]]}`, `["B", "stack_0", 2]`,
			`{"block":"B","from":0,"to":2,"type":"move"}`, NoError, `{"blocks":["A","B"],"stacks":[["A"],[],["B"]]}`},
		{"blocks not top", BlocksName, `{"blocks":["A","B"],"stacks":[["A","B"],[],[]]}`, `["A", 0, 2]`,
			`{"block":"A","from":0,"to":2,"type":"move"}`, InvalidTransition, ``},
		{"blocks bad index", BlocksName, `{"blocks":["A","B"],"stacks":[["A","B"],[],[]]}`, `["B", "x", 2]`, ``, NoError, ``},
		{"pddl pick-up", PDDLName, `{"blocks":["a","b"],"clear":["a","b"],"holding":null,"on":{},"ontable":["a","b"]}`, `["pickup", "a"]`,
			`{"block":"a","type":"pick-up"}`, NoError, `{"blocks":["a","b"],"clear":["b"],"holding":"a","on":{},"ontable":["b"]}`},
		{"pddl stack", PDDLName, `{"blocks":["a","b"],"clear":["b"],"holding":"a","on":{},"ontable":["b"]}`, `["stack", "a", "b"]`,
			`{"block":"a","type":"stack","under":"b"}`, NoError, `{"blocks":["a","b"],"clear":["a"],"holding":null,"on":{"a":"b"},"ontable":["b"]}`},
		{"pddl unstack not on", PDDLName, `{"blocks":["a","b"],"clear":["a","b"],"holding":null,"on":{},"ontable":["a","b"]}`, `["unstack", "a", "b"]`,
			`{"block":"a","type":"unstack","under":"b"}`, InvalidTransition, ``},
		{"pddl hand full", PDDLName, `{"blocks":["a","b"],"clear":["b"],"holding":"a","on":{},"ontable":["b"]}`, `["pick-up", "b"]`,
			`{"block":"b","type":"pick-up"}`, InvalidTransition, ``},
		{"pddl unknown", PDDLName, `{"blocks":["a"],"clear":["a"],"holding":null,"on":{},"ontable":["a"]}`, `["fly", "a"]`, ``, NoError, ``},
		{"pddl empty", PDDLName, `{"blocks":["a"],"clear":["a"],"holding":null,"on":{},"ontable":["a"]}`, `[]`, ``, NoError, ``},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e := mustEnv(t, tc.env)
			s := mustState(t, e, tc.state)
			a, err := e.Normalize(nil, s, json.RawMessage(tc.raw))
			if tc.wantAction == "" {
				if err == nil {
					t.Fatalf("Normalize(%s) = %s, want a format error", tc.raw, jsonOf(t, a))
				}
				return
			}
			if err != nil {
				t.Fatalf("Normalize(%s): %v", tc.raw, err)
			}
			if d := cmp.Diff(tc.wantAction, jsonOf(t, a)); d != "" {
				t.Errorf("action (-want +got):\n%s", d)
			}
			st := e.Step(s, a)
			if st.Kind != tc.wantKind || st.Valid != (tc.wantKind == NoError) {
				t.Errorf("Step: valid=%v kind=%q (%s), want kind %q", st.Valid, st.Kind, st.Message, tc.wantKind)
			}
			if !st.Valid && st.Message == "" {
				t.Errorf("invalid step without a message")
			}
			got := ""
			if st.Valid {
				got = jsonOf(t, st.Next)
			}
			if d := cmp.Diff(tc.wantNext, got); d != "" {
				t.Errorf("next state (-want +got):\n%s", d)
			}
		})
	}
}

// TestRawMoveInverse checks Normalize(RawMove(a)) == a for every legal
// action of each PuzzleZoo start state and a PDDL state.
func TestRawMoveInverse(t *testing.T) {
	var cases []struct {
		e Env
		s State
	}
	for _, l := range PuzzleZooLevels() {
		start, _, err := InitialAndGoal(l.Env, l.Complexity)
		if err != nil {
			t.Fatal(err)
		}
		cases = append(cases, struct {
			e Env
			s State
		}{mustEnv(t, l.Env), start})
	}
	pe := mustEnv(t, PDDLName)
	cases = append(cases, struct {
		e Env
		s State
	}{pe, mustState(t, pe, `{"blocks":["a","b","c"],"clear":["a","c"],"holding":null,"on":{"a":"b"},"ontable":["b","c"]}`)})
	for _, c := range cases {
		legal := c.e.Legal(c.s)
		if len(legal) == 0 {
			t.Errorf("%s: no legal moves from the start", c.e.Name())
		}
		for _, a := range legal {
			back, err := c.e.Normalize(nil, c.s, c.e.RawMove(a))
			if err != nil {
				t.Errorf("%s: Normalize(RawMove(%s)): %v", c.e.Name(), jsonOf(t, a), err)
				continue
			}
			if d := cmp.Diff(jsonOf(t, a), jsonOf(t, back)); d != "" {
				t.Errorf("%s: round trip (-want +got):\n%s", c.e.Name(), d)
			}
			if st := c.e.Step(c.s, a); !st.Valid {
				t.Errorf("%s: Legal returned an invalid action %s: %s", c.e.Name(), jsonOf(t, a), st.Message)
			}
		}
	}
}

func TestIsGoalPartialPDDL(t *testing.T) {
	e := mustEnv(t, PDDLName)
	goal := mustState(t, e, `{"blocks":["a","b","c"],"clear":[],"holding":null,"on":{"a":"b"},"ontable":[]}`)
	tests := []struct {
		state string
		want  bool
	}{
		{`{"blocks":["a","b","c"],"clear":["a","c"],"holding":null,"on":{"a":"b"},"ontable":["b","c"]}`, true},
		{`{"blocks":["a","b","c"],"clear":["a"],"holding":null,"on":{"a":"b","b":"c"},"ontable":["c"]}`, true},
		{`{"blocks":["a","b","c"],"clear":["a","b","c"],"holding":null,"on":{},"ontable":["a","b","c"]}`, false},
	}
	for _, tc := range tests {
		if got := e.IsGoal(mustState(t, e, tc.state), goal); got != tc.want {
			t.Errorf("IsGoal(%s) = %v, want %v", tc.state, got, tc.want)
		}
	}
}

func TestLookupUnknown(t *testing.T) {
	if _, err := Lookup("sokoban"); err == nil {
		t.Error("Lookup(sokoban) succeeded")
	}
	if d := cmp.Diff([]string{BlocksName, PDDLName, CheckerName, RiverName, HanoiName}, EnvNames()); d != "" {
		t.Errorf("EnvNames (-want +got):\n%s", d)
	}
}
