package envs

import "fmt"

func blockCount(s *BlocksState) int {
	n := 0
	for _, st := range s.Stacks {
		n += len(st)
	}
	return n
}

// blocksConstructive builds the goal stacks one at a time (highest index
// first), each from the bottom up: the blocks above the next goal block are
// moved to another stack, then the block is placed. A finished stack is
// only used above its finished part. For PuzzleZoo (all goal blocks on
// stack 2, which starts empty) this is the published constructive plan.
func blocksConstructive(from, goal *BlocksState) ([]Action, error) {
	m := len(from.Stacks)
	if m < 3 || len(goal.Stacks) != m {
		return nil, fmt.Errorf("%w: the constructive plan needs three or more stacks and a goal with as many", ErrNoPlan)
	}
	where := map[string]bool{}
	for _, st := range from.Stacks {
		for _, b := range st {
			where[b] = true
		}
	}
	n := 0
	for _, st := range goal.Stacks {
		for _, b := range st {
			if !where[b] {
				return nil, fmt.Errorf("%w: goal block %q is not in the state", ErrNoPlan, b)
			}
			n++
		}
	}
	if n != len(where) {
		return nil, fmt.Errorf("%w: the goal has %d blocks, the state %d", ErrNoPlan, n, len(where))
	}
	s := from.clone()
	var plan []Action
	move := func(f, t int) {
		st := s.Stacks[f]
		b := st[len(st)-1]
		s.Stacks[f] = st[:len(st)-1]
		s.Stacks[t] = append(s.Stacks[t], b)
		plan = append(plan, &BlocksAction{Block: b, From: f, To: t, Type: "move"})
	}
	firstOther := func(not ...int) int {
	next:
		for i := 0; i < m; i++ {
			for _, x := range not {
				if i == x {
					continue next
				}
			}
			return i
		}
		return -1
	}
	for t := m - 1; t >= 0; t-- {
		g := goal.Stacks[t]
		if len(g) == 0 {
			continue
		}
		k := 0
		for k < len(s.Stacks[t]) && k < len(g) && s.Stacks[t][k] == g[k] {
			k++
		}
		for len(s.Stacks[t]) > k {
			move(t, firstOther(t))
		}
		for j := k; j < len(g); j++ {
			x := g[j]
			src, depth := -1, 0
			for i, st := range s.Stacks {
				if i == t {
					continue
				}
				for d, b := range st {
					if b == x {
						src, depth = i, d
					}
				}
			}
			if src < 0 {
				return nil, fmt.Errorf("%w: block %q not found", ErrNoPlan, x)
			}
			buf := firstOther(t, src)
			for len(s.Stacks[src]) > depth+1 {
				move(src, buf)
			}
			move(src, t)
		}
	}
	return plan, nil
}
