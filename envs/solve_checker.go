package envs

import "slices"

// checkerBFS is breadth-first search specialised to Checker Jumping: the
// board string is the state, and successors are tried in the order of
// checkerEnv.Legal (from the empty cell: -2, -1, +1, +2), so it finds the
// same shortest plan as the generic search with a fraction of the work.
func checkerBFS(from, goal *CheckerState) ([]Action, error) {
	type node struct {
		parent   string
		from, to int
	}
	left, right := byte(0), byte(0)
	if len(from.LeftPiece) == 1 && len(from.RightPiece) == 1 {
		left, right = from.LeftPiece[0], from.RightPiece[0]
	}
	start := from.Board
	nodes := map[string]node{start: {}}
	frontier := []string{start}
	buf := make([]byte, len(start))
	for len(frontier) > 0 {
		var next []string
		for _, k := range frontier {
			e := -1
			for i := 0; i < len(k); i++ {
				if k[i] == checkerEmpty {
					e = i
					break
				}
			}
			if e < 0 {
				continue
			}
			for _, f := range [4]int{e - 2, e - 1, e + 1, e + 2} {
				if f < 0 || f >= len(k) {
					continue
				}
				p := k[f]
				var dir int
				switch p {
				case left:
					dir = 1
				case right:
					dir = -1
				default:
					continue
				}
				switch e - f {
				case dir:
				case 2 * dir:
					if mid := k[f+dir]; mid == checkerEmpty || mid == p {
						continue
					}
				default:
					continue
				}
				copy(buf, k)
				buf[e], buf[f] = p, checkerEmpty
				if _, seen := nodes[string(buf)]; seen {
					continue
				}
				nk := string(buf)
				nodes[nk] = node{parent: k, from: f, to: e}
				if nk == goal.Board {
					var rev []Action
					for x := nk; x != start; x = nodes[x].parent {
						n := nodes[x]
						rev = append(rev, &CheckerAction{From: n.from, Piece: string(x[n.to]), To: n.to, Type: checkerKind(n.from, n.to)})
					}
					slices.Reverse(rev)
					return rev, nil
				}
				if len(nodes) > bfsLimit {
					return nil, ErrNoPlan
				}
				next = append(next, nk)
			}
		}
		frontier = next
	}
	return nil, ErrNoPlan
}
