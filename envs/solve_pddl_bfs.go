package envs

import (
	"fmt"
	"slices"
	"sort"
)

// pddlCompact is a PDDL Blocksworld state as one byte per block (blocks in
// sorted name order): 0 on the table, 255 in the hand, i+1 on block i.
// clear and ontable follow from it.
type pddlCompact struct {
	names []string
	index map[string]int
}

const pddlHeld = 255

func newPDDLCompact(s *PDDLState) (*pddlCompact, string, bool) {
	names := sortedCopy(s.Blocks)
	if len(names) == 0 || len(names) > 200 {
		return nil, "", false
	}
	c := &pddlCompact{names: names, index: make(map[string]int, len(names))}
	for i, n := range names {
		if _, dup := c.index[n]; dup {
			return nil, "", false
		}
		c.index[n] = i
	}
	key := make([]byte, len(names))
	for b, u := range s.On {
		bi, ok1 := c.index[b]
		ui, ok2 := c.index[u]
		if !ok1 || !ok2 {
			return nil, "", false
		}
		key[bi] = byte(ui + 1)
	}
	if s.Holding != "" {
		hi, ok := c.index[s.Holding]
		if !ok || key[hi] != 0 {
			return nil, "", false
		}
		key[hi] = pddlHeld
	}
	// Only states whose clear and ontable lists agree with on/holding are
	// searched this way.
	back := c.state(string(key))
	if !slices.Equal(back.Clear, sortedCopy(s.Clear)) || !slices.Equal(back.OnTable, sortedCopy(s.OnTable)) {
		return nil, "", false
	}
	return c, string(key), true
}

func (c *pddlCompact) clear(key string) []bool {
	cl := make([]bool, len(key))
	for i := range cl {
		cl[i] = key[i] != pddlHeld
	}
	for _, u := range []byte(key) {
		if u != 0 && u != pddlHeld {
			cl[u-1] = false
		}
	}
	return cl
}

func (c *pddlCompact) state(key string) *PDDLState {
	s := &PDDLState{Blocks: c.names, On: map[string]string{}, Clear: []string{}, OnTable: []string{}}
	cl := c.clear(key)
	for i, u := range []byte(key) {
		switch u {
		case pddlHeld:
			s.Holding = c.names[i]
		case 0:
			s.OnTable = append(s.OnTable, c.names[i])
		default:
			s.On[c.names[i]] = c.names[u-1]
		}
		if cl[i] {
			s.Clear = append(s.Clear, c.names[i])
		}
	}
	return s
}

type pddlNode struct {
	parent string
	action *PDDLAction
}

// pddlBFS is breadth-first search over compact PDDL states, with the
// successors in the order of pddlEnv.Legal, so it finds the same shortest
// plan as the generic search, much faster.
func pddlBFS(from, goal *PDDLState, limit int) ([]Action, bool, error) {
	c, start, ok := newPDDLCompact(from)
	if !ok {
		return nil, false, nil
	}
	type want struct{ b, u byte }
	var wants []want
	keys := make([]string, 0, len(goal.On))
	for b := range goal.On {
		keys = append(keys, b)
	}
	sort.Strings(keys)
	for _, b := range keys {
		bi, ok1 := c.index[b]
		ui, ok2 := c.index[goal.On[b]]
		if !ok1 || !ok2 {
			return nil, true, fmt.Errorf("%w: the goal names blocks the state lacks", ErrNoPlan)
		}
		wants = append(wants, want{byte(bi), byte(ui + 1)})
	}
	for _, b := range goal.OnTable {
		bi, ok := c.index[b]
		if !ok {
			return nil, true, fmt.Errorf("%w: the goal names blocks the state lacks", ErrNoPlan)
		}
		wants = append(wants, want{byte(bi), 0})
	}
	isGoal := func(k string) bool {
		for _, w := range wants {
			if k[w.b] != w.u {
				return false
			}
		}
		return true
	}
	if isGoal(start) {
		return []Action{}, true, nil
	}
	nodes := map[string]pddlNode{start: {}}
	frontier := []string{start}
	buf := make([]byte, len(start))
	for len(frontier) > 0 {
		var next []string
		for _, k := range frontier {
			cl := c.clear(k)
			held := -1
			for i := range k {
				if k[i] == pddlHeld {
					held = i
				}
			}
			try := func(a *PDDLAction, mutate func([]byte)) ([]Action, bool) {
				copy(buf, k)
				mutate(buf)
				if _, seen := nodes[string(buf)]; seen {
					return nil, false
				}
				nk := string(buf)
				nodes[nk] = pddlNode{parent: k, action: a}
				if isGoal(nk) {
					var rev []Action
					for x := nk; x != start; x = nodes[x].parent {
						rev = append(rev, nodes[x].action)
					}
					slices.Reverse(rev)
					return rev, true
				}
				next = append(next, nk)
				return nil, false
			}
			if held >= 0 {
				h := held
				if plan, done := try(&PDDLAction{Block: c.names[h], Type: PutDown}, func(b []byte) { b[h] = 0 }); done {
					return plan, true, nil
				}
				for u := range cl {
					if !cl[u] {
						continue
					}
					uu := u
					if plan, done := try(&PDDLAction{Block: c.names[h], Type: Stack, Under: c.names[u]}, func(b []byte) { b[h] = byte(uu + 1) }); done {
						return plan, true, nil
					}
				}
			} else {
				for i := range cl {
					if !cl[i] {
						continue
					}
					ii := i
					var a *PDDLAction
					if k[i] == 0 {
						a = &PDDLAction{Block: c.names[i], Type: PickUp}
					} else {
						a = &PDDLAction{Block: c.names[i], Type: Unstack, Under: c.names[k[i]-1]}
					}
					if plan, done := try(a, func(b []byte) { b[ii] = pddlHeld }); done {
						return plan, true, nil
					}
				}
			}
			if len(nodes) > limit {
				return nil, true, fmt.Errorf("%w: search limit of %d states reached", ErrNoPlan, limit)
			}
		}
		frontier = next
	}
	return nil, true, ErrNoPlan
}
