package envs

import (
	"encoding/json"
	"fmt"
	"strings"
)

// CheckerName is the Checker Jumping environment's name.
const CheckerName = "checker_jumping"

// CheckerState is a Checker Jumping board such as "RR_BB": LeftPiece pieces
// move right, RightPiece pieces move left, "_" is the empty cell.
type CheckerState struct {
	Board      string `json:"board"`
	LeftPiece  string `json:"left_piece"`
	RightPiece string `json:"right_piece"`
}

// MarshalJSON encodes {"board":...,"left_piece":...,"right_piece":...}.
func (s *CheckerState) MarshalJSON() ([]byte, error) {
	type plain CheckerState
	return json.Marshal((*plain)(s))
}

// CheckerAction moves the piece at From to To ("slide" one cell or "jump" two).
type CheckerAction struct {
	From  int    `json:"from"`
	Piece string `json:"piece"`
	To    int    `json:"to"`
	Type  string `json:"type"`
}

// MarshalJSON encodes {"from":0,"piece":"R","to":1,"type":"slide"}.
func (a *CheckerAction) MarshalJSON() ([]byte, error) {
	type plain CheckerAction
	return json.Marshal((*plain)(a))
}

const checkerEmpty = '_'

type checkerEnv struct{}

func init() { registerEnv(checkerEnv{}) }

func (checkerEnv) Name() string { return CheckerName }

func (checkerEnv) DecodeState(data []byte) (State, error) {
	var s CheckerState
	if err := strictDecode(data, &s); err != nil {
		return nil, fmt.Errorf("checker_jumping state: %v", err)
	}
	if len(s.LeftPiece) != 1 || len(s.RightPiece) != 1 || s.LeftPiece == s.RightPiece {
		return nil, fmt.Errorf("checker_jumping state: left_piece and right_piece must be two different single letters")
	}
	if strings.Count(s.Board, "_") != 1 {
		return nil, fmt.Errorf("checker_jumping state: board %q must have exactly one empty cell", s.Board)
	}
	for _, c := range s.Board {
		if string(c) != s.LeftPiece && string(c) != s.RightPiece && c != checkerEmpty {
			return nil, fmt.Errorf("checker_jumping state: board %q has unknown cell %q", s.Board, c)
		}
	}
	return &s, nil
}

func (checkerEnv) DecodeAction(data []byte) (Action, error) {
	var a CheckerAction
	if err := strictDecode(data, &a); err != nil {
		return nil, fmt.Errorf("checker_jumping action: %v", err)
	}
	if a.Type != "slide" && a.Type != "jump" {
		return nil, fmt.Errorf("checker_jumping action: type %q, want \"slide\" or \"jump\"", a.Type)
	}
	return &a, nil
}

func checkerKind(from, to int) string {
	if d := to - from; d == 2 || d == -2 {
		return "jump"
	}
	return "slide"
}

func (checkerEnv) Normalize(_ *Problem, _ State, raw json.RawMessage) (Action, error) {
	v, err := decodeRaw(raw)
	if err != nil {
		return nil, err
	}
	l, ok := asList(v)
	if !ok || len(l) != 3 {
		return nil, fmt.Errorf("Checker move must be [color, from, to].")
	}
	piece, ok := l[0].(string)
	if !ok {
		return nil, fmt.Errorf("Checker move must be [color, from, to]: the color must be a string such as \"R\", not %s.", pyRepr(l[0]))
	}
	from, err := pyInt(l[1])
	if err != nil {
		return nil, fmt.Errorf("Checker move must be [color, from, to] with integer positions: %v", err)
	}
	to, err := pyInt(l[2])
	if err != nil {
		return nil, fmt.Errorf("Checker move must be [color, from, to] with integer positions: %v", err)
	}
	return &CheckerAction{From: from, Piece: piece, To: to, Type: checkerKind(from, to)}, nil
}

func (checkerEnv) Step(s State, a Action) Step {
	cs, ok1 := s.(*CheckerState)
	ca, ok2 := a.(*CheckerAction)
	if !ok1 || !ok2 || cs == nil || ca == nil {
		return Step{Kind: InvalidTransition, Message: "Malformed checker move."}
	}
	b := cs.Board
	n := len(b)
	if ca.From < 0 || ca.From >= n || ca.To < 0 || ca.To >= n {
		return Step{Kind: InvalidTransition, Message: fmt.Sprintf("Malformed checker move: positions must be between 0 and %d.", n-1)}
	}
	if b[ca.To] != checkerEmpty || b[ca.From] == checkerEmpty {
		return Step{Kind: InvalidTransition, Message: fmt.Sprintf("Move must move a checker into the empty cell (the empty cell is position %d).", strings.IndexByte(b, checkerEmpty))}
	}
	if !checkerLegal(cs, ca) {
		return Step{Kind: InvalidTransition, Message: fmt.Sprintf("Illegal slide or jump: %s pieces move only %s, one cell into the empty cell or over exactly one opposite-coloured piece.", string(b[ca.From]), checkerDirWord(cs, b[ca.From]))}
	}
	nb := []byte(b)
	nb[ca.To], nb[ca.From] = nb[ca.From], checkerEmpty
	return Step{Next: &CheckerState{Board: string(nb), LeftPiece: cs.LeftPiece, RightPiece: cs.RightPiece}, Valid: true}
}

func checkerDirWord(cs *CheckerState, p byte) string {
	if string(p) == cs.LeftPiece {
		return "right"
	}
	return "left"
}

// checkerLegal checks piece, direction and distance; the caller has checked
// bounds and that To is the empty cell and From holds a piece.
func checkerLegal(cs *CheckerState, ca *CheckerAction) bool {
	b := cs.Board
	// The reference verifier moves the piece that is on From whatever
	// colour the move names; only the board decides direction.
	p := b[ca.From]
	dir := -1
	if string(p) == cs.LeftPiece {
		dir = 1
	}
	d := ca.To - ca.From
	switch d {
	case dir:
		return true
	case 2 * dir:
		mid := b[ca.From+dir]
		return mid != checkerEmpty && mid != p
	}
	return false
}

func (checkerEnv) IsGoal(s, goal State) bool {
	a, ok1 := s.(*CheckerState)
	b, ok2 := goal.(*CheckerState)
	return ok1 && ok2 && a.Board == b.Board
}

func (checkerEnv) Legal(s State) []Action {
	cs, ok := s.(*CheckerState)
	if !ok {
		return nil
	}
	e := strings.IndexByte(cs.Board, checkerEmpty)
	var out []Action
	for _, from := range []int{e - 2, e - 1, e + 1, e + 2} {
		if from < 0 || from >= len(cs.Board) {
			continue
		}
		a := &CheckerAction{From: from, Piece: string(cs.Board[from]), To: e, Type: checkerKind(from, e)}
		if checkerLegal(cs, a) {
			out = append(out, a)
		}
	}
	return out
}

// RawMove renders [color, from, to].
func (checkerEnv) RawMove(a Action) json.RawMessage {
	ca, ok := a.(*CheckerAction)
	if !ok {
		return json.RawMessage("null")
	}
	b, _ := json.Marshal([]any{ca.Piece, ca.From, ca.To})
	return b
}
