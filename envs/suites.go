package envs

import (
	"fmt"
	"sort"
)

// Suite names.
const (
	SuitePuzzleZoo  = "puzzlezoo-775"
	SuiteOpenSource = "open-source-120"
	SuitePlanBench  = "planbench-378"
	SuiteDerail     = "derail-550"
)

// SuiteNames lists the suites Suite builds without a file, then those that
// need the user's file (--problems).
func SuiteNames() []string {
	return []string{SuiteOpenSource, SuitePuzzleZoo, SuitePlanBench, SuiteDerail}
}

// Suite returns the problems of a built-in suite in suite order.
// planbench-378 and derail-550 are published files: load them with
// LoadPlanBench / LoadDerail.
func Suite(name string) ([]Problem, error) {
	switch name {
	case SuitePuzzleZoo:
		return PuzzleZoo()
	case SuiteOpenSource:
		pz, err := PuzzleZoo()
		if err != nil {
			return nil, err
		}
		return StratifiedSample(pz, 120, 0), nil
	case SuitePlanBench, SuiteDerail:
		return nil, fmt.Errorf("suite %s is loaded from its published JSONL file: give its path or URL with --problems", name)
	}
	return nil, fmt.Errorf("unknown suite %q (known: %v)", name, SuiteNames())
}

// StratifiedSample is the open-weights sampler: group problems by
// (environment, complexity) in order of first appearance, shuffle each group
// in that order with one random.Random(seed), then take each group's last
// remaining problem, round after round over the groups in sorted key order,
// until k are taken.
func StratifiedSample(problems []Problem, k int, seed uint32) []Problem {
	type key struct {
		env string
		c   int
	}
	groups := map[key][]Problem{}
	var order []key
	for _, p := range problems {
		kk := key{p.Environment, p.Complexity}
		if _, ok := groups[kk]; !ok {
			order = append(order, kk)
		}
		groups[kk] = append(groups[kk], p)
	}
	r := newPyRandom(seed)
	for _, kk := range order {
		g := groups[kk]
		r.shuffle(len(g), func(i, j int) { g[i], g[j] = g[j], g[i] })
	}
	sorted := append([]key(nil), order...)
	sort.Slice(sorted, func(i, j int) bool {
		if sorted[i].env != sorted[j].env {
			return sorted[i].env < sorted[j].env
		}
		return sorted[i].c < sorted[j].c
	})
	var out []Problem
	for len(out) < k {
		took := false
		for _, kk := range sorted {
			if len(out) == k {
				break
			}
			g := groups[kk]
			if len(g) == 0 {
				continue
			}
			out = append(out, g[len(g)-1])
			groups[kk] = g[:len(g)-1]
			took = true
		}
		if !took {
			break
		}
	}
	return out
}
