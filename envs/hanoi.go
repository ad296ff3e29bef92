package envs

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
)

// HanoiName is the Tower of Hanoi environment's name.
const HanoiName = "tower_of_hanoi"

// HanoiState is a Tower of Hanoi position: for each peg (in PegNames order),
// its disks from bottom to top (disk 1 is the smallest).
type HanoiState struct {
	PegNames []string
	Pegs     [][]int
}

type hanoiStateJSON struct {
	PegNames []string         `json:"peg_names"`
	Pegs     map[string][]int `json:"pegs"`
}

// MarshalJSON encodes the published shape {"peg_names":[...],"pegs":{...}}.
func (s *HanoiState) MarshalJSON() ([]byte, error) {
	j := hanoiStateJSON{PegNames: strList(s.PegNames), Pegs: make(map[string][]int, len(s.Pegs))}
	for i, name := range s.PegNames {
		p := make([]int, len(s.Pegs[i]))
		copy(p, s.Pegs[i])
		j.Pegs[name] = p
	}
	return json.Marshal(j)
}

// clone copies the state into one backing array; each peg has room for one
// more disk, so a move's append never reaches the next peg.
func (s *HanoiState) clone() *HanoiState {
	total := len(s.Pegs)
	for _, p := range s.Pegs {
		total += len(p)
	}
	buf := make([]int, total)
	c := &HanoiState{PegNames: s.PegNames, Pegs: make([][]int, len(s.Pegs))}
	off := 0
	for i, p := range s.Pegs {
		copy(buf[off:], p)
		c.Pegs[i] = buf[off : off+len(p) : off+len(p)+1]
		off += len(p) + 1
	}
	return c
}

func (s *HanoiState) pegIndex(name string) int {
	for i, n := range s.PegNames {
		if n == name {
			return i
		}
	}
	return -1
}

// HanoiAction moves one disk from one peg to another (peg names).
type HanoiAction struct {
	Disk int    `json:"disk"`
	From string `json:"from"`
	To   string `json:"to"`
	Type string `json:"type"`
}

// MarshalJSON encodes {"disk":1,"from":"A","to":"C","type":"move"}.
func (a *HanoiAction) MarshalJSON() ([]byte, error) {
	type plain HanoiAction
	return json.Marshal((*plain)(a))
}

type hanoiEnv struct{}

func init() { registerEnv(hanoiEnv{}) }

func (hanoiEnv) Name() string { return HanoiName }

func (hanoiEnv) DecodeState(data []byte) (State, error) {
	var j hanoiStateJSON
	if err := strictDecode(data, &j); err != nil {
		return nil, fmt.Errorf("tower_of_hanoi state: %v", err)
	}
	if len(j.PegNames) == 0 {
		return nil, fmt.Errorf("tower_of_hanoi state: no peg_names")
	}
	if len(j.Pegs) != len(j.PegNames) {
		return nil, fmt.Errorf("tower_of_hanoi state: %d pegs for %d peg names", len(j.Pegs), len(j.PegNames))
	}
	s := &HanoiState{PegNames: strList(j.PegNames), Pegs: make([][]int, len(j.PegNames))}
	seen := map[string]bool{}
	for i, n := range j.PegNames {
		if seen[n] {
			return nil, fmt.Errorf("tower_of_hanoi state: duplicate peg name %q", n)
		}
		seen[n] = true
		p, ok := j.Pegs[n]
		if !ok {
			return nil, fmt.Errorf("tower_of_hanoi state: peg %q missing from pegs", n)
		}
		s.Pegs[i] = append([]int{}, p...)
	}
	return s, nil
}

func (hanoiEnv) DecodeAction(data []byte) (Action, error) {
	var a HanoiAction
	if err := strictDecode(data, &a); err != nil {
		return nil, fmt.Errorf("tower_of_hanoi action: %v", err)
	}
	if a.Type != "move" {
		return nil, fmt.Errorf("tower_of_hanoi action: type %q, want \"move\"", a.Type)
	}
	return &a, nil
}

// hanoiPeg resolves a peg given as an index (0, 1, 2) or a name ("A").
func hanoiPeg(names []string, v any) (string, error) {
	switch x := v.(type) {
	case json.Number:
		i, err := pyInt(x)
		if err == nil && i >= 0 && i < len(names) && !strings.ContainsAny(x.String(), ".eE") {
			return names[i], nil
		}
	case string:
		for _, n := range names {
			if n == x {
				return n, nil
			}
		}
		t := strings.TrimSpace(x)
		for _, n := range names {
			if strings.EqualFold(n, t) {
				return n, nil
			}
		}
		if i, err := pyInt(t); err == nil && i >= 0 && i < len(names) {
			return names[i], nil
		}
	}
	return "", fmt.Errorf("Unknown peg: %s", pyRepr(v))
}

