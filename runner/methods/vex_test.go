package methods

import (
	"context"
	"encoding/json"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"repot.dev/repot-operator/contract"
	"repot.dev/repot-operator/contract/prompt"
	"repot.dev/repot-operator/envs"
	"repot.dev/repot-operator/envs/shareddata"
	"repot.dev/repot-operator/runner/runnertest"
)

// textClient answers calls in order with the scripted reply texts, as
// they are (runnertest's raw replies), and records the requests.
func textClient(replies ...string) *runnertest.ScriptedClient {
	c := &runnertest.ScriptedClient{}
	for _, r := range replies {
		c.Script = append(c.Script, runnertest.Reply{Raw: true, Code: r})
	}
	return c
}

// vexReply is one scripted reply of a differential case.
type vexReply struct {
	Moves []string `json:"moves"`
	Wrap  string   `json:"wrap"`
	Text  *string  `json:"text"`
	Code  string   `json:"code"`
}

type vexWant struct {
	Success   bool   `json:"success"`
	Stop      string `json:"stop"`
	Calls     int    `json:"calls"`
	Committed int    `json:"committed"`
	Rollbacks int    `json:"rollbacks"`
	Route     string `json:"route"`
}

type vexCase struct {
	Name        string     `json:"name"`
	Environment string     `json:"environment"`
	ProblemID   string     `json:"problem_id"`
	Proposer    string     `json:"proposer"`
	ChunkSize   int        `json:"chunk_size"`
	MaxLLMCalls int        `json:"max_llm_calls"`
	Replies     []vexReply `json:"replies"`
	Want        vexWant    `json:"want"`
}

