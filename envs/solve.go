package envs

import (
	"errors"
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"
)

// ErrNoPlan is returned when no plan to the goal exists within the search
// limits.
var ErrNoPlan = errors.New("no plan found")

// pddlBFSBlocks is the largest PDDL Blocksworld problem solved by
// breadth-first search; larger ones get the constructive plan.
const pddlBFSBlocks = 5

// bfsLimit bounds the states a breadth-first search may visit.
const bfsLimit = 400000

// Solve returns a valid plan from `from` to a state that satisfies goal:
// a shortest plan (breadth-first or the optimal recursion for Hanoi) where
// that is cheap, and a constructive plan for Blocksworld with more than 7
// blocks and for larger PDDL Blocksworld problems.
func Solve(e Env, from, goal State) ([]Action, error) {
	if e == nil || from == nil || goal == nil {
		return nil, errors.New("envs.Solve: nil environment or state")
	}
	if e.IsGoal(from, goal) {
		return []Action{}, nil
	}
	switch e.Name() {
	case HanoiName:
		if plan, ok := hanoiPerfectPlan(from, goal); ok {
			return plan, nil
		}
		return bidirectionalBFS(e, from, goal)
	case BlocksName:
		bs, ok1 := from.(*BlocksState)
		gs, ok2 := goal.(*BlocksState)
		if !ok1 || !ok2 {
			return nil, errors.New("envs.Solve: not blocksworld states")
		}
		if blockCount(bs) <= 7 {
			return blocksBFS(bs, gs)
		}
		return blocksConstructive(bs, gs)
	case PDDLName:
		ps, ok1 := from.(*PDDLState)
		gs, ok2 := goal.(*PDDLState)
		if !ok1 || !ok2 {
			return nil, errors.New("envs.Solve: not blocksworld_pddl states")
		}
		if len(ps.Blocks) <= pddlBFSBlocks {
			plan, searched, err := pddlBFS(ps, gs, 200000)
			if searched && err == nil {
				return plan, nil
			}
			if !searched {
				if plan, err := forwardBFS(e, from, goal, 20000); err == nil {
					return plan, nil
				}
			}
		}
		return pddlConstructive(ps, gs)
	case RiverName:
		if rs, ok := from.(*RiverState); ok {
			return riverBFS(rs)
		}
		return forwardBFS(e, from, goal, bfsLimit)
	case CheckerName:
		cs, ok1 := from.(*CheckerState)
		gs, ok2 := goal.(*CheckerState)
		if ok1 && ok2 {
			return checkerBFS(cs, gs)
		}
		return forwardBFS(e, from, goal, bfsLimit)
	default:
		return forwardBFS(e, from, goal, bfsLimit)
	}
}

// stateKey is a compact identity of a state for search.
func stateKey(s State) string {
	switch x := s.(type) {
	case *HanoiState:
		var b strings.Builder
		for _, p := range x.Pegs {
			for _, d := range p {
				b.WriteString(strconv.Itoa(d))
				b.WriteByte(',')
			}
			b.WriteByte('|')
		}
		return b.String()
	case *BlocksState:
		var b strings.Builder
		for _, st := range x.Stacks {
			for _, blk := range st {
				b.WriteString(blk)
				b.WriteByte(',')
			}
			b.WriteByte('|')
		}
		return b.String()
	case *CheckerState:
		return x.Board
	case *RiverState:
		return x.BoatSide + ":" + strings.Join(x.Left, ",")
	case *PDDLState:
		var b strings.Builder
		b.WriteString(x.Holding)
		b.WriteByte('|')
		keys := make([]string, 0, len(x.On))
		for k := range x.On {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			b.WriteString(k + ">" + x.On[k] + ",")
		}
		return b.String()
	}
	b, _ := s.MarshalJSON()
	return string(b)
}

type bfsNode struct {
	state  State
	parent string
	action Action
}

// forwardBFS finds a shortest plan by breadth-first search with IsGoal as
// the goal test (partial goals allowed).
func forwardBFS(e Env, from, goal State, limit int) ([]Action, error) {
	if e.IsGoal(from, goal) {
		return []Action{}, nil
	}
	start := stateKey(from)
	nodes := map[string]bfsNode{start: {state: from}}
	frontier := []string{start}
	for len(frontier) > 0 {
		var next []string
		for _, k := range frontier {
			n := nodes[k]
			for _, a := range e.Legal(n.state) {
				st := e.Step(n.state, a)
				if !st.Valid {
					continue
				}
				nk := stateKey(st.Next)
				if _, seen := nodes[nk]; seen {
					continue
				}
				nodes[nk] = bfsNode{state: st.Next, parent: k, action: a}
				if e.IsGoal(st.Next, goal) {
					return tracePlan(nodes, start, nk), nil
				}
				if len(nodes) > limit {
					return nil, fmt.Errorf("%w: search limit of %d states reached", ErrNoPlan, limit)
				}
				next = append(next, nk)
			}
		}
		frontier = next
	}
	return nil, ErrNoPlan
}

