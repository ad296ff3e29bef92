package envs

import (
	"fmt"
	"slices"
	"strings"
)

// blocksNode is a search node of blocksBFS: how it was reached.
type blocksNode struct {
	parent   string
	block    byte
	from, to int8
}

// blocksBFS is a bidirectional breadth-first search specialised to the
// stack-form Blocksworld: a state is a string of block codes with '|'
// between stacks, so successors and keys cost one allocation each. It
// returns a shortest plan to the exact goal state.
func blocksBFS(from, goal *BlocksState) ([]Action, error) {
	m := len(from.Stacks)
	if m != len(goal.Stacks) || m < 2 || m > 100 {
		return nil, fmt.Errorf("%w: state and goal stack counts differ", ErrNoPlan)
	}
	codes := map[string]byte{}
	var names []string
	encode := func(s *BlocksState) (string, bool) {
		var b strings.Builder
		for i, st := range s.Stacks {
			if i > 0 {
				b.WriteByte('|')
			}
			for _, blk := range st {
				c, ok := codes[blk]
				if !ok {
					if len(names) >= 90 {
						return "", false
					}
					c = byte('!' + len(names))
					if c >= '|' {
						c++
					}
					codes[blk] = c
					names = append(names, blk)
				}
				b.WriteByte(c)
			}
		}
		return b.String(), true
	}
	sk, ok1 := encode(from)
	gk, ok2 := encode(goal)
	if !ok1 || !ok2 {
		return nil, fmt.Errorf("%w: too many blocks for breadth-first search", ErrNoPlan)
	}
	if len(sk) != len(gk) {
		return nil, fmt.Errorf("%w: the goal has other blocks than the state", ErrNoPlan)
	}
	if sk == gk {
		return []Action{}, nil
	}
	nameOf := func(c byte) string {
		for n, cc := range codes {
			if cc == c {
				return n
			}
		}
		return ""
	}
	fwd := map[string]blocksNode{sk: {}}
	bwd := map[string]blocksNode{gk: {}}
	bounds := make([]int, m+1)
	buf := make([]byte, len(sk))
	expand := func(nodes map[string]blocksNode, frontier []string, other map[string]blocksNode) ([]string, string) {
		var next []string
		for _, k := range frontier {
			// bounds[i] is where stack i starts; stack i ends at bounds[i+1]-1.
			bounds[0] = 0
			j := 1
			for i := 0; i < len(k); i++ {
				if k[i] == '|' {
					bounds[j] = i + 1
					j++
				}
			}
			bounds[m] = len(k) + 1
			for f := 0; f < m; f++ {
				fs, fe := bounds[f], bounds[f+1]-1
				if fe == fs {
					continue
				}
				blk := k[fe-1]
				for t := 0; t < m; t++ {
					if t == f {
						continue
					}
					te := bounds[t+1] - 1
					// Remove k[fe-1] and insert it at te.
					buf = buf[:0]
					if t > f {
						buf = append(buf, k[:fe-1]...)
						buf = append(buf, k[fe:te]...)
						buf = append(buf, blk)
						buf = append(buf, k[te:]...)
					} else {
						buf = append(buf, k[:te]...)
						buf = append(buf, blk)
						buf = append(buf, k[te:fe-1]...)
						buf = append(buf, k[fe:]...)
					}
					if _, seen := nodes[string(buf)]; seen {
						continue
					}
					nk := string(buf)
					nodes[nk] = blocksNode{parent: k, block: blk, from: int8(f), to: int8(t)}
					if _, met := other[nk]; met {
						return nil, nk
					}
					next = append(next, nk)
				}
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
	var plan []Action
	for k := meet; k != sk; k = fwd[k].parent {
		n := fwd[k]
		plan = append(plan, &BlocksAction{Block: nameOf(n.block), From: int(n.from), To: int(n.to), Type: "move"})
	}
	slices.Reverse(plan)
	for k := meet; k != gk; k = bwd[k].parent {
		n := bwd[k]
		plan = append(plan, &BlocksAction{Block: nameOf(n.block), From: int(n.to), To: int(n.from), Type: "move"})
	}
	return plan, nil
}
