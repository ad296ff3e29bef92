package chaintree

import (
	"bytes"
	"encoding/json"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"repot.dev/repot-operator/contract"
	"repot.dev/repot-operator/contract/prompt"
	"repot.dev/repot-operator/contract/replay"
	"repot.dev/repot-operator/envs"
)

// fixture is a 4-disk Tower of Hanoi problem, the oracle's plan, and a
// valid plan of the model's that is not the oracle's (the tower to peg B,
// then to peg C).
type fixture struct {
	p      *envs.Problem
	e      envs.Env
	init   envs.State
	goal   envs.State
	oracle []json.RawMessage
	model  []json.RawMessage
}

func hanoi(t *testing.T) fixture {
	t.Helper()
	p := &envs.Problem{ProblemID: "hanoi-4", Environment: "tower_of_hanoi", MaxSteps: 100,
		InitialState: json.RawMessage(`{"peg_names":["A","B","C"],"pegs":{"A":[4,3,2,1],"B":[],"C":[]}}`),
		GoalState:    json.RawMessage(`{"peg_names":["A","B","C"],"pegs":{"A":[],"B":[],"C":[4,3,2,1]}}`)}
	f := fixture{p: p}
	var err error
	if f.e, err = p.Env(); err != nil {
		t.Fatal(err)
	}
	f.init, _ = p.Initial()
	f.goal, _ = p.Goal()
	raw := func(as []envs.Action) []json.RawMessage {
		out := make([]json.RawMessage, len(as))
		for i, a := range as {
			out[i] = f.e.RawMove(a)
		}
		return out
	}
	oracle, err := envs.Solve(f.e, f.init, f.goal)
	if err != nil {
		t.Fatal(err)
	}
	f.oracle = raw(oracle)
	onB, err := f.e.DecodeState(json.RawMessage(`{"peg_names":["A","B","C"],"pegs":{"A":[],"B":[4,3,2,1],"C":[]}}`))
	if err != nil {
		t.Fatal(err)
	}
	toB, err1 := envs.Solve(f.e, f.init, onB)
	toC, err2 := envs.Solve(f.e, onB, f.goal)
	if err1 != nil || err2 != nil {
		t.Fatal(err1, err2)
	}
	f.model = append(raw(toB), raw(toC)...)
	return f
}

// call is a traced call whose plan is replayed from the first from moves
// of the model's plan, as the engine records it.
func (f fixture) call(t *testing.T, idx int, purpose string, from int, plan []json.RawMessage) contract.CallTrace {
	t.Helper()
	s := f.init
	for _, raw := range f.model[:from] {
		a, err := f.e.Normalize(f.p, s, raw)
		if err != nil {
			t.Fatal(err)
		}
		s = f.e.Step(s, a).Next
	}
	res := replay.Replay(f.e, f.p, s, f.goal, plan, f.p.MaxSteps-from)
	return contract.CallTrace{Index: idx, Purpose: purpose, Prompt: prompt.Initial(f.p), Plan: plan, Outcome: res.StopReason,
		Replay: &contract.ReplayTrace{From: from, PrefixLen: len(res.Prefix), PlanLen: res.PlanLen, K: res.K, Error: res.Error, Kind: res.Kind, ReachedGoal: res.ReachedGoal, StopReason: res.StopReason}}
}

func with(moves []json.RawMessage, i int, m string) []json.RawMessage {
	out := append([]json.RawMessage{}, moves...)
	out[i] = json.RawMessage(m)
	return out
}

// traces are hand-made runs: a repot run repaired twice (an illegal move,
// then an unreadable one, then the goal), and a pot-retry run whose two
// attempts both fail.
func (f fixture) traces(t *testing.T) []contract.Trace {
	n := len(f.model)
	repot := contract.Trace{ProblemID: f.p.ProblemID, Environment: f.p.Environment, Model: "m", Method: "repot", Calls: []contract.CallTrace{
		f.call(t, 0, contract.PurposeInitial, 0, with(f.model, 5, `[4, 0, 2]`)),
		f.call(t, 1, contract.PurposeRepair, 5, with(f.model[5:], 4, `"jump"`)),
		f.call(t, 2, contract.PurposeRepair, 9, f.model[9:]),
	}}
	retry := contract.Trace{ProblemID: f.p.ProblemID, Environment: f.p.Environment, Model: "m", Method: "pot-retry", Calls: []contract.CallTrace{
		f.call(t, 0, contract.PurposeInitial, 0, with(f.model[:n-2], 2, `[3, 0, 1]`)),
		f.call(t, 1, contract.PurposeFreshRetry, 0, f.model[:n-3]),
	}}
	return []contract.Trace{repot, retry}
}

