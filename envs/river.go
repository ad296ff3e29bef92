package envs

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"
)

// RiverName is the River Crossing (actor/agent) environment's name.
const RiverName = "river_crossing"

// RiverState is a River Crossing position. Actors lists everyone (actorK and
// agentK); UnsafePairs lists the (actor, other agent) pairs that may not be
// together on a bank without the actor's own agent.
type RiverState struct {
	Actors       []string    `json:"actors"`
	BoatCapacity int         `json:"boat_capacity"`
	BoatSide     string      `json:"boat_side"`
	Left         []string    `json:"left"`
	Right        []string    `json:"right"`
	UnsafePairs  [][2]string `json:"unsafe_pairs"`
	Variant      string      `json:"variant"`
}

// MarshalJSON encodes the published shape with sorted keys.
func (s *RiverState) MarshalJSON() ([]byte, error) {
	type plain RiverState
	c := plain(*s)
	c.Actors, c.Left, c.Right = strList(s.Actors), strList(s.Left), strList(s.Right)
	if c.UnsafePairs == nil {
		c.UnsafePairs = [][2]string{}
	}
	return json.Marshal(&c)
}

// RiverAction is one crossing of the boat with its passengers.
type RiverAction struct {
	From       string   `json:"from"`
	Passengers []string `json:"passengers"`
	To         string   `json:"to"`
	Type       string   `json:"type"`
}

// MarshalJSON encodes {"from":"left","passengers":[...],"to":"right","type":"cross"}.
func (a *RiverAction) MarshalJSON() ([]byte, error) {
	type plain RiverAction
	c := plain(*a)
	c.Passengers = strList(a.Passengers)
	return json.Marshal(&c)
}

type riverEnv struct{}

// riverMaxPeople bounds the people of a state (PuzzleZoo has at most 8; the
// generator goes to 18). Legal enumerates every group up to the boat's
// capacity, about 2.6*10^5 groups for 20 people and a boat of 8, and grows
// combinatorially beyond.
const riverMaxPeople = 20

func init() { registerEnv(riverEnv{}) }

func (riverEnv) Name() string { return RiverName }

func (riverEnv) DecodeState(data []byte) (State, error) {
	var s RiverState
	if err := strictDecode(data, &s); err != nil {
		return nil, fmt.Errorf("river_crossing state: %v", err)
	}
	if s.BoatSide != "left" && s.BoatSide != "right" {
		return nil, fmt.Errorf("river_crossing state: boat_side %q, want \"left\" or \"right\"", s.BoatSide)
	}
	s.Actors, s.Left, s.Right = strList(s.Actors), strList(s.Left), strList(s.Right)
	if s.BoatCapacity < 1 || s.BoatCapacity > 8 {
		return nil, fmt.Errorf("river_crossing state: boat_capacity %d out of range 1-8", s.BoatCapacity)
	}
	if len(s.Actors) > riverMaxPeople {
		return nil, fmt.Errorf("river_crossing state: %d people, at most %d", len(s.Actors), riverMaxPeople)
	}
	everyone := map[string]int{}
	for _, p := range s.Actors {
		everyone[p]++
	}
	for _, p := range append(append([]string{}, s.Left...), s.Right...) {
		if everyone[p] != 1 {
			return nil, fmt.Errorf("river_crossing state: %q must be listed once in actors and on exactly one bank", p)
		}
		everyone[p]++
	}
	for p, n := range everyone {
		if n != 2 {
			return nil, fmt.Errorf("river_crossing state: %q must be on exactly one bank", p)
		}
	}
	return &s, nil
}

func (riverEnv) DecodeAction(data []byte) (Action, error) {
	var a RiverAction
	if err := strictDecode(data, &a); err != nil {
		return nil, fmt.Errorf("river_crossing action: %v", err)
	}
	if a.Type != "cross" {
		return nil, fmt.Errorf("river_crossing action: type %q, want \"cross\"", a.Type)
	}
	a.Passengers = strList(a.Passengers)
	return &a, nil
}

func otherSide(side string) string {
	if side == "left" {
		return "right"
	}
	return "left"
}

func (riverEnv) Normalize(_ *Problem, s State, raw json.RawMessage) (Action, error) {
	rs, ok := s.(*RiverState)
	if !ok || rs == nil {
		return nil, fmt.Errorf("internal: not a river_crossing state")
	}
	v, err := decodeRaw(raw)
	if err != nil {
		return nil, err
	}
	l, ok := asList(v)
	if !ok {
		return nil, fmt.Errorf("River move must be a list of the people crossing, such as [\"actor1\", \"agent1\"], not %s.", pyRepr(v))
	}
	ps := make([]string, len(l))
	for i, e := range l {
		p, ok := e.(string)
		if !ok {
			return nil, fmt.Errorf("River move must list people by name (strings such as \"actor1\"), not %s.", pyRepr(e))
		}
		ps[i] = p
	}
	return &RiverAction{From: rs.BoatSide, Passengers: ps, To: otherSide(rs.BoatSide), Type: "cross"}, nil
}

func (s *RiverState) bank(side string) []string {
	if side == "left" {
		return s.Left
	}
	return s.Right
}

