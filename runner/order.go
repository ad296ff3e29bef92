package runner

import (
	"cmp"
	"slices"

	"repot.dev/repot-operator/envs"
)

// Order is how the engine orders a shard's runs.
type Order string

const (
	// OrderLongestFirst (the default) starts the runs with the longest
	// expected replies first (longest-processing-time-first): the long
	// replies decode while the short ones fill the batch around them,
	// instead of decoding alone at the end.
	OrderLongestFirst Order = "longest-first"
	// OrderSuite runs in suite order (problem, then method), as listed.
	OrderSuite Order = "suite"
)

// moveChars is the size in characters of one printed move per environment
// (a river crossing move names the passengers and the direction).
var moveChars = map[string]int{
	"tower_of_hanoi":   51,
	"checker_jumping":  51,
	"river_crossing":   84,
	"blocksworld":      50,
	"blocksworld_pddl": 50,
}

// replyOverheadTokens is the program around the plan (import, print).
const replyOverheadTokens = 60

// ExpectedReplyTokens estimates the completion tokens of a first reply to p
// from its environment and complexity: a plan program prints one line per
// move of an optimal plan. The plan length is the suite's min_steps when it
// gives one, else the environment's growth in the complexity.
func ExpectedReplyTokens(p *envs.Problem) int {
	moves := p.MinSteps
	if moves <= 0 {
		moves = movesFor(p.Environment, p.Complexity)
	}
	chars, ok := moveChars[p.Environment]
	if !ok {
		chars = 50
	}
	return replyOverheadTokens + (moves*chars+3)/4
}

// movesFor is the optimal plan length of an environment at complexity n
// (the PuzzleZoo levels' min_steps), at least 1.
func movesFor(env string, n int) int {
	n = max(n, 1)
	m := n
	switch env {
	case "tower_of_hanoi":
		m = 1<<min(n, 20) - 1
	case "checker_jumping":
		m = n * (n + 2)
	case "river_crossing":
		m = 2*n + 1
	case "blocksworld", "blocksworld_pddl":
		m = 3*n - 4
	}
	return max(m, 1)
}

// orderJobs sorts jobs in place for the order: longest expected reply
// first, ties (and OrderSuite) kept in suite order.
func orderJobs(jobs []job, order Order) {
	if order == OrderSuite {
		return
	}
	slices.SortStableFunc(jobs, func(a, b job) int { return cmp.Compare(b.expected(), a.expected()) })
}

// expected is the job's expected first-reply length in tokens.
func (j job) expected() int {
	if j.derail != nil {
		return ExpectedReplyTokens(j.derail.Problem)
	}
	return ExpectedReplyTokens(j.p)
}
