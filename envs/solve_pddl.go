package envs

import (
	"fmt"
	"sort"
)

// pddlConstructive returns a valid (not shortest) plan for a partial goal:
// put down what is held, take apart every tower part that is not already in
// its goal position, then build the goal on-relations bottom up.
func pddlConstructive(from, goal *PDDLState) ([]Action, error) {
	e := pddlEnv{}
	var s State = from.clone()
	var plan []Action
	do := func(a *PDDLAction) error {
		st := e.Step(s, a)
		if !st.Valid {
			return fmt.Errorf("%w: constructive plan: %s", ErrNoPlan, st.Message)
		}
		s = st.Next
		plan = append(plan, a)
		return nil
	}
	cur := func() *PDDLState { return s.(*PDDLState) }
	if h := cur().Holding; h != "" {
		if err := do(&PDDLAction{Block: h, Type: PutDown}); err != nil {
			return nil, err
		}
	}
	under := map[string]bool{}
	for _, u := range goal.On {
		if under[u] {
			return nil, fmt.Errorf("%w: the goal puts two blocks on %s", ErrNoPlan, u)
		}
		under[u] = true
	}
	// good reports whether b and everything below it are where the goal
	// wants them (a block the goal does not place may stay on the table).
	var good func(ps *PDDLState, b string, depth int) bool
	good = func(ps *PDDLState, b string, depth int) bool {
		if depth > len(ps.Blocks)+1 {
			return false
		}
		u, on := ps.On[b]
		gu, gon := goal.On[b]
		if !on {
			return !gon
		}
		return gon && gu == u && good(ps, u, depth+1)
	}
	for {
		ps := cur()
		var pick string
		for _, c := range ps.Clear {
			if _, on := ps.On[c]; on && !good(ps, c, 0) {
				pick = c
				break
			}
		}
		if pick == "" {
			break
		}
		if err := do(&PDDLAction{Block: pick, Type: Unstack, Under: ps.On[pick]}); err != nil {
			return nil, err
		}
		if err := do(&PDDLAction{Block: pick, Type: PutDown}); err != nil {
			return nil, err
		}
	}
	keys := make([]string, 0, len(goal.On))
	for b := range goal.On {
		keys = append(keys, b)
	}
	sort.Strings(keys)
	for progress := true; progress; {
		progress = false
		for _, b := range keys {
			ps := cur()
			u := goal.On[b]
			if ps.On[b] == u {
				continue
			}
			if !good(ps, u, 0) || !contains(ps.Clear, u) {
				continue
			}
			if err := do(&PDDLAction{Block: b, Type: PickUp}); err != nil {
				return nil, err
			}
			if err := do(&PDDLAction{Block: b, Type: Stack, Under: u}); err != nil {
				return nil, err
			}
			progress = true
		}
	}
	if !e.IsGoal(s, goal) {
		return nil, fmt.Errorf("%w: the goal cannot be built (cyclic or unknown blocks)", ErrNoPlan)
	}
	return plan, nil
}