// loadPuzzleZoo loads the published problems by id, or skips.
func loadPuzzleZoo(t *testing.T) map[string]*envs.Problem {
	t.Helper()
	ps, err := envs.LoadProblemsFile(shareddata.Require(t, "puzzlezoo_775.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	out := make(map[string]*envs.Problem, len(ps))
	for i := range ps {
		out[ps[i].ProblemID] = &ps[i]
	}
	return out
}

// oracleMoves are p's oracle moves as a model prints them, with the state
// before each (and the final state last).
func oracleMoves(t *testing.T, p *envs.Problem) ([]json.RawMessage, []envs.State) {
	t.Helper()
	e, err := p.Env()
	if err != nil {
		t.Fatal(err)
	}
	s, err := p.Initial()
	if err != nil {
		t.Fatal(err)
	}
	var raw []json.RawMessage
	states := []envs.State{s}
	for i, m := range p.OracleSolution {
		a, err := e.DecodeAction(m)
		if err != nil {
			t.Fatalf("oracle move %d: %v", i, err)
		}
		st := e.Step(s, a)
		if !st.Valid {
			t.Fatalf("oracle move %d is invalid", i)
		}
		raw, s = append(raw, e.RawMove(a)), st.Next
		states = append(states, s)
	}
	return raw, states
}

// moveToken resolves a case's move token (oN, illegal@N, raw:JSON).
func moveToken(t *testing.T, p *envs.Problem, tok string) json.RawMessage {
	t.Helper()
	e, _ := p.Env()
	raw, states := oracleMoves(t, p)
	switch {
	case strings.HasPrefix(tok, "raw:"):
		return json.RawMessage(tok[len("raw:"):])
	case strings.HasPrefix(tok, "illegal@"):
		n, err := strconv.Atoi(tok[len("illegal@"):])
		if err != nil || n >= len(states) {
			t.Fatalf("bad token %q", tok)
		}
		s := states[n]
		for _, m := range raw {
			a, err := e.Normalize(p, s, m)
			if err != nil {
				continue
			}
			if !e.Step(s, a).Valid {
				return m
			}
		}
		t.Fatalf("%s: no oracle move is rejected at state %d", p.ProblemID, n)
	case strings.HasPrefix(tok, "o"):
		n, err := strconv.Atoi(tok[1:])
		if err != nil || n >= len(raw) {
			t.Fatalf("bad token %q", tok)
		}
		return raw[n]
	}
	t.Fatalf("bad token %q", tok)
	return nil
}

// render writes a scripted reply as the model's text for proposer kind.
func (r vexReply) render(t *testing.T, p *envs.Problem, proposer string) string {
	if r.Text != nil {
		return *r.Text
	}
	if r.Code != "" {
		return "```python\n" + r.Code + "\n```\n"
	}
	moves := make([]string, len(r.Moves))
	for i, tok := range r.Moves {
		moves[i] = string(moveToken(t, p, tok))
	}
	list := "[" + strings.Join(moves, ", ") + "]"
	if proposer == ProposerCode {
		return "Here is the program:\n```python\nmoves = " + list + "\n```\n"
	}
	switch r.Wrap {
	case "prose":
		return "The next moves from the verified state are below.\n```json\n{\"actions\": " + list + "}\n```\nThey keep every rule."
	case "action":
		return `{"action": ` + moves[0] + `}`
	}
	return `{"actions": ` + list + `}`
}

func TestVEXDifferential(t *testing.T) {
	problems := loadPuzzleZoo(t)
	b, err := os.ReadFile("testdata/vex_differential.json")
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Cases []vexCase `json:"cases"`
	}
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	if len(doc.Cases) == 0 {
		t.Fatal("no cases")
	}
	for _, c := range doc.Cases {
		t.Run(c.Name, func(t *testing.T) {
			p, ok := problems[c.ProblemID]
			if !ok {
				t.Fatalf("problem %s is not in the published data", c.ProblemID)
			}
			if p.Environment != c.Environment {
				t.Fatalf("problem %s is %s, not %s", c.ProblemID, p.Environment, c.Environment)
			}
			opts := testOptions()
			if c.Proposer != "" {
				opts.VEX.Proposer = map[string]string{p.Environment: c.Proposer}
			}
			if c.ChunkSize > 0 {
				opts.VEX.ChunkSize = map[string]int{p.Environment: c.ChunkSize}
			}
			opts.VEX.MaxLLMCalls = c.MaxLLMCalls
			proposer := c.Proposer
			if proposer == "" {
				proposer = DefaultVEXOptions().Proposer[p.Environment]
			}
			client := textClient()
			for _, r := range c.Replies {
				client.Script = append(client.Script, runnertest.Reply{Raw: true, Code: r.render(t, p, proposer)})
			}
			deps := Deps{Client: client, Sandbox: runnertest.FakeSandbox, Clock: runnertest.NewFakeClock()}
			rec, tr, err := RunProblem(context.Background(), deps, opts, p, contract.MethodVEX)
			if err != nil {
				t.Fatal(err)
			}
			if rec.VEX == nil {
				t.Fatal("no VEX figures")
			}
			got := vexWant{Success: rec.Success, Stop: rec.StoppedReason, Calls: rec.Calls, Committed: rec.VEX.Committed, Rollbacks: rec.VEX.Rollbacks, Route: rec.Route}
			if diff := cmp.Diff(c.Want, got); diff != "" {
				for _, ct := range tr.Calls {
					t.Logf("call %d: outcome %s plan %s error %v", ct.Index, ct.Outcome, ct.Plan, ct.Replay)
				}
				t.Errorf("outcome (-want +got):\n%s", diff)
			}
			if rec.VEX.LLMCalls != rec.Calls || rec.VEX.ChunkAttempts != rec.Calls || len(tr.Calls) != rec.Calls {
				t.Errorf("calls: record %d, VEX %d/%d, trace %d", rec.Calls, rec.VEX.LLMCalls, rec.VEX.ChunkAttempts, len(tr.Calls))
			}
			if rec.VEX.Proposer != proposer {
				t.Errorf("proposer %q, want %q", rec.VEX.Proposer, proposer)
			}
			if len(client.Script) != len(c.Replies)-c.Want.Calls {
				t.Errorf("%d replies left, want %d", len(client.Script), len(c.Replies)-c.Want.Calls)
			}
			// Each call's replay starts at the moves committed before it.
			from := 0
			for _, ct := range tr.Calls {
				if ct.Purpose != contract.PurposeChunk || ct.Replay == nil {
					t.Fatalf("call %d: purpose %q replay %v", ct.Index, ct.Purpose, ct.Replay)
				}
				if ct.Replay.From != from {
					t.Errorf("call %d: from %d, want %d", ct.Index, ct.Replay.From, from)
				}
				from += ct.Replay.PrefixLen
			}
			if from != c.Want.Committed {
				t.Errorf("the calls' prefixes add to %d, want %d committed", from, c.Want.Committed)
			}
		})
	}
}

// hanoiVEX runs vex on hanoi3 with the given JSON replies.
func hanoiVEX(t *testing.T, opts Options, replies ...string) (contract.Record, contract.Trace, *runnertest.ScriptedClient) {
	t.Helper()
	client := textClient(replies...)
	deps := Deps{Client: client, Sandbox: runnertest.FakeSandbox, Clock: runnertest.NewFakeClock()}
	rec, tr, err := RunProblem(context.Background(), deps, opts, hanoi3WithOracle(t), contract.MethodVEX)
	if err != nil {
		t.Fatal(err)
	}
	return rec, tr, client
}

func jsonOpts() Options {
	o := testOptions()
	o.VEX.Proposer = map[string]string{envs.HanoiName: ProposerJSON}
	return o
}

func actions(moves ...string) string { return `{"actions": [` + strings.Join(moves, ", ") + `]}` }

func TestVEXPrompts(t *testing.T) {
	// A move rejected after sol[0] rolls the first chunk back.
	p := hanoi3WithOracle(t)
	bad := string(moveTokenHanoi(t, p, 1))
	rec, _, client := hanoiVEX(t, jsonOpts(), actions(sol[0], bad), actions(sol[1:]...))
	if !rec.Success || rec.Calls != 2 {
		t.Fatalf("success %v calls %d", rec.Success, rec.Calls)
	}
	var parsed []prompt.ParsedChunk
	for _, req := range client.Reqs {
		pc, err := prompt.ParseChunk(req.Messages)
		if err != nil {
			t.Fatal(err)
		}
		parsed = append(parsed, pc)
		if req.Messages[0].Content != prompt.ChunkSystemJSON {
			t.Errorf("system message %q", req.Messages[0].Content)
		}
	}
	first, second := parsed[0].Chunk, parsed[1].Chunk
	if first.Verified != 0 || first.Message != "" || first.Blocked != nil || first.Size != 200 || first.Proposer != prompt.ChunkJSON {
		t.Errorf("first prompt: %+v", first)
	}
	if second.Verified != 1 || len(second.Tail) != 1 || string(second.Tail[0]) != sol[0] {
		t.Errorf("second prompt's prefix: %d %s", second.Verified, second.Tail)
	}
	if len(second.Blocked) != 1 || string(second.Blocked[0].Move) != bad || second.Blocked[0].Message == "" {
		t.Errorf("second prompt's blocked moves: %+v", second.Blocked)
	}
	// Progress in the first chunk cleared the rollback's message.
	if second.Message != "" {
		t.Errorf("second prompt's message %q, want none", second.Message)
	}
}

// moveTokenHanoi is an oracle move of p rejected after its first n moves.
func moveTokenHanoi(t *testing.T, p *envs.Problem, n int) json.RawMessage {
	return moveToken(t, p, "illegal@"+strconv.Itoa(n))
}

func TestVEXLastErrorAndBlockedCap(t *testing.T) {
	// Six different moves rejected at the initial state, one per call: the
	// blocked list keeps five, and each prompt shows the previous rejection.
	p := hanoi3WithOracle(t)
	e, _ := p.Env()
	init, _ := p.Initial()
	var bad []string
	for _, m := range []string{"[2,0,1]", "[3,0,1]", "[2,0,2]", "[3,0,2]", "[1,1,2]", "[1,2,0]", "[2,1,0]"} {
		a, err := e.Normalize(p, init, json.RawMessage(m))
		if err == nil && !e.Step(init, a).Valid {
			bad = append(bad, m)
		}
	}
	if len(bad) < 6 {
		t.Fatalf("only %d rejected moves: %v", len(bad), bad)
	}
	bad = bad[:6]
	var replies []string
	for _, m := range bad {
		replies = append(replies, actions(m))
	}
	opts := jsonOpts()
	opts.VEX.MaxLLMCalls = 7
	replies = append(replies, actions(sol...))
	rec, _, client := hanoiVEX(t, opts, replies...)
	if !rec.Success || rec.VEX.Rollbacks != 6 || rec.Calls != 7 {
		t.Fatalf("success %v rollbacks %d calls %d", rec.Success, rec.VEX.Rollbacks, rec.Calls)
	}
	last, err := prompt.ParseChunk(client.Reqs[6].Messages)
	if err != nil {
		t.Fatal(err)
	}
	if len(last.Chunk.Blocked) != maxBlockedPerState {
		t.Errorf("%d blocked moves shown, want %d", len(last.Chunk.Blocked), maxBlockedPerState)
	}
	if !strings.Contains(last.Chunk.Message, bad[5]) {
		t.Errorf("last message %q does not name %s", last.Chunk.Message, bad[5])
	}
}

func TestVEXMaxSteps(t *testing.T) {
	// hanoi3 allows 14 moves: moves back and forth use them up.
	opts := jsonOpts()
	opts.VEX.ChunkSize = map[string]int{envs.HanoiName: 100}
	var loop []string
	for i := 0; i < 10; i++ {
		loop = append(loop, "[1,0,1]", "[1,1,0]")
	}
	rec, _, _ := hanoiVEX(t, opts, actions(loop...))
	if rec.Success || rec.StoppedReason != contract.StopMaxSteps || rec.VEX.Committed != 14 || rec.Calls != 1 {
		t.Fatalf("success %v stop %s committed %d calls %d", rec.Success, rec.StoppedReason, rec.VEX.Committed, rec.Calls)
	}
}

func TestVEXInfraError(t *testing.T) {
	client := &runnertest.ScriptedClient{Script: []runnertest.Reply{{Err: errInfra}}}
	deps := Deps{Client: client, Sandbox: runnertest.FakeSandbox, Clock: runnertest.NewFakeClock()}
	rec, _, err := RunProblem(context.Background(), deps, testOptions(), hanoi3WithOracle(t), contract.MethodVEX)
	if err != nil {
		t.Fatal(err)
	}
	if rec.StoppedReason != contract.StopInfraError || rec.Success {
		t.Fatalf("stop %s", rec.StoppedReason)
	}
}

func TestVEXDefaultsFallBack(t *testing.T) {
	r := &run{p: &envs.Problem{Environment: envs.HanoiName}}
	if got := r.vexSettings(); got != (vexSettings{budget: 12, size: 200, proposer: ProposerCode}) {
		t.Errorf("zero options: %+v", got)
	}
	r.p.Environment = "blocksworld_pddl"
	r.opts.VEX = VEXOptions{MaxLLMCalls: 3, Proposer: map[string]string{"blocksworld_pddl": "bogus"}}
	if got := r.vexSettings(); got != (vexSettings{budget: 3, size: DefaultChunkSize, proposer: ProposerJSON}) {
		t.Errorf("unknown environment: %+v", got)
	}
}

func TestRunDerailVEXConditions(t *testing.T) {
	task := derailTask(t, legalWrong, afterWrong, afterTwo)
	src := hanoi3WithOracle(t)
	init := string(compactRaw(src.InitialState))
	tests := []struct {
		condition string
		replies   []string
		start     string
		hidden    bool
		// verified is the prompt's verified count at the second call.
		verified  int
		committed int
	}{
		{contract.CondVEXFull, []string{actions(rest[0]), actions(rest[1:]...)}, afterTwo, false, 1, 5},
		{contract.CondVEXNoPrefix, []string{actions(rest[0]), actions(rest[1:]...)}, afterTwo, true, 0, 5},
		{contract.CondVEXRestart, []string{actions(sol[0]), actions(sol[1:]...)}, init, false, 1, 7},
	}
	for _, tc := range tests {
		t.Run(tc.condition, func(t *testing.T) {
			client := textClient(tc.replies...)
			deps := Deps{Client: client, Sandbox: runnertest.FakeSandbox, Clock: runnertest.NewFakeClock()}
			rec, tr, err := RunDerail(context.Background(), deps, jsonOpts(), task, tc.condition)
			if err != nil {
				t.Fatal(err)
			}
			if !rec.Success || rec.Calls != 2 || rec.Method != tc.condition || rec.ProblemID != derailCaseID || rec.VEX == nil || tr.Metadata.Derail == nil {
				t.Fatalf("record %+v", rec)
			}
			first, err := prompt.ParseChunk(client.Reqs[0].Messages)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.start, string(first.Chunk.State)); diff != "" {
				t.Errorf("start state (-want +got):\n%s", diff)
			}
			second, err := prompt.ParseChunk(client.Reqs[1].Messages)
			if err != nil {
				t.Fatal(err)
			}
			c := second.Chunk
			if c.HidePrefix != tc.hidden || c.Verified != tc.verified || (tc.hidden && c.Tail != nil) {
				t.Errorf("second prompt: hidden %v verified %d tail %s", c.HidePrefix, c.Verified, c.Tail)
			}
			if tc.hidden && strings.Contains(client.Reqs[1].Messages[1].Content, "Last verified moves") {
				t.Error("vex-no-prefix prompt shows verified moves")
			}
			if want := tc.committed; rec.VEX.Committed != want {
				t.Errorf("committed %d, want %d", rec.VEX.Committed, want)
			}
		})
	}
}

