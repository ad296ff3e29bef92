package envs

import (
	"fmt"
	"slices"
	"sort"
)

// riverWorkLimit bounds the crossings riverBFS examines, so that a state
// with many people and a large boat fails fast with ErrNoPlan instead of
// running for minutes (PuzzleZoo's largest level examines about 10^4,
// a solvable five-pair problem about 4*10^5).
const riverWorkLimit = 2_000_000

// riverBFS is a breadth-first search specialised to River Crossing: a
// position is the set of people on the left bank (a bit mask) and the boat
// side, so the whole space (at most 2^(2n+1) positions) is searched with
// integer operations. It returns a shortest plan to "everyone on the right".
func riverBFS(from *RiverState) ([]Action, error) {
	people := from.Actors
	if len(people) > 62 {
		return nil, fmt.Errorf("%w: too many people for the search", ErrNoPlan)
	}
	index := make(map[string]int, len(people))
	for i, p := range people {
		index[p] = i
	}
	maskOf := func(list []string) (uint64, bool) {
		var m uint64
		for _, p := range list {
			i, ok := index[p]
			if !ok {
				return 0, false
			}
			m |= 1 << i
		}
		return m, true
	}
	type rule struct{ both, own uint64 }
	var rules []rule
	for _, pr := range from.UnsafePairs {
		a, ok1 := index[pr[0]]
		g, ok2 := index[pr[1]]
		if !ok1 || !ok2 {
			continue
		}
		r := rule{both: 1<<a | 1<<g}
		if o, ok := index[ownAgent(pr[0])]; ok {
			r.own = 1 << o
		}
		rules = append(rules, r)
	}
	safe := func(bank uint64) bool {
		for _, r := range rules {
			if bank&r.both == r.both && bank&r.own == 0 {
				return false
			}
		}
		return true
	}
	all := uint64(1)<<len(people) - 1
	left, ok := maskOf(from.Left)
	if !ok {
		return nil, fmt.Errorf("%w: unknown person on the left bank", ErrNoPlan)
	}
	// A position is left<<1 | side (side 1: boat on the right).
	side := uint64(0)
	if from.BoatSide == "right" {
		side = 1
	}
	type node struct {
		parent uint64
		moved  uint64
	}
	start := left<<1 | side
	seen := map[uint64]node{start: {}}
	frontier := []uint64{start}
	capacity := from.BoatCapacity
	// order lists person indices by name, the order of the sorted banks.
	order := make([]int, len(people))
	for i := range order {
		order[i] = i
	}
	sort.Slice(order, func(a, b int) bool { return people[order[a]] < people[order[b]] })
	var members []int
	var subs []uint64
	work := 0
	for len(frontier) > 0 {
		var next []uint64
		for _, pos := range frontier {
			l, sd := pos>>1, pos&1
			src := l
			if sd == 1 {
				src = all &^ l
			}
			// Groups of 1..capacity people of src, smaller first, each size
			// in lexicographic order: the order of riverEnv.Legal.
			members = members[:0]
			for i := 0; i < len(people); i++ {
				if src&(1<<order[i]) != 0 {
					members = append(members, order[i])
				}
			}
			subs = subs[:0]
			for r := 1; r <= capacity; r++ {
				combinations(len(members), r, func(idx []int) {
					var sub uint64
					for _, j := range idx {
						sub |= 1 << members[j]
					}
					subs = append(subs, sub)
				})
			}
			if work += len(subs); work > riverWorkLimit || len(seen) > bfsLimit {
				return nil, fmt.Errorf("%w: search limit reached", ErrNoPlan)
			}
			for _, sub := range subs {
				nl := l &^ sub
				if sd == 1 {
					nl = l | sub
				}
				if !safe(nl) || !safe(all&^nl) {
					continue
				}
				np := nl<<1 | (sd ^ 1)
				if _, ok := seen[np]; ok {
					continue
				}
				seen[np] = node{parent: pos, moved: sub}
				if nl == 0 {
					return riverTrace(people, start, np, func(p uint64) (uint64, uint64) { n := seen[p]; return n.parent, n.moved }), nil
				}
				next = append(next, np)
			}
		}
		frontier = next
	}
	return nil, ErrNoPlan
}

func riverTrace(people []string, start, end uint64, step func(uint64) (uint64, uint64)) []Action {
	var rev []Action
	for p := end; p != start; {
		parent, moved := step(p)
		fromSide, toSide := "left", "right"
		if parent&1 == 1 {
			fromSide, toSide = "right", "left"
		}
		var ps []string
		for i := range people {
			if moved&(1<<i) != 0 {
				ps = append(ps, people[i])
			}
		}
		sort.Strings(ps)
		rev = append(rev, &RiverAction{From: fromSide, Passengers: ps, To: toSide, Type: "cross"})
		p = parent
	}
	slices.Reverse(rev)
	return rev
}
