package envs

import (
	"encoding/json"
	"fmt"
	"io"
	"strconv"
)

// conformanceRow is one recorded transition of the reference verifiers.
type conformanceRow struct {
	Environment    string          `json:"environment"`
	ProblemID      string          `json:"problem_id"`
	State          json.RawMessage `json:"state"`
	RawMove        json.RawMessage `json:"raw_move"`
	Normalized     json.RawMessage `json:"normalized"`
	NormalizeError *string         `json:"normalize_error"`
	Valid          bool            `json:"valid"`
	ErrorType      *string         `json:"error_type"`
	NextState      json.RawMessage `json:"next_state"`
	IsGoalAfter    *bool           `json:"is_goal_after"`
	LegalCount     *int            `json:"legal_count"`
	Message        string          `json:"message"`
}

// Disagreement is one conformance line where this implementation differs.
type Disagreement struct {
	Line      int
	ProblemID string
	Env       string
	Field     string
	Want, Got string
}

// String renders the disagreement as one line: where, which field, want and got.
func (d Disagreement) String() string {
	return fmt.Sprintf("line %d (%s, %s): %s: want %s, got %s", d.Line, d.Env, d.ProblemID, d.Field, d.Want, d.Got)
}

// ConformanceReport is the result of replaying a conformance file.
type ConformanceReport struct {
	Total, Agree int
	// First holds the first disagreements (at most MaxShown).
	First []Disagreement
}

// MaxShown bounds the disagreements kept in a ConformanceReport.
const MaxShown = 20

// ProblemIndex finds a problem (for its goal) by id.
type ProblemIndex func(id string) (*Problem, bool)

// IndexProblems builds a ProblemIndex over problem lists.
func IndexProblems(lists ...[]Problem) ProblemIndex {
	m := map[string]*Problem{}
	for _, l := range lists {
		for i := range l {
			m[l[i].ProblemID] = &l[i]
		}
	}
	return func(id string) (*Problem, bool) { p, ok := m[id]; return p, ok }
}

// CheckConformance replays every line of a conformance JSONL file and
// compares validity, error kind, normalized action, next state, goal check
// and the number of legal moves (messages are not compared).
func CheckConformance(r io.Reader, problems ProblemIndex) (ConformanceReport, error) {
	var rep ConformanceReport
	goals := map[string]State{}
	err := eachLine(r, func(n int, line []byte) {
		rep.Total++
		var row conformanceRow
		if err := decodeLine(line, &row); err != nil {
			rep.add(Disagreement{Line: n, Field: "line", Want: "a conformance record", Got: err.Error()})
			return
		}
		if d, ok := checkRow(&row, problems, goals); !ok {
			d.Line, d.ProblemID, d.Env = n, row.ProblemID, row.Environment
			rep.add(d)
			return
		}
		rep.Agree++
	})
	return rep, err
}

func (r *ConformanceReport) add(d Disagreement) {
	if len(r.First) < MaxShown {
		r.First = append(r.First, d)
	}
}

func canon(b []byte) string {
	if len(b) == 0 {
		return "null"
	}
	c, err := Canonical(b)
	if err != nil {
		return "<invalid JSON: " + err.Error() + ">"
	}
	return string(c)
}

func marshalCanon(v json.Marshaler) string {
	if v == nil {
		return "null"
	}
	b, err := v.MarshalJSON()
	if err != nil {
		return "<" + err.Error() + ">"
	}
	return canon(b)
}

func checkRow(row *conformanceRow, problems ProblemIndex, goals map[string]State) (Disagreement, bool) {
	e, err := Lookup(row.Environment)
	if err != nil {
		return Disagreement{Field: "environment", Want: row.Environment, Got: err.Error()}, false
	}
	s, err := e.DecodeState(row.State)
	if err != nil {
		return Disagreement{Field: "state", Want: "a decodable state", Got: err.Error()}, false
	}
	var p *Problem
	if problems != nil {
		p, _ = problems(row.ProblemID)
	}
	a, nerr := e.Normalize(p, s, row.RawMove)
	if row.NormalizeError != nil {
		if nerr == nil {
			return Disagreement{Field: "normalize", Want: "format error " + strconv.Quote(*row.NormalizeError), Got: "action " + marshalCanon(a)}, false
		}
		return Disagreement{}, true
	}
	if nerr != nil {
		return Disagreement{Field: "normalize", Want: "action " + canon(row.Normalized), Got: "format error " + strconv.Quote(nerr.Error())}, false
	}
	if w, g := canon(row.Normalized), marshalCanon(a); w != g {
		return Disagreement{Field: "normalized", Want: w, Got: g}, false
	}
	st := e.Step(s, a)
	if st.Valid != row.Valid {
		return Disagreement{Field: "valid", Want: strconv.FormatBool(row.Valid), Got: fmt.Sprintf("%v (%s)", st.Valid, st.Message)}, false
	}
	wantKind := ""
	if row.ErrorType != nil {
		wantKind = *row.ErrorType
	}
	if string(st.Kind) != wantKind {
		return Disagreement{Field: "error_type", Want: wantKind, Got: fmt.Sprintf("%s (%s)", st.Kind, st.Message)}, false
	}
	wantNext := canon(row.NextState)
	gotNext := "null"
	if st.Valid {
		gotNext = marshalCanon(st.Next)
	}
	if wantNext != gotNext {
		return Disagreement{Field: "next_state", Want: wantNext, Got: gotNext}, false
	}
	if row.LegalCount != nil {
		if got := len(e.Legal(s)); got != *row.LegalCount {
			return Disagreement{Field: "legal_count", Want: strconv.Itoa(*row.LegalCount), Got: strconv.Itoa(got)}, false
		}
	}
	if row.IsGoalAfter != nil {
		if !st.Valid {
			return Disagreement{Field: "is_goal_after", Want: strconv.FormatBool(*row.IsGoalAfter), Got: "null (invalid step)"}, false
		}
		goal, err := goalFor(e, row.ProblemID, p, goals)
		if err != nil {
			return Disagreement{Field: "is_goal_after", Want: strconv.FormatBool(*row.IsGoalAfter), Got: err.Error()}, false
		}
		if got := e.IsGoal(st.Next, goal); got != *row.IsGoalAfter {
			return Disagreement{Field: "is_goal_after", Want: strconv.FormatBool(*row.IsGoalAfter), Got: strconv.FormatBool(got)}, false
		}
	} else if st.Valid {
		return Disagreement{Field: "is_goal_after", Want: "null", Got: "a goal check (valid step)"}, false
	}
	return Disagreement{}, true
}

func goalFor(e Env, id string, p *Problem, cache map[string]State) (State, error) {
	if g, ok := cache[id]; ok {
		return g, nil
	}
	if p == nil {
		if e.Name() == RiverName {
			return nil, nil // the river goal needs no goal state
		}
		return nil, fmt.Errorf("problem %s not found (give its problems file)", id)
	}
	g, err := e.DecodeState(p.GoalState)
	if err != nil {
		return nil, err
	}
	cache[id] = g
	return g, nil
}
