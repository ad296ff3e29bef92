package envs

// maxPerfectPlanDisks bounds the disks hanoiPerfectPlan accepts: its plan
// has up to 2^n-1 moves, so a state with, say, 40 disks (which a problems
// file or a prompt may carry) would exhaust memory.
const maxPerfectPlanDisks = 20

// hanoiPerfectPlan returns the optimal plan when the goal has every disk on
// one peg (the standard recursion, optimal from any legal position) and has
// at most maxPerfectPlanDisks disks.
func hanoiPerfectPlan(from, goal State) ([]Action, bool) {
	s, ok1 := from.(*HanoiState)
	g, ok2 := goal.(*HanoiState)
	if !ok1 || !ok2 || len(s.Pegs) != 3 || len(g.Pegs) != 3 {
		return nil, false
	}
	target, n := -1, 0
	for i, p := range g.Pegs {
		if len(p) > 0 {
			if target >= 0 {
				return nil, false
			}
			target, n = i, len(p)
			for j, d := range p {
				if d != n-j {
					return nil, false
				}
			}
		}
	}
	if target < 0 || n > maxPerfectPlanDisks {
		return nil, false
	}
	pos := make([]int, n+1)
	seen := 0
	for i, p := range s.Pegs {
		for j, d := range p {
			if d < 1 || d > n || pos[d] != 0 || (j > 0 && p[j-1] < d) {
				return nil, false
			}
			pos[d] = i + 1
			seen++
		}
	}
	if seen != n {
		return nil, false
	}
	for d := 1; d <= n; d++ {
		pos[d]--
	}
	plan := make([]Action, 0, 1<<min(n, 12))
	var move func(k, to int)
	move = func(k, to int) {
		if k == 0 {
			return
		}
		if pos[k] == to {
			move(k-1, to)
			return
		}
		other := 3 - pos[k] - to
		move(k-1, other)
		plan = append(plan, &HanoiAction{Disk: k, From: s.PegNames[pos[k]], To: s.PegNames[to], Type: "move"})
		pos[k] = to
		move(k-1, to)
	}
	move(n, target)
	return plan, true
}
