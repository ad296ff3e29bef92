// Package chaintree turns RePoT run traces into failure-branch supervision
// in Pyligent's form (docs/chaintree.md): JSONL training examples, each a
// prefix of verified moves mapped to one action, continue (`ID CONTENT`),
// answer (`ANSWER`) or backtrack (`ID REASON`) to the last prefix that can
// still be completed, with the verifier's reason. It is pure: Export reads
// traces and writes examples, nothing else.
package chaintree

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"

	"repot.dev/repot-operator/contract"
	"repot.dev/repot-operator/contract/prompt"
	"repot.dev/repot-operator/envs"
)

// Actions of an example.
const (
	ActionContinue  = "continue"
	ActionAnswer    = "answer"
	ActionBacktrack = "backtrack"
)

// AnswerToken is the output of an answer example.
const AnswerToken = "ANSWER"

// Node is one node of the chain: its id (the number of moves from the root,
// "1" for the first move) and the move.
type Node struct {
	ID   string          `json:"id"`
	Move json.RawMessage `json:"move"`
}

// Example is one training example (one JSONL line).
type Example struct {
	// Key is "<model>/<method>/<problem_id>/<n>", n counting the run's
	// examples from 0.
	Key         string `json:"key"`
	ProblemID   string `json:"problem_id"`
	Environment string `json:"environment"`
	Model       string `json:"model"`
	Method      string `json:"method"`
	// Initial and Goal are the problem's states as the prompt showed them.
	Initial json.RawMessage `json:"initial"`
	Goal    json.RawMessage `json:"goal"`
	// Prefix is the context: the moves from the root, node ids 1..n. For a
	// backtrack its last node is the failed one.
	Prefix []Node `json:"prefix"`
	Action string `json:"action"`
	// Node is the id the action names: the new node of a continue, the
	// node returned to by a backtrack; "" for an answer.
	Node string `json:"node,omitempty"`
	// Content is a continue's move.
	Content json.RawMessage `json:"content,omitempty"`
	// Reason is a backtrack's reason: the verifier's message.
	Reason string `json:"reason,omitempty"`
	// Output is the target text: "ID CONTENT", "ANSWER" or "ID REASON".
	Output string `json:"output"`
	// Trace, on a backtrack when Options.Trace is set, summarises the
	// abandoned branch.
	Trace string `json:"trace,omitempty"`
}

// Options of Export.
type Options struct {
	// Trace adds the abandoned branch's summary to backtrack examples.
	Trace bool
	// Completable, when not nil, says whether the goal can still be reached
	// from a state; a backtrack then returns to the deepest verified prefix
	// from which it can (a verified move may lead into a dead end). Nil
	// trusts the verified prefix. It must answer yes or no only: no plan
	// from it ever reaches an example.
	Completable func(e envs.Env, from, goal envs.State) bool
	// Problems gives a trace's problem by id; a trace whose problem is not
	// there is read from its first call's prompt.
	Problems map[string]*envs.Problem
}

// SolverCompletable is Options.Completable by the environments' oracle
// solvers.
func SolverCompletable(e envs.Env, from, goal envs.State) bool {
	_, err := envs.Solve(e, from, goal)
	return err == nil
}

// Counts are the examples written, by action.
type Counts struct {
	Continue  int `json:"continue"`
	Answer    int `json:"answer"`
	Backtrack int `json:"backtrack"`
	// Skipped counts traces whose problem could not be read (not in
	// Options.Problems, and a first prompt that states none), and traces
	// whose plans do not replay from the problem's start as they say
	// (such as the prompted Derail conditions, which replay from a
	// checkpoint).
	Skipped int `json:"skipped"`
}

// Export writes the examples of every trace, one JSON line each, and
// returns their counts.
func Export(w io.Writer, traces []contract.Trace, opts Options) (Counts, error) {
	var c Counts
	for i := range traces {
		exs, err := Examples(&traces[i], opts)
		if err != nil {
			c.Skipped++
			continue
		}
		for _, ex := range exs {
			b, err := json.Marshal(ex)
			if err != nil {
				return c, err
			}
			if _, err := w.Write(append(b, '\n')); err != nil {
				return c, err
			}
			switch ex.Action {
			case ActionContinue:
				c.Continue++
			case ActionAnswer:
				c.Answer++
			case ActionBacktrack:
				c.Backtrack++
			}
		}
	}
	return c, nil
}

