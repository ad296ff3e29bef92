package envs

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"
)

// PDDLName is the PlanBench (predicate form) Blocksworld environment's name.
const PDDLName = "blocksworld_pddl"

// PDDLState is a PlanBench Blocksworld state as predicates. Holding is ""
// when the hand is empty. A goal state lists only the required on/ontable
// predicates (a partial goal).
type PDDLState struct {
	Blocks  []string
	Clear   []string
	Holding string
	On      map[string]string
	OnTable []string
}

type pddlStateJSON struct {
	Blocks  []string          `json:"blocks"`
	Clear   []string          `json:"clear"`
	Holding *string           `json:"holding"`
	On      map[string]string `json:"on"`
	OnTable []string          `json:"ontable"`
}

// MarshalJSON encodes {"blocks","clear","holding","on","ontable"}; lists are sorted.
func (s *PDDLState) MarshalJSON() ([]byte, error) {
	j := pddlStateJSON{Blocks: strList(s.Blocks), Clear: sortedCopy(s.Clear), OnTable: sortedCopy(s.OnTable), On: map[string]string{}}
	for k, v := range s.On {
		j.On[k] = v
	}
	if s.Holding != "" {
		h := s.Holding
		j.Holding = &h
	}
	return json.Marshal(j)
}

func sortedCopy(s []string) []string {
	c := strList(s)
	sort.Strings(c)
	return c
}

func (s *PDDLState) clone() *PDDLState {
	c := &PDDLState{Blocks: s.Blocks, Clear: strList(s.Clear), Holding: s.Holding, OnTable: strList(s.OnTable), On: make(map[string]string, len(s.On))}
	for k, v := range s.On {
		c.On[k] = v
	}
	return c
}

func contains(list []string, x string) bool {
	for _, e := range list {
		if e == x {
			return true
		}
	}
	return false
}

func without(list []string, x string) []string {
	out := make([]string, 0, len(list))
	for _, e := range list {
		if e != x {
			out = append(out, e)
		}
	}
	return out
}

func withSorted(list []string, x string) []string {
	if contains(list, x) {
		return list
	}
	out := append(strList(list), x)
	sort.Strings(out)
	return out
}

// PDDLAction is one of the four operators; Under is set for stack/unstack.
type PDDLAction struct {
	Block string `json:"block"`
	Type  string `json:"type"`
	Under string `json:"under,omitempty"`
}

// MarshalJSON encodes {"block":"a","type":"stack","under":"b"} (no "under"
// for pick-up and put-down).
func (a *PDDLAction) MarshalJSON() ([]byte, error) {
	type plain PDDLAction
	return json.Marshal((*plain)(a))
}

// The four PDDL Blocksworld operators.
const (
	PickUp  = "pick-up"
	PutDown = "put-down"
	Stack   = "stack"
	Unstack = "unstack"
)

type pddlEnv struct{}

func init() { registerEnv(pddlEnv{}) }

func (pddlEnv) Name() string { return PDDLName }

func (pddlEnv) DecodeState(data []byte) (State, error) {
	var j pddlStateJSON
	if err := strictDecode(data, &j); err != nil {
		return nil, fmt.Errorf("blocksworld_pddl state: %v", err)
	}
	s := &PDDLState{Blocks: strList(j.Blocks), Clear: sortedCopy(j.Clear), OnTable: sortedCopy(j.OnTable), On: map[string]string{}}
	for k, v := range j.On {
		s.On[k] = v
	}
	if j.Holding != nil {
		if *j.Holding == "" {
			return nil, fmt.Errorf("blocksworld_pddl state: holding must be a block name or null")
		}
		s.Holding = *j.Holding
	}
	return s, nil
}

func (pddlEnv) DecodeAction(data []byte) (Action, error) {
	var a PDDLAction
	if err := strictDecode(data, &a); err != nil {
		return nil, fmt.Errorf("blocksworld_pddl action: %v", err)
	}
	switch a.Type {
	case PickUp, PutDown:
		if a.Under != "" {
			return nil, fmt.Errorf("blocksworld_pddl action: %s takes no \"under\"", a.Type)
		}
	case Stack, Unstack:
		if a.Under == "" {
			return nil, fmt.Errorf("blocksworld_pddl action: %s needs \"under\"", a.Type)
		}
	default:
		return nil, fmt.Errorf("blocksworld_pddl action: unknown type %q", a.Type)
	}
	return &a, nil
}

// pddlOp maps the spellings models use to the operator names.
func pddlOp(name string) string {
	n := strings.ToLower(strings.TrimSpace(name))
	n = strings.NewReplacer("_", "-", " ", "-").Replace(n)
	switch n {
	case "pick-up", "pickup":
		return PickUp
	case "put-down", "putdown":
		return PutDown
	case "stack":
		return Stack
	case "unstack":
		return Unstack
	}
	return ""
}

