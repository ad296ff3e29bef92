package methods

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"repot.dev/repot-operator/contract"
	"repot.dev/repot-operator/contract/prompt"
	"repot.dev/repot-operator/envs"
	"repot.dev/repot-operator/envs/shareddata"
	"repot.dev/repot-operator/runner/model"
	"repot.dev/repot-operator/runner/runnertest"
)

// Reply kinds of a step script (stateguardClient):
//
//   - "correct": the id of the first move of a shortest path from the
//     prompt's state to the goal, ranked alone;
//   - "unknown": the id "z9", which no option has;
//   - "garbage": a reply without a JSON object;
//   - "back": the id of a move whose successor is a state shown in an
//     earlier prompt (a loop), ranked alone;
//   - "backfirst": as "back", but ranking the "correct" id second;
//   - "move:M": the id of the option whose move is M, ranked alone.
//
// Once the script is spent, every reply is "correct".
type stateguardClient struct {
	mu     sync.Mutex
	t      *testing.T
	e      envs.Env
	script []string
	seen   map[string]bool
	calls  int
}

func (c *stateguardClient) Complete(_ context.Context, req model.Request) (model.Response, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	kind := "correct"
	if c.calls < len(c.script) {
		kind = c.script[c.calls]
	}
	c.calls++
	ps, err := prompt.ParseStep(req.Messages)
	if err != nil {
		c.t.Fatalf("call %d: %v", c.calls, err)
	}
	s, err := c.e.DecodeState(ps.State)
	if err != nil {
		c.t.Fatal(err)
	}
	goal, _ := c.e.DecodeState(ps.Goal)
	defer func() { c.seen[stateKey(s)] = true }()
	idOf := func(a envs.Action) string {
		raw := string(c.e.RawMove(a))
		for _, o := range ps.Options {
			if string(o.Move) == raw {
				return o.ID
			}
		}
		c.t.Fatalf("call %d: move %s is not among the options", c.calls, raw)
		return ""
	}
	choice := func(id string) model.Response {
		return model.Response{Content: fmt.Sprintf(`{"action_id": %q, "ranked_action_ids": [%q], "predicted_next_state": {}}`, id, id), FinishReason: "stop"}
	}
	kind, arg, _ := strings.Cut(kind, ":")
	switch kind {
	case "correct":
		plan, err := envs.Solve(c.e, s, goal)
		if err != nil || len(plan) == 0 {
			c.t.Fatalf("call %d: no plan from %s: %v", c.calls, ps.State, err)
		}
		return choice(idOf(plan[0])), nil
	case "unknown":
		return choice("z9"), nil
	case "garbage":
		return model.Response{Content: "I would move the second block, I think.", FinishReason: "stop"}, nil
	case "move":
		for _, o := range ps.Options {
			if string(o.Move) == arg {
				return choice(o.ID), nil
			}
		}
		c.t.Fatalf("call %d: no option %s", c.calls, arg)
	case "backfirst":
		plan, err := envs.Solve(c.e, s, goal)
		if err != nil || len(plan) == 0 {
			c.t.Fatalf("call %d: no plan", c.calls)
		}
		for _, a := range c.e.Legal(s) {
			if st := c.e.Step(s, a); st.Valid && c.seen[stateKey(st.Next)] {
				back, right := idOf(a), idOf(plan[0])
				return model.Response{Content: fmt.Sprintf(`{"action_id": %q, "ranked_action_ids": [%q, %q]}`, back, back, right), FinishReason: "stop"}, nil
			}
		}
		c.t.Fatalf("call %d: no move leads back to a seen state", c.calls)
	case "back":
		for _, a := range c.e.Legal(s) {
			if st := c.e.Step(s, a); st.Valid && c.seen[stateKey(st.Next)] {
				return choice(idOf(a)), nil
			}
		}
		c.t.Fatalf("call %d: no move leads back to a seen state", c.calls)
	}
	c.t.Fatalf("unknown reply kind %q", kind)
	return model.Response{}, nil
}

type stateguardCase struct {
	Name        string   `json:"name"`
	Environment string   `json:"environment"`
	Script      []string `json:"script"`
	Success     bool     `json:"success"`
	Stop        string   `json:"stop"`
	// Calls is the expected number of calls, given as "L+n" (L: the
	// shortest path's length from the checkpoint) or as a number.
	Calls          string `json:"calls"`
	Rollbacks      int    `json:"rollbacks"`
	LoopRecoveries int    `json:"loop_recoveries"`
}