// tree is one run's chain tree as it is rebuilt.
type tree struct {
	e          envs.Env
	p          *envs.Problem
	init, goal envs.State
	opts       Options
}

// Examples turns one trace into its examples: a backtrack for every branch
// that ended at an illegal or unreadable move, and, when a branch reached
// the goal, a continue for every move of that branch and an answer at its
// end. Identical examples of one run are written once.
func Examples(t *contract.Trace, opts Options) ([]Example, error) {
	tr, err := newTree(t, opts)
	if err != nil {
		return nil, err
	}
	var (
		out      []Example
		seen     = map[string]bool{}
		branches [][]json.RawMessage // verified moves of every branch, newest last
		solved   []json.RawMessage
	)
	add := func(ex Example) {
		ex.Key = fmt.Sprintf("%s/%s/%s/%d", t.Model, t.Method, t.ProblemID, len(out))
		ex.ProblemID, ex.Environment, ex.Model, ex.Method = t.ProblemID, t.Environment, t.Model, t.Method
		ex.Initial, ex.Goal = tr.p.InitialState, tr.p.GoalState
		b, _ := json.Marshal([]any{ex.Prefix, ex.Action, ex.Node, ex.Content, ex.Reason})
		if seen[string(b)] {
			return
		}
		seen[string(b)] = true
		out = append(out, ex)
	}
	for _, call := range t.Calls {
		rp := call.Replay
		if rp == nil {
			continue
		}
		// A call whose replay started past move 0 (a repair, a VEX chunk)
		// continues the newest branch that verified that many moves.
		base := []json.RawMessage{}
		if rp.From > 0 {
			base = branchWith(branches, rp.From)
			if base == nil {
				return nil, fmt.Errorf("problem %s: call %d continues from move %d, which no earlier branch verified", t.ProblemID, call.Index, rp.From)
			}
		}
		moves, ok := tr.committed(base, call.Plan, rp)
		if !ok {
			return nil, fmt.Errorf("problem %s: call %d: its plan does not replay to the %d moves its trace verified", t.ProblemID, call.Index, rp.PrefixLen)
		}
		verified := append(append([]json.RawMessage{}, base...), moves...)
		branches = append(branches, verified)
		if rp.ReachedGoal {
			solved = verified
			continue
		}
		if rp.K < 0 || rp.K >= len(call.Plan) || (rp.StopReason != contract.StopInvalidMove && rp.StopReason != contract.StopFormatError) {
			continue // no failed node: the plan ended short or never came
		}
		target := tr.completable(verified)
		prefix := nodes(append(append([]json.RawMessage{}, verified...), call.Plan[rp.K]))
		node := strconv.Itoa(target)
		ex := Example{Prefix: prefix, Action: ActionBacktrack, Node: node, Reason: oneLine(rp.Error), Output: node + " " + oneLine(rp.Error)}
		if opts.Trace {
			ex.Trace = fmt.Sprintf("abandoned branch: nodes %d..%d verified from node %d, node %d (%s) rejected; back to node %d",
				len(base)+1, len(verified), len(base), len(verified)+1, compact(call.Plan[rp.K]), target)
		}
		add(ex)
	}
	if solved != nil {
		for j := range solved {
			node := strconv.Itoa(j + 1)
			add(Example{Prefix: nodes(solved[:j]), Action: ActionContinue, Node: node, Content: compactRaw(solved[j]), Output: node + " " + compact(solved[j])})
		}
		add(Example{Prefix: nodes(solved), Action: ActionAnswer, Output: AnswerToken})
	}
	return out, nil
}

// branchWith is the first from moves of the newest branch that verified at
// least that many.
func branchWith(branches [][]json.RawMessage, from int) []json.RawMessage {
	for i := len(branches) - 1; i >= 0; i-- {
		if len(branches[i]) >= from {
			return append([]json.RawMessage{}, branches[i][:from]...)
		}
	}
	return nil
}