func (pddlEnv) Normalize(_ *Problem, _ State, raw json.RawMessage) (Action, error) {
	v, err := decodeRaw(raw)
	if err != nil {
		return nil, err
	}
	l, ok := asList(v)
	if !ok {
		return nil, fmt.Errorf("Move must be a list such as [\"pick-up\", \"a\"] or [\"stack\", \"a\", \"b\"], not %s.", pyRepr(v))
	}
	if len(l) == 0 {
		return nil, fmt.Errorf("Empty move.")
	}
	name, ok := l[0].(string)
	op := ""
	if ok {
		op = pddlOp(name)
	}
	if op == "" {
		return nil, fmt.Errorf("Unknown action: %s", pyRepr(l[0]))
	}
	args := make([]string, 0, len(l)-1)
	for _, e := range l[1:] {
		s, ok := e.(string)
		if !ok {
			return nil, fmt.Errorf("%s arguments must be block names (strings), not %s.", op, pyRepr(e))
		}
		args = append(args, s)
	}
	switch op {
	case PickUp, PutDown:
		if len(args) < 1 {
			return nil, fmt.Errorf("%s requires 1 block argument.", op)
		}
		return &PDDLAction{Block: args[0], Type: op}, nil
	default:
		if len(args) < 2 {
			return nil, fmt.Errorf("%s requires 2 block arguments.", op)
		}
		return &PDDLAction{Block: args[0], Type: op, Under: args[1]}, nil
	}
}

func holdingWord(h string) string {
	if h == "" {
		return "None"
	}
	return h
}

func (pddlEnv) Step(s State, a Action) Step {
	ps, ok1 := s.(*PDDLState)
	pa, ok2 := a.(*PDDLAction)
	if !ok1 || !ok2 || ps == nil || pa == nil {
		return Step{Kind: InvalidTransition, Message: "Malformed Blocksworld action."}
	}
	bad := func(format string, args ...any) Step {
		return Step{Kind: InvalidTransition, Message: fmt.Sprintf(format, args...)}
	}
	b := pa.Block
	switch pa.Type {
	case PickUp:
		if ps.Holding != "" {
			return bad("pick-up: hand not empty (holding %s); put it down or stack it first.", ps.Holding)
		}
		if !contains(ps.Clear, b) {
			return bad("pick-up: %s is not clear (another block is on it).", b)
		}
		if !contains(ps.OnTable, b) {
			return bad("pick-up: %s is not ontable; use unstack to take it off the block it is on.", b)
		}
		n := ps.clone()
		n.OnTable, n.Clear, n.Holding = without(n.OnTable, b), without(n.Clear, b), b
		return Step{Next: n, Valid: true}
	case PutDown:
		if ps.Holding != b {
			return bad("put-down: not holding %s (holding %s).", b, holdingWord(ps.Holding))
		}
		n := ps.clone()
		n.OnTable, n.Clear, n.Holding = withSorted(n.OnTable, b), withSorted(n.Clear, b), ""
		return Step{Next: n, Valid: true}
	case Stack:
		if ps.Holding != b {
			return bad("stack: not holding %s (holding %s).", b, holdingWord(ps.Holding))
		}
		if !contains(ps.Clear, pa.Under) {
			return bad("stack: target %s is not clear.", pa.Under)
		}
		n := ps.clone()
		n.On[b] = pa.Under
		n.Clear, n.Holding = withSorted(without(n.Clear, pa.Under), b), ""
		return Step{Next: n, Valid: true}
	case Unstack:
		if ps.Holding != "" {
			return bad("unstack: hand not empty (holding %s); put it down or stack it first.", ps.Holding)
		}
		if !contains(ps.Clear, b) {
			return bad("unstack: %s is not clear (another block is on it).", b)
		}
		if under, ok := ps.On[b]; !ok || under != pa.Under {
			where := "on the table"
			if ok {
				where = "on " + under
			}
			return bad("unstack: %s is not on %s (it is %s).", b, pa.Under, where)
		}
		n := ps.clone()
		delete(n.On, b)
		n.Clear, n.Holding = withSorted(without(n.Clear, b), pa.Under), b
		return Step{Next: n, Valid: true}
	}
	return bad("Unknown action %q.", pa.Type)
}

// IsGoal reports whether every on and ontable predicate of goal holds in s.
func (pddlEnv) IsGoal(s, goal State) bool {
	ps, ok1 := s.(*PDDLState)
	g, ok2 := goal.(*PDDLState)
	if !ok1 || !ok2 {
		return false
	}
	for b, u := range g.On {
		if ps.On[b] != u {
			return false
		}
	}
	for _, b := range g.OnTable {
		if !contains(ps.OnTable, b) {
			return false
		}
	}
	return true
}

func (pddlEnv) Legal(s State) []Action {
	ps, ok := s.(*PDDLState)
	if !ok {
		return nil
	}
	var out []Action
	if ps.Holding != "" {
		out = append(out, &PDDLAction{Block: ps.Holding, Type: PutDown})
		for _, c := range ps.Clear {
			out = append(out, &PDDLAction{Block: ps.Holding, Type: Stack, Under: c})
		}
		return out
	}
	for _, c := range ps.Clear {
		if contains(ps.OnTable, c) {
			out = append(out, &PDDLAction{Block: c, Type: PickUp})
		}
		if u, ok := ps.On[c]; ok {
			out = append(out, &PDDLAction{Block: c, Type: Unstack, Under: u})
		}
	}
	return out
}

// RawMove renders ["pick-up","a"] or ["stack","a","b"].
func (pddlEnv) RawMove(a Action) json.RawMessage {
	pa, ok := a.(*PDDLAction)
	if !ok {
		return json.RawMessage("null")
	}
	l := []string{pa.Type, pa.Block}
	if pa.Type == Stack || pa.Type == Unstack {
		l = append(l, pa.Under)
	}
	b, _ := json.Marshal(l)
	return b
}