func tracePlan(nodes map[string]bfsNode, start, end string) []Action {
	var rev []Action
	for k := end; k != start; {
		n := nodes[k]
		rev = append(rev, n.action)
		k = n.parent
	}
	slices.Reverse(rev)
	return rev
}

// bidirectionalBFS finds a shortest plan to the exact goal state for
// environments whose moves are reversible (Hanoi, Blocksworld).
func bidirectionalBFS(e Env, from, goal State) ([]Action, error) {
	sk, gk := stateKey(from), stateKey(goal)
	if sk == gk {
		return []Action{}, nil
	}
	fwd := map[string]bfsNode{sk: {state: from}}
	bwd := map[string]bfsNode{gk: {state: goal}}
	expand := func(nodes map[string]bfsNode, frontier []string, other map[string]bfsNode) ([]string, string) {
		var next []string
		for _, k := range frontier {
			n := nodes[k]
			for _, a := range e.Legal(n.state) {
				st := e.Step(n.state, a)
				if !st.Valid {
					continue
				}
				nk := stateKey(st.Next)
				if _, seen := nodes[nk]; seen {
					continue
				}
				nodes[nk] = bfsNode{state: st.Next, parent: k, action: a}
				if _, met := other[nk]; met {
					return nil, nk
				}
				next = append(next, nk)
			}
		}
		return next, ""
	}
	meet, err := meetInMiddle(sk, gk, func() int { return len(fwd) + len(bwd) },
		func(f []string) ([]string, string) { return expand(fwd, f, bwd) },
		func(f []string) ([]string, string) { return expand(bwd, f, fwd) })
	if err != nil {
		return nil, err
	}
	plan := tracePlan(fwd, sk, meet)
	// Walk the backward tree from the meeting state to the goal; each
	// edge there was found from the goal side, so find the move that
	// undoes it from the current state.
	cur := fwd[meet].state
	for k := meet; k != gk; {
		parent := bwd[k].parent
		pk := bwd[parent]
		a, next, ok := moveTo(e, cur, stateKey(pk.state))
		if !ok {
			return nil, errors.New("envs.Solve: internal error: irreversible move in bidirectional search")
		}
		plan = append(plan, a)
		cur, k = next, parent
	}
	return plan, nil
}

// meetInMiddle drives a bidirectional breadth-first search from the keys
// start and goal: it always expands the smaller frontier (expandFwd or
// expandBwd return the next frontier, or the key of a state both searches
// reached) until they meet, a frontier empties (ErrNoPlan) or size, the
// number of states seen, passes the search limit.
func meetInMiddle(start, goal string, size func() int, expandFwd, expandBwd func([]string) ([]string, string)) (string, error) {
	ff, bf := []string{start}, []string{goal}
	for len(ff) > 0 && len(bf) > 0 {
		if size() > bfsLimit {
			return "", fmt.Errorf("%w: search limit of %d states reached", ErrNoPlan, bfsLimit)
		}
		var meet string
		if len(ff) <= len(bf) {
			ff, meet = expandFwd(ff)
		} else {
			bf, meet = expandBwd(bf)
		}
		if meet != "" {
			return meet, nil
		}
	}
	return "", ErrNoPlan
}

// moveTo finds a legal action from s leading to the state with key want.
func moveTo(e Env, s State, want string) (Action, State, bool) {
	for _, a := range e.Legal(s) {
		st := e.Step(s, a)
		if st.Valid && stateKey(st.Next) == want {
			return a, st.Next, true
		}
	}
	return nil, nil, false
}

// Replay applies a plan from a state, returning the final state or an error
// naming the first invalid action.
func Replay(e Env, s State, plan []Action) (State, error) {
	for i, a := range plan {
		st := e.Step(s, a)
		if !st.Valid {
			return nil, fmt.Errorf("step %d: %s", i, st.Message)
		}
		s = st.Next
	}
	return s, nil
}