func newTree(t *contract.Trace, opts Options) (*tree, error) {
	p := opts.Problems[t.ProblemID]
	if p == nil {
		if len(t.Calls) == 0 {
			return nil, fmt.Errorf("problem %s: no calls", t.ProblemID)
		}
		parsed, err := prompt.Parse(t.Calls[0].Prompt)
		if err != nil || parsed.Initial == nil {
			return nil, fmt.Errorf("problem %s: the first prompt states no problem", t.ProblemID)
		}
		p = &envs.Problem{ProblemID: t.ProblemID, Environment: parsed.Environment, InitialState: parsed.Initial, GoalState: parsed.Goal, MaxSteps: parsed.MaxSteps}
	}
	tr := &tree{p: p, opts: opts}
	var err error
	if tr.e, err = p.Env(); err != nil {
		return nil, err
	}
	if tr.init, err = p.Initial(); err != nil {
		return nil, err
	}
	if tr.goal, err = p.Goal(); err != nil {
		return nil, err
	}
	return tr, nil
}

// committed are the moves of plan that its replay from the end of base
// verified: its first rp.PrefixLen valid moves before the stopping move
// rp.K. A move invalid where it stands before rp.K is one the run skipped
// (VEX skips a move already rejected at that state) and is no node. ok is
// false when the plan does not give the moves the trace says it verified.
func (tr *tree) committed(base, plan []json.RawMessage, rp *contract.ReplayTrace) (moves []json.RawMessage, ok bool) {
	s := tr.init
	for _, raw := range base {
		a, err := tr.e.Normalize(tr.p, s, raw)
		if err != nil {
			return nil, false
		}
		s = tr.e.Step(s, a).Next
	}
	limit := len(plan)
	if rp.K >= 0 && rp.K < limit {
		limit = rp.K
	}
	for _, raw := range plan[:limit] {
		if len(moves) == rp.PrefixLen {
			break
		}
		a, err := tr.e.Normalize(tr.p, s, raw)
		if err != nil {
			return nil, false
		}
		st := tr.e.Step(s, a)
		if !st.Valid {
			continue
		}
		moves, s = append(moves, raw), st.Next
	}
	return moves, len(moves) == rp.PrefixLen
}

// completable is the deepest prefix length of verified from which the goal
// can still be reached (the whole of it without Options.Completable).
func (tr *tree) completable(verified []json.RawMessage) int {
	if tr.opts.Completable == nil {
		return len(verified)
	}
	states := []envs.State{tr.init}
	s := tr.init
	for _, raw := range verified {
		a, err := tr.e.Normalize(tr.p, s, raw)
		if err != nil {
			break
		}
		st := tr.e.Step(s, a)
		if !st.Valid {
			break
		}
		s = st.Next
		states = append(states, s)
	}
	for n := len(states) - 1; n > 0; n-- {
		if tr.opts.Completable(tr.e, states[n], tr.goal) {
			return n
		}
	}
	return 0
}

func nodes(moves []json.RawMessage) []Node {
	out := make([]Node, len(moves))
	for i, m := range moves {
		out[i] = Node{ID: strconv.Itoa(i + 1), Move: compactRaw(m)}
	}
	return out
}

func compactRaw(m json.RawMessage) json.RawMessage {
	var b bytes.Buffer
	if json.Compact(&b, m) != nil {
		s, _ := json.Marshal(string(m))
		return s
	}
	return b.Bytes()
}

func compact(m json.RawMessage) string { return string(compactRaw(m)) }

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

// ExportJSONL is Export over a traces.jsonl stream, one trace at a time, so
// that a large run never sits in memory whole. Blank lines are skipped; a
// line that is not a trace is an error naming its line number.
func ExportJSONL(w io.Writer, traces io.Reader, opts Options) (Counts, error) {
	var total Counts
	br := bufio.NewReaderSize(traces, 1<<20)
	for n := 1; ; n++ {
		line, err := br.ReadBytes('\n')
		if err != nil && err != io.EOF {
			return total, fmt.Errorf("traces line %d: %w", n, err)
		}
		if t := bytes.TrimSpace(line); len(t) > 0 {
			var tr contract.Trace
			if uerr := json.Unmarshal(t, &tr); uerr != nil {
				return total, fmt.Errorf("traces line %d: %v", n, uerr)
			}
			c, werr := Export(w, []contract.Trace{tr}, opts)
			total.Continue += c.Continue
			total.Answer += c.Answer
			total.Backtrack += c.Backtrack
			total.Skipped += c.Skipped
			if werr != nil {
				return total, werr
			}
		}
		if err == io.EOF {
			return total, nil
		}
	}
}