// TestRunDerailVEXPublished runs the three conditions on published
// Derail-550 cases, checking which problem and start state each uses.
func TestRunDerailVEXPublished(t *testing.T) {
	cases, err := envs.LoadDerail(shareddata.Require(t, "derail_550.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	problems := loadPuzzleZoo(t)
	seen := map[string]bool{}
	for _, c := range cases {
		if seen[c.Environment] {
			continue
		}
		seen[c.Environment] = true
		p, ok := problems[c.ProblemID]
		if !ok {
			continue
		}
		task := DerailTask{Case: c, Problem: p}
		for _, cond := range []string{contract.CondVEXFull, contract.CondVEXNoPrefix, contract.CondVEXRestart} {
			client := textClient("no moves")
			deps := Deps{Client: client, Sandbox: runnertest.FakeSandbox, Clock: runnertest.NewFakeClock()}
			opts := testOptions()
			opts.VEX.MaxLLMCalls = 1
			opts.VEX.Proposer = map[string]string{c.Environment: ProposerJSON}
			rec, _, err := RunDerail(context.Background(), deps, opts, task, cond)
			if err != nil {
				t.Fatalf("%s %s: %v", c.CaseID, cond, err)
			}
			if rec.Calls != 1 || rec.StoppedReason != contract.StopCallBudget {
				t.Errorf("%s %s: calls %d stop %s", c.CaseID, cond, rec.Calls, rec.StoppedReason)
			}
			pc, err := prompt.ParseChunk(client.Reqs[0].Messages)
			if err != nil {
				t.Fatal(err)
			}
			want := c.LastValidState
			if cond == contract.CondVEXRestart {
				want = p.InitialState
			}
			e, _ := p.Env()
			if err := sameState(e, mustState(t, e, pc.Chunk.State), want); err != nil {
				t.Errorf("%s %s: start state: %v", c.CaseID, cond, err)
			}
			if pc.Chunk.HidePrefix != (cond == contract.CondVEXNoPrefix) {
				t.Errorf("%s %s: hidden %v", c.CaseID, cond, pc.Chunk.HidePrefix)
			}
		}
	}
	if len(seen) == 0 {
		t.Fatal("no cases")
	}
}

func mustState(t *testing.T, e envs.Env, raw json.RawMessage) envs.State {
	t.Helper()
	s, err := e.DecodeState(raw)
	if err != nil {
		t.Fatal(err)
	}
	return s
}