func movesOf(ex Example) []string {
	var out []string
	for _, n := range ex.Prefix {
		out = append(out, string(n.Move))
	}
	if ex.Content != nil {
		out = append(out, string(ex.Content))
	}
	return out
}

func TestExportHandMadeTraces(t *testing.T) {
	f := hanoi(t)
	var buf bytes.Buffer
	counts, err := Export(&buf, f.traces(t), Options{Trace: true, Completable: SolverCompletable})
	if err != nil {
		t.Fatal(err)
	}
	n := len(f.model)
	// repot: a backtrack per failed branch, n continues and an answer;
	// pot-retry: one backtrack (its retry ends short, with no failed node).
	if diff := cmp.Diff(Counts{Continue: n, Answer: 1, Backtrack: 3}, counts); diff != "" {
		t.Errorf("counts (-want +got):\n%s", diff)
	}
	traceMoves := map[string]bool{}
	for _, tr := range f.traces(t) {
		for _, c := range tr.Calls {
			for _, m := range c.Plan {
				traceMoves[compact(m)] = true
			}
		}
	}
	oracle := make([]string, len(f.oracle))
	for i, m := range f.oracle {
		oracle[i] = compact(m)
	}
	var backtracks []string
	for _, line := range bytes.Split(bytes.TrimSpace(buf.Bytes()), []byte("\n")) {
		if err := Validate(line); err != nil {
			t.Errorf("schema: %v\n%s", err, line)
		}
		var ex Example
		if err := json.Unmarshal(line, &ex); err != nil {
			t.Fatal(err)
		}
		moves := movesOf(ex)
		for _, m := range moves {
			if !traceMoves[m] {
				t.Errorf("%s: move %s is in no traced plan", ex.Key, m)
			}
		}
		if len(moves) >= len(oracle) && cmp.Equal(moves[:len(oracle)], oracle) {
			t.Errorf("%s leaks the oracle plan", ex.Key)
		}
		if ex.Action != ActionBacktrack {
			continue
		}
		backtracks = append(backtracks, ex.Method+" "+ex.Output)
		// The target is a prefix of the context from which the oracle
		// solver still reaches the goal.
		target, _ := strconv.Atoi(ex.Node)
		s := f.init
		for _, node := range ex.Prefix[:target] {
			a, err := f.e.Normalize(f.p, s, node.Move)
			if err != nil {
				t.Fatalf("%s: prefix move %s: %v", ex.Key, node.Move, err)
			}
			st := f.e.Step(s, a)
			if !st.Valid {
				t.Fatalf("%s: the backtrack target's prefix is not verified", ex.Key)
			}
			s = st.Next
		}
		if _, err := envs.Solve(f.e, s, f.goal); err != nil {
			t.Errorf("%s: backtrack to node %d, from which the goal cannot be reached", ex.Key, target)
		}
		if !strings.HasPrefix(ex.Trace, "abandoned branch:") {
			t.Errorf("%s: no trace line: %q", ex.Key, ex.Trace)
		}
	}
	want := []string{
		"repot 5 Move 6 ([4,0,2]) is invalid: ",
		"repot 9 Move 5 (\"jump\") could not be read: ",
		"pot-retry 2 Move 3 ([3,0,1]) is invalid: ",
	}
	if len(backtracks) != len(want) {
		t.Fatalf("backtracks %q, want %d", backtracks, len(want))
	}
	for i := range want {
		if !strings.HasPrefix(backtracks[i], want[i]) {
			t.Errorf("backtrack %d is %q, want it to start %q", i, backtracks[i], want[i])
		}
	}
}