// derailTasksByEnv loads the first Derail-550 case of each environment,
// skipping when the published data is absent.
func derailTasksByEnv(t *testing.T) map[string]DerailTask {
	t.Helper()
	cases, err := envs.LoadDerail(shareddata.Require(t, "derail_550.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	problems, err := envs.LoadProblemsFile(shareddata.Require(t, "puzzlezoo_775.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	tasks, err := DerailTasks(cases, problems)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]DerailTask{}
	for _, task := range tasks {
		if _, ok := out[task.Case.Environment]; !ok {
			out[task.Case.Environment] = task
		}
	}
	return out
}

// TestStateGuardDifferential runs the scripted-reply cases of
// testdata/stateguard_differential.json (outcomes derived from the
// reference's StateGuardSearchAgent) on the first Derail case of each
// environment.
func TestStateGuardDifferential(t *testing.T) {
	b, err := os.ReadFile("testdata/stateguard_differential.json")
	if err != nil {
		t.Fatal(err)
	}
	var file struct {
		Cases []stateguardCase `json:"cases"`
	}
	if err := json.Unmarshal(b, &file); err != nil {
		t.Fatal(err)
	}
	tasks := derailTasksByEnv(t)
	// Tower of Hanoi has no Derail case: the inline hanoi3 case of
	// derail_test.go stands in (its 3-cycles of the small disk give a state
	// with two moves back into visited states).
	tasks[envs.HanoiName] = derailTask(t, legalWrong, afterWrong, afterTwo)
	for _, tc := range file.Cases {
		t.Run(tc.Environment+"/"+tc.Name, func(t *testing.T) {
			task, ok := tasks[tc.Environment]
			if !ok {
				t.Fatalf("no Derail case for %s", tc.Environment)
			}
			e, _ := task.Problem.Env()
			cp, err := CheckpointProblem(task, "")
			if err != nil {
				t.Fatal(err)
			}
			s, _ := cp.Initial()
			goal, _ := cp.Goal()
			path, err := envs.Solve(e, s, goal)
			if err != nil {
				t.Fatal(err)
			}
			want := expectedCalls(t, tc.Calls, len(path))
			client := &stateguardClient{t: t, e: e, script: tc.Script, seen: map[string]bool{}}
			rec, tr, err := RunDerail(context.Background(), Deps{Client: client, Sandbox: runnertest.FakeSandbox, Clock: runnertest.NewFakeClock()}, testOptions(), task, contract.CondStateGuard)
			if err != nil {
				t.Fatal(err)
			}
			if rec.StepAgent == nil {
				t.Fatal("no step agent figures")
			}
			got := []any{rec.Success, rec.StoppedReason, rec.Calls, rec.StepAgent.Steps, rec.StepAgent.Rollbacks, rec.StepAgent.LoopRecoveries, len(tr.Calls), rec.Method}
			if d := cmp.Diff([]any{tc.Success, tc.Stop, want, want, tc.Rollbacks, tc.LoopRecoveries, want, contract.CondStateGuard}, got); d != "" {
				t.Errorf("success/stop/calls/steps/rollbacks/loop recoveries/trace calls/method (-want +got), L=%d:\n%s", len(path), d)
			}
		})
	}
}

func expectedCalls(t *testing.T, s string, l int) int {
	t.Helper()
	var n int
	if rest, ok := strings.CutPrefix(s, "L+"); ok {
		if _, err := fmt.Sscan(rest, &n); err != nil {
			t.Fatalf("calls %q: %v", s, err)
		}
		return l + n
	}
	if _, err := fmt.Sscan(s, &n); err != nil {
		t.Fatalf("calls %q: %v", s, err)
	}
	return n
}

// TestStateGuardPromptAndLimits pins what a step prompt carries and the
// call and token bounds on the hanoi3 case of derail_test.go.
func TestStateGuardPromptAndLimits(t *testing.T) {
	task := derailTask(t, legalWrong, afterWrong, afterTwo)
	e, _ := task.Problem.Env()
	client := &stateguardClient{t: t, e: e, script: []string{"correct", "unknown"}, seen: map[string]bool{}}
	rec := func(opts Options) contract.Record {
		r, _, err := RunDerail(context.Background(), Deps{Client: client, Sandbox: runnertest.FakeSandbox, Clock: runnertest.NewFakeClock()}, opts, task, contract.CondStateGuard)
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	var reqs []model.Request
	spy := &spyClient{Client: client, reqs: &reqs}
	r, _, err := RunDerail(context.Background(), Deps{Client: spy, Sandbox: runnertest.FakeSandbox, Clock: runnertest.NewFakeClock()}, testOptions(), task, contract.CondStateGuard)
	if err != nil {
		t.Fatal(err)
	}
	// 5 moves from the checkpoint, one refused id.
	if !r.Success || r.Calls != 6 || len(reqs) != 6 {
		t.Fatalf("record %+v, %d requests", r, len(reqs))
	}
	second, err := prompt.ParseStep(reqs[1].Messages)
	if err != nil {
		t.Fatal(err)
	}
	third, err := prompt.ParseStep(reqs[2].Messages)
	if err != nil {
		t.Fatal(err)
	}
	got := []any{len(second.Options), second.Blocked, second.RetryReason, third.Blocked, third.RetryReason, reqs[0].MaxTokens}
	if d := cmp.Diff([]any{3, []string(nil), "", []string{"z9"}, retryUnknown, 2048}, got); d != "" {
		t.Errorf("options/blocked/reason of calls 2 and 3, max tokens (-want +got):\n%s", d)
	}
	// The call bound: max_steps x multiplier calls, all refused here.
	client.script, client.calls = []string{"unknown", "garbage", "garbage", "garbage", "garbage"}, 0
	opts := testOptions()
	opts.StepAgent.MaxRetries = 100
	opts.StepAgent.MaxStepsMultiplier = 1
	cp, _ := CheckpointProblem(task, "")
	client.script = make([]string, cp.MaxSteps)
	for i := range client.script {
		client.script[i] = "garbage"
	}
	got2 := rec(opts)
	if got2.Success || got2.StoppedReason != contract.StopMaxSteps || got2.Calls != cp.MaxSteps {
		t.Errorf("call bound: success %v stop %s calls %d, want max_steps after %d", got2.Success, got2.StoppedReason, got2.Calls, cp.MaxSteps)
	}
}

type spyClient struct {
	model.Client
	reqs *[]model.Request
}

func (s *spyClient) Complete(ctx context.Context, req model.Request) (model.Response, error) {
	*s.reqs = append(*s.reqs, req)
	return s.Client.Complete(ctx, req)
}