func (riverEnv) Step(s State, a Action) Step {
	rs, ok1 := s.(*RiverState)
	ra, ok2 := a.(*RiverAction)
	if !ok1 || !ok2 || rs == nil || ra == nil {
		return Step{Kind: InvalidTransition, Message: "Malformed river crossing move."}
	}
	if ra.From != rs.BoatSide || ra.To != otherSide(rs.BoatSide) {
		return Step{Kind: InvalidTransition, Message: fmt.Sprintf("The boat is on the %s bank, so it must cross from %s to %s.", rs.BoatSide, rs.BoatSide, otherSide(rs.BoatSide))}
	}
	if len(ra.Passengers) == 0 || len(ra.Passengers) > rs.BoatCapacity {
		return Step{Kind: InvalidTransition, Message: fmt.Sprintf("Passenger count violates boat capacity: the boat carries 1 to %d people and cannot cross empty (got %d).", rs.BoatCapacity, len(ra.Passengers))}
	}
	src := map[string]bool{}
	for _, p := range rs.bank(rs.BoatSide) {
		src[p] = true
	}
	moving := map[string]bool{}
	for _, p := range ra.Passengers {
		if !src[p] || moving[p] {
			return Step{Kind: InvalidTransition, Message: fmt.Sprintf("Passenger is not on source bank: %q is not on the %s bank where the boat is.", p, rs.BoatSide)}
		}
		moving[p] = true
	}
	var stay []string
	for _, p := range rs.bank(rs.BoatSide) {
		if !moving[p] {
			stay = append(stay, p)
		}
	}
	arrive := append(append([]string{}, rs.bank(ra.To)...), ra.Passengers...)
	sort.Strings(arrive)
	n := *rs
	n.BoatSide = ra.To
	if ra.To == "right" {
		n.Left, n.Right = strList(stay), arrive
	} else {
		n.Left, n.Right = arrive, strList(stay)
	}
	for _, bank := range [][]string{n.Left, n.Right} {
		if who, ok := riverUnsafe(rs.UnsafePairs, bank); !ok {
			return Step{Kind: ConstraintViolation, Message: fmt.Sprintf("Unsafe actor/agent bank state: %s would be with %s without their own agent.", who[0], who[1])}
		}
	}
	return Step{Next: &n, Valid: true}
}

// ownAgent returns the agent that protects an actor ("actor2" -> "agent2").
func ownAgent(actor string) string {
	if strings.HasPrefix(actor, "actor") {
		return "agent" + strings.TrimPrefix(actor, "actor")
	}
	return ""
}

// riverUnsafe reports the first unsafe (actor, agent) pair on a bank.
func riverUnsafe(pairs [][2]string, bank []string) ([2]string, bool) {
	if len(pairs) == 0 {
		return [2]string{}, true
	}
	on := make(map[string]bool, len(bank))
	for _, p := range bank {
		on[p] = true
	}
	for _, pr := range pairs {
		if on[pr[0]] && on[pr[1]] && !on[ownAgent(pr[0])] {
			return pr, false
		}
	}
	return [2]string{}, true
}

// IsGoal reports whether everyone is on the right bank.
func (riverEnv) IsGoal(s, _ State) bool {
	rs, ok := s.(*RiverState)
	return ok && len(rs.Left) == 0 && len(rs.Right) == len(rs.Actors)
}

// Legal lists the valid crossings: groups of 1 up to the boat's capacity
// from the boat's bank, smaller groups first, each size in lexicographic
// order of the bank (the reference enumeration, which fixes the oracle).
func (e riverEnv) Legal(s State) []Action {
	rs, ok := s.(*RiverState)
	if !ok {
		return nil
	}
	src := rs.bank(rs.BoatSide)
	var out []Action
	for r := 1; r <= rs.BoatCapacity && r <= len(src); r++ {
		combinations(len(src), r, func(idx []int) {
			ps := make([]string, r)
			for i, j := range idx {
				ps[i] = src[j]
			}
			a := &RiverAction{From: rs.BoatSide, Passengers: ps, To: otherSide(rs.BoatSide), Type: "cross"}
			if e.Step(rs, a).Valid {
				out = append(out, a)
			}
		})
	}
	return out
}

// combinations calls f with each r-subset of 0..n-1 in lexicographic order
// (like Python's itertools.combinations); f must not keep idx.
func combinations(n, r int, f func(idx []int)) {
	if r > n || r <= 0 {
		return
	}
	idx := make([]int, r)
	for i := range idx {
		idx[i] = i
	}
	for {
		f(idx)
		i := r - 1
		for i >= 0 && idx[i] == i+n-r {
			i--
		}
		if i < 0 {
			return
		}
		idx[i]++
		for j := i + 1; j < r; j++ {
			idx[j] = idx[j-1] + 1
		}
	}
}

// RawMove renders the list of passengers.
func (riverEnv) RawMove(a Action) json.RawMessage {
	ra, ok := a.(*RiverAction)
	if !ok {
		return json.RawMessage("null")
	}
	b, _ := json.Marshal(strList(ra.Passengers))
	return b
}