// TestBacktrackSkipsDeadEnds: with an oracle that calls some verified
// states dead ends, a backtrack returns past them.
func TestBacktrackSkipsDeadEnds(t *testing.T) {
	f := hanoi(t)
	tr := f.traces(t)[0]
	deadAfter := 3 // states after more than 3 moves of the model's plan are "dead"
	states := map[string]bool{}
	s := f.init
	for i, raw := range f.model {
		a, _ := f.e.Normalize(f.p, s, raw)
		s = f.e.Step(s, a).Next
		if i+1 > deadAfter {
			b, _ := json.Marshal(s)
			states[string(b)] = true
		}
	}
	alive := func(_ envs.Env, from, _ envs.State) bool {
		b, _ := json.Marshal(from)
		return !states[string(b)]
	}
	exs, err := Examples(&tr, Options{Completable: alive})
	if err != nil {
		t.Fatal(err)
	}
	for _, ex := range exs {
		if ex.Action == ActionBacktrack && ex.Node != strconv.Itoa(deadAfter) {
			t.Errorf("%s backtracks to node %s, want %d (the deepest live prefix)", ex.Key, ex.Node, deadAfter)
		}
	}
}

func TestValidateRejects(t *testing.T) {
	good := `{"key":"k","problem_id":"p","environment":"e","model":"m","method":"repot","initial":{},"goal":{},"prefix":[{"id":"1","move":[1,0,2]}],"action":"continue","node":"2","content":[2,0,1],"output":"2 [2,0,1]"}`
	if err := Validate([]byte(good)); err != nil {
		t.Fatalf("a good example: %v", err)
	}
	for name, line := range map[string]string{
		"unknown field":       strings.Replace(good, `"key"`, `"oracle":[1],"key"`, 1),
		"wrong continue node": strings.Replace(good, `"node":"2"`, `"node":"3"`, 1),
		"output mismatch":     strings.Replace(good, `"output":"2 [2,0,1]"`, `"output":"2 [2,0,2]"`, 1),
		"bad prefix id":       strings.Replace(good, `"id":"1"`, `"id":"0"`, 1),
		"unknown action":      strings.Replace(good, `"action":"continue"`, `"action":"jump"`, 1),
		"backtrack forward":   `{"key":"k","problem_id":"p","environment":"e","method":"m","initial":{},"goal":{},"prefix":[{"id":"1","move":[1]}],"action":"backtrack","node":"1","reason":"r","output":"1 r"}`,
		"answer with node":    `{"key":"k","problem_id":"p","environment":"e","method":"m","initial":{},"goal":{},"prefix":[],"action":"answer","node":"1","output":"ANSWER"}`,
		"trailing data":       good + ` {}`,
		"no goal":             strings.Replace(good, `"goal":{},`, ``, 1),
	} {
		if err := Validate([]byte(line)); err == nil {
			t.Errorf("%s: accepted %s", name, line)
		}
	}
}

// FuzzValidate: the schema check never panics, and what it accepts
// re-marshals to an example it accepts again.
func FuzzValidate(f *testing.F) {
	f.Add([]byte(`{"key":"k","problem_id":"p","environment":"e","method":"m","initial":{},"goal":{},"prefix":[],"action":"answer","output":"ANSWER"}`))
	f.Add([]byte(`{"key":"k","problem_id":"p","environment":"e","method":"m","initial":{},"goal":{},"prefix":[{"id":"1","move":[1]}],"action":"backtrack","node":"0","reason":"r","output":"0 r"}`))
	f.Add([]byte(`{}`))
	f.Fuzz(func(t *testing.T, line []byte) {
		if Validate(line) != nil {
			return
		}
		var ex Example
		if err := json.Unmarshal(line, &ex); err != nil {
			t.Fatalf("accepted but does not decode: %v", err)
		}
		b, err := json.Marshal(ex)
		if err != nil {
			t.Fatal(err)
		}
		if err := Validate(b); err != nil {
			t.Fatalf("accepted %s but not its re-marshalled form %s: %v", line, b, err)
		}
	})
}

func TestExportJSONL(t *testing.T) {
	f := hanoi(t)
	var in bytes.Buffer
	for _, tr := range f.traces(t) {
		b, _ := json.Marshal(tr)
		in.Write(append(b, '\n', '\n'))
	}
	var want, got bytes.Buffer
	wc, err := Export(&want, f.traces(t), Options{})
	if err != nil {
		t.Fatal(err)
	}
	gc, err := ExportJSONL(&got, &in, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(wc, gc); diff != "" {
		t.Errorf("counts (-Export +ExportJSONL):\n%s", diff)
	}
	if want.String() != got.String() {
		t.Errorf("ExportJSONL wrote other examples than Export")
	}
	if _, err := ExportJSONL(&got, strings.NewReader("{}\nnot json\n"), Options{}); err == nil || !strings.Contains(err.Error(), "traces line 2") {
		t.Errorf("a bad line: %v", err)
	}
}