func (hanoiEnv) Normalize(_ *Problem, s State, raw json.RawMessage) (Action, error) {
	hs, ok := s.(*HanoiState)
	if !ok || hs == nil {
		return nil, fmt.Errorf("internal: not a tower_of_hanoi state")
	}
	v, err := decodeRaw(raw)
	if err != nil {
		return nil, err
	}
	l, ok := asList(v)
	if !ok || len(l) != 3 {
		return nil, fmt.Errorf("Hanoi move must be [disk, from, to].")
	}
	disk, err := pyInt(l[0])
	if err != nil {
		return nil, fmt.Errorf("Hanoi disk must be an integer: %v", err)
	}
	from, err := hanoiPeg(hs.PegNames, l[1])
	if err != nil {
		return nil, err
	}
	to, err := hanoiPeg(hs.PegNames, l[2])
	if err != nil {
		return nil, err
	}
	return &HanoiAction{Disk: disk, From: from, To: to, Type: "move"}, nil
}

func (hanoiEnv) Step(s State, a Action) Step {
	hs, ok1 := s.(*HanoiState)
	ha, ok2 := a.(*HanoiAction)
	if !ok1 || !ok2 || hs == nil || ha == nil {
		return Step{Kind: InvalidTransition, Message: "Malformed Hanoi move."}
	}
	fi, ti := hs.pegIndex(ha.From), hs.pegIndex(ha.To)
	if fi < 0 || ti < 0 || fi == ti || ha.Type != "move" {
		return Step{Kind: InvalidTransition, Message: "Malformed Hanoi move: the source and target pegs must be two different pegs."}
	}
	src := hs.Pegs[fi]
	if len(src) == 0 {
		return Step{Kind: InvalidTransition, Message: fmt.Sprintf("Source peg %s is empty.", ha.From)}
	}
	top := src[len(src)-1]
	if top != ha.Disk {
		return Step{Kind: InvalidTransition, Message: fmt.Sprintf("Disk %d is not on top of source peg %s (the top disk there is %d).", ha.Disk, ha.From, top)}
	}
	dst := hs.Pegs[ti]
	if len(dst) > 0 && dst[len(dst)-1] < top {
		return Step{Kind: ConstraintViolation, Message: fmt.Sprintf("Cannot place a larger disk on a smaller disk: disk %d onto disk %d on peg %s.", top, dst[len(dst)-1], ha.To)}
	}
	n := hs.clone()
	n.Pegs[fi] = n.Pegs[fi][:len(n.Pegs[fi])-1]
	n.Pegs[ti] = append(n.Pegs[ti], top)
	return Step{Next: n, Valid: true}
}

func (hanoiEnv) IsGoal(s, goal State) bool {
	a, ok1 := s.(*HanoiState)
	b, ok2 := goal.(*HanoiState)
	if !ok1 || !ok2 || len(a.Pegs) != len(b.Pegs) {
		return false
	}
	for i := range a.Pegs {
		if a.PegNames[i] != b.PegNames[i] || !slices.Equal(a.Pegs[i], b.Pegs[i]) {
			return false
		}
	}
	return true
}

func (hanoiEnv) Legal(s State) []Action {
	hs, ok := s.(*HanoiState)
	if !ok {
		return nil
	}
	var out []Action
	for fi, src := range hs.Pegs {
		if len(src) == 0 {
			continue
		}
		top := src[len(src)-1]
		for ti, dst := range hs.Pegs {
			if ti == fi || (len(dst) > 0 && dst[len(dst)-1] < top) {
				continue
			}
			out = append(out, &HanoiAction{Disk: top, From: hs.PegNames[fi], To: hs.PegNames[ti], Type: "move"})
		}
	}
	return out
}

// RawMove renders [disk, from_index, to_index] for the standard A/B/C pegs.
func (hanoiEnv) RawMove(a Action) json.RawMessage {
	ha, ok := a.(*HanoiAction)
	if !ok {
		return json.RawMessage("null")
	}
	idx := func(name string) any {
		if len(name) == 1 && name[0] >= 'A' && name[0] <= 'Z' {
			return int(name[0] - 'A')
		}
		return name
	}
	b, _ := json.Marshal([]any{ha.Disk, idx(ha.From), idx(ha.To)})
	return b
}
