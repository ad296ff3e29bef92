package envs

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
)

// fuzzNormalize feeds arbitrary raw moves to Normalize and, when a move
// normalizes, to Step, Legal and RawMove: none may panic, and a valid step
// must yield a state that re-encodes and decodes.
func fuzzNormalize(f *testing.F, env string, state string, seeds []string) {
	e := mustEnv(f, env)
	s := mustState(f, e, state)
	for _, sd := range seeds {
		f.Add([]byte(sd))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		a, err := e.Normalize(nil, s, json.RawMessage(raw))
		if err != nil {
			if err.Error() == "" {
				t.Fatal("empty format error")
			}
			return
		}
		st := e.Step(s, a)
		if st.Valid {
			b, err := st.Next.MarshalJSON()
			if err != nil {
				t.Fatal(err)
			}
			if _, err := e.DecodeState(b); err != nil {
				t.Fatalf("next state %s does not decode: %v", b, err)
			}
		} else if st.Message == "" {
			t.Fatal("invalid step without a message")
		}
		_ = e.RawMove(a)
		if _, err := a.MarshalJSON(); err != nil {
			t.Fatal(err)
		}
	})
}

func FuzzNormalizeHanoi(f *testing.F) {
	fuzzNormalize(f, HanoiName, `{"peg_names":["A","B","C"],"pegs":{"A":[3,2],"B":[],"C":[1]}}`,
		[]string{`[1, 2, 0]`, `[2, "A", "B"]`, `[1, 3, 0]`, `"move"`, `[1, 0]`, `[1e9, 0, 1]`, `[1.5, "a", " 2 "]`, `[true, null, {}]`})
}

func FuzzNormalizeChecker(f *testing.F) {
	fuzzNormalize(f, CheckerName, `{"board":"RR_BB","left_piece":"R","right_piece":"B"}`,
		[]string{`["R", 1, 2]`, `["B", "3", "2"]`, `["R", -1, 4]`, `["X", 0, 0]`, `["R", 2]`, `[1, 2, 3]`, `["R", 99999999999999999999, 2]`})
}

func FuzzNormalizeRiver(f *testing.F) {
	fuzzNormalize(f, RiverName, `{"actors":["actor1","actor2","agent1","agent2"],"boat_capacity":3,"boat_side":"left","left":["actor1","actor2","agent1","agent2"],"right":[],"unsafe_pairs":[["actor1","agent2"],["actor2","agent1"]],"variant":"apple_agents"}`,
		[]string{`["actor1", "agent1"]`, `[]`, `["agent1"]`, `["actor1", "actor1"]`, `"actor1"`, `[1]`, `["actor99"]`})
}

func FuzzNormalizeBlocks(f *testing.F) {
	fuzzNormalize(f, BlocksName, `{"blocks":["A","B","C"],"stacks":[["A","B"],["C"],[]]}`,
		[]string{`["B", 0, 2]`, `["C", "stack_1", 2]`, `["A", "x", 0]`, `["A", 1]`, `["Z", 3, -1]`, `[null, 0, 1]`})
}

func FuzzNormalizePDDL(f *testing.F) {
	fuzzNormalize(f, PDDLName, `{"blocks":["a","b","c"],"clear":["a","c"],"holding":null,"on":{"a":"b"},"ontable":["b","c"]}`,
		[]string{`["unstack", "a", "b"]`, `["pick-up", "c"]`, `["pickup"]`, `[]`, `["fly", "a"]`, `["stack", "a"]`, `[["x"]]`, `"pick-up a"`})
}

// FuzzDecodeState feeds arbitrary JSON to every environment's DecodeState,
// Legal and IsGoal.
func FuzzDecodeState(f *testing.F) {
	f.Add(`{"peg_names":["A","B","C"],"pegs":{"A":[3,2],"B":[],"C":[1]}}`)
	f.Add(`{"board":"R_B","left_piece":"R","right_piece":"B"}`)
	f.Add(`{"blocks":["A"],"stacks":[["A"],[],[]]}`)
	f.Add(`{"blocks":["a"],"clear":["a"],"holding":"a","on":{"a":"a"},"ontable":[]}`)
	f.Add(`{"actors":["actor1","agent1"],"boat_capacity":2,"boat_side":"left","left":["actor1"],"right":[],"unsafe_pairs":[["actor1","agent2"]],"variant":"v"}`)
	f.Fuzz(func(t *testing.T, js string) {
		for _, name := range EnvNames() {
			e, _ := Lookup(name)
			s, err := e.DecodeState([]byte(js))
			if err != nil {
				continue
			}
			for _, a := range e.Legal(s) {
				_ = e.Step(s, a)
			}
			_ = e.IsGoal(s, s)
		}
	})
}

func FuzzLoadProblems(f *testing.F) {
	f.Add(goodProblem)
	f.Add(goodProblem + "\n" + goodProblem)
	f.Add("{oops\n\n[1]\nnull")
	f.Add(strings.Replace(goodProblem, "checker_jumping", "tower_of_hanoi", 1))
	f.Fuzz(func(t *testing.T, in string) {
		ps, err := LoadProblems(strings.NewReader(in))
		if err != nil && err.Error() == "" {
			t.Fatal("empty error")
		}
		for i := range ps {
			if ps[i].Validate() != nil {
				t.Fatalf("loaded an invalid problem")
			}
		}
	})
}

func FuzzLoadDerail(f *testing.F) {
	f.Add(`{"case_id":"c1","complexity":1,"environment":"checker_jumping","injected_action":{"type":"invalid_recovery_probe"},"injected_state":{"board":"_RB","left_piece":"R","right_piece":"B"},"injection_step":1,"injection_type":"invalid_action","last_valid_state":{"board":"_RB","left_piece":"R","right_piece":"B"},"problem_id":"p"}`)
	f.Add("null\n{}\n[]")
	f.Fuzz(func(t *testing.T, in string) {
		cs, err := LoadDerailReader(strings.NewReader(in), "fuzz")
		if err != nil && err.Error() == "" {
			t.Fatal("empty error")
		}
		for i := range cs {
			if cs[i].Validate() != nil {
				t.Fatalf("loaded an invalid case")
			}
		}
	})
}

// FuzzIntList checks the integer-array fast path against encoding/json:
// whenever intList accepts an input, decodeValue must give the same value.
func FuzzIntList(f *testing.F) {
	for _, s := range []string{`[1, 2, 0]`, `[]`, ` [ -0 ,10]  `, `[01]`, `[1,]`, `[1 2]`, `[-]`, `[1]x`, "[1,\t2,\r\n3]", `[1e3]`, `[1.0]`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		got, ok := intList(raw)
		if !ok {
			return
		}
		want, err := decodeValue(raw)
		if err != nil {
			t.Fatalf("intList accepted %q, which encoding/json refuses: %v", raw, err)
		}
		if !reflect.DeepEqual(any(got), want) {
			t.Fatalf("intList(%q) = %#v, encoding/json gives %#v", raw, got, want)
		}
	})
}
