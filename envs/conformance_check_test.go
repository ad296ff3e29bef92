package envs

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestCheckConformanceFields feeds CheckConformance one recorded transition
// at a time, right and then wrong in each compared field, so that a checker
// that agreed with everything (or ignored a field) fails here, independently
// of the published data.
func TestCheckConformanceFields(t *testing.T) {
	const (
		id    = `"problem_id":"apple_hanoi_n03_seed0000_template00","environment":"tower_of_hanoi"`
		state = `"state":{"peg_names":["A","B","C"],"pegs":{"A":[3,2,1],"B":[],"C":[]}}`
		next  = `"next_state":{"peg_names":["A","B","C"],"pegs":{"A":[3,2],"B":[],"C":[1]}}`
	)
	valid := `{` + id + `,` + state + `,"raw_move":[1,0,2],"normalized":{"disk":1,"from":"A","to":"C","type":"move"},"valid":true,"error_type":null,` + next + `,"is_goal_after":false,"legal_count":2,"message":""}`
	invalid := `{` + id + `,` + state + `,"raw_move":[2,0,1],"normalized":{"disk":2,"from":"A","to":"B","type":"move"},"valid":false,"error_type":"INVALID_TRANSITION","next_state":null,"is_goal_after":null,"legal_count":2,"message":"Disk 2 is not on top."}`
	formatErr := `{` + id + `,` + state + `,"raw_move":[1,0],"normalize_error":"Hanoi move must be [disk, from, to].","normalized":null,"valid":false}`
	tests := []struct {
		name, line string
		wantField  string // "" when the line must agree
	}{
		{"valid agrees", valid, ""},
		{"invalid agrees", invalid, ""},
		{"format error agrees", formatErr, ""},
		{"river goal needs no problem", `{"problem_id":"unknown","environment":"river_crossing","state":{"actors":["actor1","agent1"],"boat_capacity":2,"boat_side":"left","left":["actor1","agent1"],"right":[],"unsafe_pairs":[],"variant":"apple_agents"},"raw_move":["actor1","agent1"],"normalized":{"from":"left","passengers":["actor1","agent1"],"to":"right","type":"cross"},"valid":true,"error_type":null,"next_state":{"actors":["actor1","agent1"],"boat_capacity":2,"boat_side":"right","left":[],"right":["actor1","agent1"],"unsafe_pairs":[],"variant":"apple_agents"},"is_goal_after":true,"legal_count":3}`, ""},
		{"normalized differs", strings.Replace(valid, `"to":"C","type"`, `"to":"B","type"`, 1), "normalized"},
		{"validity differs", strings.Replace(invalid, `"valid":false`, `"valid":true`, 1), "valid"},
		{"error kind differs", strings.Replace(invalid, `"INVALID_TRANSITION"`, `"CONSTRAINT_VIOLATION"`, 1), "error_type"},
		{"next state in another key order agrees", strings.Replace(valid, next, `"next_state":{"pegs":{"C":[1],"B":[],"A":[3,2]},"peg_names":["A","B","C"]}`, 1), ""},
		{"next state wrong", strings.Replace(valid, `"A":[3,2],"B":[],"C":[1]`, `"A":[3,2],"B":[1],"C":[]`, 1), "next_state"},
		{"goal differs", strings.Replace(valid, `"is_goal_after":false`, `"is_goal_after":true`, 1), "is_goal_after"},
		{"goal missing for a valid step", strings.Replace(valid, `"is_goal_after":false`, `"is_goal_after":null`, 1), "is_goal_after"},
		{"legal count differs", strings.Replace(valid, `"legal_count":2`, `"legal_count":3`, 1), "legal_count"},
		{"format error expected", strings.Replace(valid, `"message":""`, `"normalize_error":"bad"`, 1), "normalize"},
		{"format error not expected", strings.Replace(formatErr, `"normalize_error":"Hanoi move must be [disk, from, to].",`, ``, 1), "normalize"},
		{"unknown environment", strings.Replace(valid, `"tower_of_hanoi"`, `"chess"`, 1), "environment"},
		{"undecodable state", strings.Replace(valid, `"pegs":{"A":[3,2,1],`, `"pegs":{`, 1), "state"},
		{"goal of an unknown problem", strings.Replace(valid, `apple_hanoi_n03_seed0000_template00`, `nope`, 1), "is_goal_after"},
		{"not a record", `{"valid":`, "line"},
	}
	pz, err := GenerateLevel(HanoiName, 3)
	if err != nil {
		t.Fatal(err)
	}
	index := IndexProblems(pz)
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			rep, err := CheckConformance(strings.NewReader("\n"+tc.line+"\n"), index)
			if err != nil {
				t.Fatal(err)
			}
			if rep.Total != 1 {
				t.Fatalf("total %d, want 1", rep.Total)
			}
			var fields []string
			for _, d := range rep.First {
				fields = append(fields, d.Field)
				if d.Line != 2 {
					t.Errorf("disagreement on line %d, want 2: %s", d.Line, d)
				}
			}
			var want []string
			if tc.wantField != "" {
				want = []string{tc.wantField}
			}
			if diff := cmp.Diff(want, fields); diff != "" {
				t.Errorf("disagreeing fields (-want +got):\n%s\n%v", diff, rep.First)
			}
			if wantAgree := len(want) == 0; (rep.Agree == 1) != wantAgree {
				t.Errorf("agree %d/1, want agreement %v", rep.Agree, wantAgree)
			}
		})
	}
}
