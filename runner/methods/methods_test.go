package methods

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"repot.dev/repot-operator/contract"
	"repot.dev/repot-operator/contract/prompt"
	"repot.dev/repot-operator/contract/replay"
	"repot.dev/repot-operator/envs/envstest"
	"repot.dev/repot-operator/runner/concurrency"
	"repot.dev/repot-operator/runner/model"
	"repot.dev/repot-operator/runner/runnertest"
	"repot.dev/repot-operator/runner/sandbox"
)

var sol = envstest.Hanoi3Solution

func testOptions() Options {
	o := DefaultOptions()
	o.Model = "test-model"
	return o
}

// baseRecord is the record of a run of hanoi3 with the given calls, whose
// usage the scripted client fixes at 100/20/5/1 per call.
func baseRecord(method string, calls int) contract.Record {
	return contract.Record{
		Model: "test-model", ProblemID: "hanoi3", Environment: "tower_of_hanoi", Complexity: 3, Method: method,
		Calls: calls, PromptTokens: 100 * calls, CompletionTokens: 20 * calls, CachedTokens: 5 * calls, ReasoningTokens: calls,
	}
}

func TestRunProblem(t *testing.T) {
	badAt2 := runnertest.MovesCode(sol[0], "[1,0,1]", sol[2])                                                           // prefix 1 of 3 (333)
	longBad := runnertest.MovesCode(sol[0], sol[1], sol[2], "[3,0,1]", sol[4])                                          // prefix 3 of 5 (600)
	shortBad := runnertest.MovesCode(sol[0], "[2,0,2]", sol[2], sol[3], sol[4], sol[5], sol[6], sol[0], sol[1], sol[2]) // prefix 1 of 10 (100)
	full := runnertest.MovesCode(sol...)
	tests := []struct {
		name    string
		method  string
		budget  int
		script  []runnertest.Reply
		want    func() contract.Record
		froms   []int // replay "from" of each call
		outcome []string
	}{
		{"pot success", contract.MethodPoT, 1, []runnertest.Reply{{Code: full}}, func() contract.Record {
			r := baseRecord(contract.MethodPoT, 1)
			r.Success, r.StoppedReason, r.Route = true, contract.StopGoal, contract.RouteInitialSuccess
			r.InitialPlanLen, r.InitialPrefixPermille, r.InitialSuccess = 7, 1000, true
			return r
		}, []int{0}, []string{contract.StopGoal}},
		{"pot failure", contract.MethodPoT, 1, []runnertest.Reply{{Code: badAt2}}, func() contract.Record {
			r := baseRecord(contract.MethodPoT, 1)
			r.StoppedReason, r.Route = contract.StopInvalidMove, contract.RouteNoExtraCall
			r.InitialPlanLen, r.InitialPrefixPermille = 3, 333
			return r
		}, []int{0}, []string{contract.StopInvalidMove}},
		{"pot-retry rescued", contract.MethodPoTRetry, 1, []runnertest.Reply{{Code: badAt2}, {Code: full}}, func() contract.Record {
			r := baseRecord(contract.MethodPoTRetry, 2)
			r.Success, r.StoppedReason, r.Route = true, contract.StopGoal, contract.RouteFreshRetry
			r.InitialPlanLen, r.InitialPrefixPermille = 3, 333
			return r
		}, []int{0, 0}, []string{contract.StopInvalidMove, contract.StopGoal}},
		{"pot-retry keeps the longer prefix", contract.MethodPoTRetry, 1, []runnertest.Reply{{Code: longBad}, {Code: "CRASH"}}, func() contract.Record {
			r := baseRecord(contract.MethodPoTRetry, 2)
			r.StoppedReason, r.Route = contract.StopInvalidMove, contract.RouteFreshRetry
			r.InitialPlanLen, r.InitialPrefixPermille = 5, 600
			return r
		}, []int{0, 0}, []string{contract.StopInvalidMove, contract.StopProgramError}},
		{"pot-retry tie keeps the first", contract.MethodPoTRetry, 1, []runnertest.Reply{{Code: "REJECT"}, {Code: "print('hi')"}}, func() contract.Record {
			r := baseRecord(contract.MethodPoTRetry, 2)
			r.StoppedReason, r.Route = contract.StopSandboxRejected, contract.RouteFreshRetry
			return r
		}, []int{0, 0}, []string{contract.StopSandboxRejected, contract.StopNoPlan}},
		{"repot suffix repair", contract.MethodRePoT, 1, []runnertest.Reply{{Code: badAt2}, {Code: runnertest.MovesCode(sol[1:]...)}}, func() contract.Record {
			r := baseRecord(contract.MethodRePoT, 2)
			r.Success, r.StoppedReason, r.Route, r.RepairUsed = true, contract.StopGoal, contract.RouteSuffixRepair, true
			r.InitialPlanLen, r.InitialPrefixPermille = 3, 333
			return r
		}, []int{0, 1}, []string{contract.StopInvalidMove, contract.StopGoal}},
		{"repot repair fails", contract.MethodRePoT, 1, []runnertest.Reply{{Code: badAt2}, {Code: runnertest.MovesCode(sol[1], sol[1])}}, func() contract.Record {
			r := baseRecord(contract.MethodRePoT, 2)
			r.StoppedReason, r.Route, r.RepairUsed = contract.StopInvalidMove, contract.RouteSuffixRepair, true
			r.InitialPlanLen, r.InitialPrefixPermille = 3, 333
			return r
		}, []int{0, 1}, []string{contract.StopInvalidMove, contract.StopInvalidMove}},
		{"repot budget 2", contract.MethodRePoT, 2, []runnertest.Reply{{Code: badAt2}, {Code: runnertest.MovesCode(sol[1], sol[2], "[9,9,9]")}, {Code: runnertest.MovesCode(sol[3:]...)}}, func() contract.Record {
			r := baseRecord(contract.MethodRePoT, 3)
			r.Success, r.StoppedReason, r.Route, r.RepairUsed = true, contract.StopGoal, contract.RouteSuffixRepair, true
			r.InitialPlanLen, r.InitialPrefixPermille = 3, 333
			// A budget above 1 records the loop round by round: the
			// verified prefix grows 1, 3, 7 and the last plan is valid.
			r.Rounds = []contract.Round{{Prefix: 1, Tokens: 120}, {Prefix: 3, Tokens: 120}, {Valid: true, Prefix: 7, Accepts: 1, Tokens: 120}}
			r.LoopStop = contract.LoopAccepted
			return r
		}, []int{0, 1, 3}, []string{contract.StopInvalidMove, contract.StopFormatError, contract.StopGoal}},
		{"repot budget 0 is pot", contract.MethodRePoT, 0, []runnertest.Reply{{Code: badAt2}}, func() contract.Record {
			r := baseRecord(contract.MethodRePoT, 1)
			r.StoppedReason, r.Route = contract.StopInvalidMove, contract.RouteNoExtraCall
			r.InitialPlanLen, r.InitialPrefixPermille = 3, 333
			return r
		}, []int{0}, []string{contract.StopInvalidMove}},
		{"repot repair exceeds max steps", contract.MethodRePoT, 1, []runnertest.Reply{{Code: badAt2}, {Code: runnertest.MovesCode(sol[1], sol[2], sol[3], sol[4], sol[5], "[1,0,1]", "[1,1,0]", "[1,0,1]", "[1,1,0]", "[1,0,1]", "[1,1,0]", "[1,0,1]", "[1,1,0]", "[1,0,1]", "[1,1,0]")}}, func() contract.Record {
			r := baseRecord(contract.MethodRePoT, 2)
			r.StoppedReason, r.Route, r.RepairUsed = contract.StopMaxSteps, contract.RouteSuffixRepair, true
			r.InitialPlanLen, r.InitialPrefixPermille = 3, 333
			return r
		}, []int{0, 1}, []string{contract.StopInvalidMove, contract.StopMaxSteps}},
		{"repot-no-prefix", contract.MethodRePoTNoPrefix, 1, []runnertest.Reply{{Code: badAt2}, {Code: runnertest.MovesCode(sol[1:]...)}}, func() contract.Record {
			r := baseRecord(contract.MethodRePoTNoPrefix, 2)
			r.Success, r.StoppedReason, r.Route, r.RepairUsed = true, contract.StopGoal, contract.RouteSuffixRepair, true
			r.InitialPlanLen, r.InitialPrefixPermille = 3, 333
			return r
		}, []int{0, 1}, []string{contract.StopInvalidMove, contract.StopGoal}},
		{"repot-restart replays from the start", contract.MethodRePoTRestart, 1, []runnertest.Reply{{Code: badAt2}, {Code: full}}, func() contract.Record {
			r := baseRecord(contract.MethodRePoTRestart, 2)
			r.Success, r.StoppedReason, r.Route, r.RepairUsed = true, contract.StopGoal, contract.RouteSuffixRepair, true
			r.InitialPlanLen, r.InitialPrefixPermille = 3, 333
			return r
		}, []int{0, 0}, []string{contract.StopInvalidMove, contract.StopGoal}},
		{"repot-restart suffix alone fails", contract.MethodRePoTRestart, 1, []runnertest.Reply{{Code: badAt2}, {Code: runnertest.MovesCode(sol[1:]...)}}, func() contract.Record {
			r := baseRecord(contract.MethodRePoTRestart, 2)
			r.StoppedReason, r.Route, r.RepairUsed = contract.StopInvalidMove, contract.RouteSuffixRepair, true
			r.InitialPlanLen, r.InitialPrefixPermille = 3, 333
			return r
		}, []int{0, 0}, []string{contract.StopInvalidMove, contract.StopInvalidMove}},
		{"adaptive initial success", contract.MethodAdaptive, 1, []runnertest.Reply{{Code: full}}, func() contract.Record {
			r := baseRecord(contract.MethodAdaptive, 1)
			r.Success, r.StoppedReason, r.Route = true, contract.StopGoal, contract.RouteInitialSuccess
			r.InitialPlanLen, r.InitialPrefixPermille, r.InitialSuccess = 7, 1000, true
			return r
		}, []int{0}, []string{contract.StopGoal}},
		{"adaptive empty plan", contract.MethodAdaptive, 1, []runnertest.Reply{{Code: "CRASH"}, {Code: full}}, func() contract.Record {
			r := baseRecord(contract.MethodAdaptive, 2)
			r.Success, r.StoppedReason, r.Route = true, contract.StopGoal, contract.RouteFreshEmptyPlan
			return r
		}, []int{0, 0}, []string{contract.StopProgramError, contract.StopGoal}},
		{"adaptive short prefix", contract.MethodAdaptive, 1, []runnertest.Reply{{Code: shortBad}, {Code: badAt2}}, func() contract.Record {
			r := baseRecord(contract.MethodAdaptive, 2)
			r.StoppedReason, r.Route = contract.StopInvalidMove, contract.RouteFreshShortPrefix
			r.InitialPlanLen, r.InitialPrefixPermille = 10, 100
			return r
		}, []int{0, 0}, []string{contract.StopInvalidMove, contract.StopInvalidMove}},
		{"adaptive suffix repair", contract.MethodAdaptive, 3, []runnertest.Reply{{Code: longBad}, {Code: runnertest.MovesCode(sol[3:]...)}}, func() contract.Record {
			r := baseRecord(contract.MethodAdaptive, 2)
			r.Success, r.StoppedReason, r.Route, r.RepairUsed = true, contract.StopGoal, contract.RouteSuffixRepair, true
			r.InitialPlanLen, r.InitialPrefixPermille = 5, 600
			return r
		}, []int{0, 3}, []string{contract.StopInvalidMove, contract.StopGoal}},
		{"truncated reply", contract.MethodPoT, 1, []runnertest.Reply{{Code: "def solve(", Finish: "length"}}, func() contract.Record {
			r := baseRecord(contract.MethodPoT, 1)
			r.StoppedReason, r.Route = contract.StopTruncated, contract.RouteNoExtraCall
			return r
		}, []int{0}, []string{contract.StopTruncated}},
		{"unparseable moves", contract.MethodPoT, 1, []runnertest.Reply{{Code: "moves = [[1,0,2], [2,0"}}, func() contract.Record {
			r := baseRecord(contract.MethodPoT, 1)
			r.Route = contract.RouteNoExtraCall
			return r
		}, []int{0}, nil},
		{"infra error on first call", contract.MethodRePoT, 1, []runnertest.Reply{{Err: errInfra}}, func() contract.Record {
			r := baseRecord(contract.MethodRePoT, 0)
			r.StoppedReason, r.Route, r.InfraError, r.InfraRetries = contract.StopInfraError, contract.RouteNoExtraCall, errInfra.Error(), 3
			return r
		}, nil, nil},
		{"infra error on repair call", contract.MethodRePoT, 1, []runnertest.Reply{{Code: badAt2}, {Err: errInfra}}, func() contract.Record {
			r := baseRecord(contract.MethodRePoT, 1)
			r.StoppedReason, r.Route, r.RepairUsed, r.InfraError, r.InfraRetries = contract.StopInfraError, contract.RouteSuffixRepair, true, errInfra.Error(), 3
			r.InitialPlanLen, r.InitialPrefixPermille = 3, 333
			return r
		}, []int{0}, []string{contract.StopInvalidMove}},
		// A server's reply quoted in the error is cut to contract.MaxTextBytes
		// where the record is made.
		{"huge infra error is capped", contract.MethodPoT, 1, []runnertest.Reply{{Err: errHugeInfra}}, func() contract.Record {
			r := baseRecord(contract.MethodPoT, 0)
			r.StoppedReason, r.Route, r.InfraError, r.InfraRetries = contract.StopInfraError, contract.RouteNoExtraCall, contract.CapText(errHugeInfra.Error(), contract.MaxTextBytes), 3
			return r
		}, nil, nil},
		{"sandbox cannot start", contract.MethodPoT, 1, []runnertest.Reply{{Code: "INFRA"}}, func() contract.Record {
			r := baseRecord(contract.MethodPoT, 1)
			r.StoppedReason, r.Route, r.InfraError, r.InfraRetries = contract.StopInfraError, contract.RouteNoExtraCall, "sandbox: python3 not found", sandboxAttempts-1
			return r
		}, nil, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			client := &runnertest.ScriptedClient{Script: append([]runnertest.Reply{}, tc.script...)}
			opts := testOptions()
			opts.RepairBudget = tc.budget
			deps := Deps{Client: client, Sandbox: runnertest.FakeSandbox, Clock: runnertest.NewFakeClock(), Gate: concurrency.NewGate(4), Sleep: noSleep}
			rec, tr, err := RunProblem(context.Background(), deps, opts, envstest.Hanoi3(), tc.method)
			if err != nil {
				t.Fatalf("RunProblem: %v", err)
			}
			want := tc.want()
			if want.StoppedReason == "" {
				want.StoppedReason = rec.StoppedReason // checked separately below
				if rec.StoppedReason != contract.StopFormatError {
					t.Errorf("StoppedReason = %q, want %q", rec.StoppedReason, contract.StopFormatError)
				}
			}
			want.WallMillis = rec.WallMillis
			// The run starts at the fake clock's first reading (each reading
			// advances it by a second).
			want.StartedUnixMilli = runnertest.FakeClockStart.UnixMilli() + 1000
			if diff := cmp.Diff(want, rec); diff != "" {
				t.Errorf("record mismatch (-want +got):\n%s", diff)
			}
			if len(client.Script) != 0 {
				t.Errorf("%d scripted replies left unused", len(client.Script))
			}
			var froms []int
			var outcomes []string
			for _, c := range tr.Calls {
				if c.Replay != nil {
					froms = append(froms, c.Replay.From)
					outcomes = append(outcomes, c.Outcome)
				}
			}
			if diff := cmp.Diff(tc.froms, froms); diff != "" {
				t.Errorf("replay froms (-want +got):\n%s", diff)
			}
			if tc.outcome != nil {
				if diff := cmp.Diff(tc.outcome, outcomes); diff != "" {
					t.Errorf("call outcomes (-want +got):\n%s", diff)
				}
			}
			if tr.Success != rec.Success || tr.StoppedReason != rec.StoppedReason || tr.TokensIn != rec.PromptTokens || tr.TokensOut != rec.CompletionTokens || tr.Metadata.Route != rec.Route {
				t.Errorf("trace top level %+v disagrees with record %+v", tr, rec)
			}
		})
	}
}

// TestRunProblemPrompts checks which prompt each call gets: the first call
// the initial prompt, a fresh retry the attempt-2 prompt, a repair the
// checkpoint of the verified prefix.
func TestRunProblemPrompts(t *testing.T) {
	p := envstest.Hanoi3()
	badAt2 := runnertest.MovesCode(sol[0], "[1,0,1]", sol[2])
	e, _ := p.Env()
	init, _ := p.Initial()
	goal, _ := p.Goal()
	first := replay.Replay(e, p, init, goal, raws(sol[0], "[1,0,1]", sol[2]), p.MaxSteps)
	cp, err := prompt.NewCheckpoint(e, first.Prefix, first.State, first.Error)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		method string
		want   [][]string // messages' contents per call
	}{
		{contract.MethodPoTRetry, [][]string{contents(prompt.Initial(p)), contents(prompt.Fresh(p, 2))}},
		{contract.MethodRePoT, [][]string{contents(prompt.Initial(p)), contents(prompt.Repair(p, cp, prompt.Standard))}},
		{contract.MethodRePoTNoPrefix, [][]string{contents(prompt.Initial(p)), contents(prompt.Repair(p, cp, prompt.NoPrefix))}},
		{contract.MethodRePoTRestart, [][]string{contents(prompt.Initial(p)), contents(prompt.Repair(p, cp, prompt.Restart))}},
	}
	for _, tc := range tests {
		client := &runnertest.ScriptedClient{Script: []runnertest.Reply{{Code: badAt2}, {Code: "CRASH"}}}
		opts := testOptions()
		opts.Temperature, opts.MaxTokens = 0.5, 123
		if _, _, err := RunProblem(context.Background(), Deps{Client: client, Sandbox: runnertest.FakeSandbox}, opts, p, tc.method); err != nil {
			t.Fatal(err)
		}
		var got [][]string
		for _, r := range client.Reqs {
			got = append(got, contents(r.Messages))
			if r.Temperature != 0.5 || r.MaxTokens != 123 {
				t.Errorf("%s: request temperature %v max tokens %d", tc.method, r.Temperature, r.MaxTokens)
			}
		}
		if diff := cmp.Diff(tc.want, got); diff != "" {
			t.Errorf("%s: prompts (-want +got):\n%s", tc.method, diff)
		}
	}
}

func contents(msgs []contract.Message) []string {
	var out []string
	for _, m := range msgs {
		out = append(out, m.Role+": "+m.Content)
	}
	return out
}

// cancelAfter cancels the run's context once its n-th call returned.
type cancelAfter struct {
	model.Client
	n      int
	cancel func()
}

func (c *cancelAfter) Complete(ctx context.Context, req model.Request) (model.Response, error) {
	resp, err := c.Client.Complete(ctx, req)
	if c.n--; c.n == 0 {
		c.cancel()
	}
	return resp, err
}

// A run stopped after some of its calls returned gives an aborted attempt
// with their calls and tokens (Derail conditions named as their records);
// one stopped before any call returned gives no record.
func TestRunAbortedAttempt(t *testing.T) {
	bad := runnertest.MovesCode(sol[0], "[1,0,1]", sol[2])
	start := runnertest.FakeClockStart.Add(time.Second).UnixMilli() // the fake clock's first reading
	aborted := func(method string, calls int) contract.Record {
		r := baseRecord(method, calls)
		r.Aborted, r.StartedUnixMilli, r.WallMillis = true, start, 1000
		return r
	}
	for _, tc := range []struct {
		name   string
		method string
		after  int // calls returned before the stop; 0: stopped before the first
		want   contract.Record
	}{
		{"pot-retry after its first call", contract.MethodPoTRetry, 1, aborted(contract.MethodPoTRetry, 1)},
		{"repot after its first call", contract.MethodRePoT, 1, aborted(contract.MethodRePoT, 1)},
		{"stopped before any call returned", contract.MethodPoTRetry, 0, contract.Record{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			if tc.after == 0 {
				cancel()
			}
			client := &cancelAfter{Client: &runnertest.ScriptedClient{Script: []runnertest.Reply{{Code: bad}, {Code: bad}}}, n: tc.after, cancel: cancel}
			deps := Deps{Client: client, Sandbox: runnertest.FakeSandbox, Clock: runnertest.NewFakeClock(), Sleep: noSleep}
			got, _, err := RunProblem(ctx, deps, testOptions(), envstest.Hanoi3(), tc.method)
			if !errors.Is(err, ErrAborted) {
				t.Errorf("err = %v, want ErrAborted", err)
			}
			if d := cmp.Diff(tc.want, got); d != "" {
				t.Errorf("record (-want +got):\n%s", d)
			}
		})
	}
}

func TestRunProblemAborted(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	client := &runnertest.ScriptedClient{Script: []runnertest.Reply{{Code: "x"}}}
	_, _, err := RunProblem(ctx, Deps{Client: client, Sandbox: runnertest.FakeSandbox}, testOptions(), envstest.Hanoi3(), contract.MethodPoT)
	if !errors.Is(err, ErrAborted) {
		t.Errorf("err = %v, want ErrAborted", err)
	}
}

func TestRunProblemUnknownMethod(t *testing.T) {
	_, _, err := RunProblem(context.Background(), Deps{}, testOptions(), envstest.Hanoi3(), "magic")
	if err == nil || !strings.Contains(err.Error(), "unknown method") {
		t.Errorf("err = %v, want unknown method", err)
	}
}

func TestAdaptiveRoute(t *testing.T) {
	tests := []struct {
		prefix, plan int
		goal         bool
		want         string
	}{
		{7, 7, true, contract.RouteInitialSuccess},
		{0, 0, false, contract.RouteFreshEmptyPlan},
		{0, 5, false, contract.RouteFreshShortPrefix},
		{1, 10, false, contract.RouteFreshShortPrefix},
		{3, 20, false, contract.RouteSuffixRepair},     // exactly 150: not below
		{2, 13, false, contract.RouteSuffixRepair},     // 153.8
		{2, 14, false, contract.RouteFreshShortPrefix}, // 142.9
	}
	for _, tc := range tests {
		r := replay.Result{PlanLen: tc.plan, ReachedGoal: tc.goal}
		for i := 0; i < tc.prefix; i++ {
			r.Prefix = append(r.Prefix, nil)
		}
		if got := AdaptiveRoute(r, 150); got != tc.want {
			t.Errorf("AdaptiveRoute(%d/%d, goal %v) = %s, want %s", tc.prefix, tc.plan, tc.goal, got, tc.want)
		}
	}
}

func noSleep(ctx context.Context, _ time.Duration) error { return ctx.Err() }

// TestSandboxFailureRetried: a sandbox that fails to start once is retried,
// and the retry shows as an infra retry of a normal record.
func TestSandboxFailureRetried(t *testing.T) {
	fails := 1
	var waits []time.Duration
	sb := sandbox.Func(func(ctx context.Context, code string) (sandbox.Result, error) {
		if fails > 0 {
			fails--
			return sandbox.Result{}, errors.New("fork: resource temporarily unavailable")
		}
		return runnertest.FakeSandbox(ctx, code)
	})
	sleep := func(ctx context.Context, d time.Duration) error { waits = append(waits, d); return nil }
	client := &runnertest.ScriptedClient{Script: []runnertest.Reply{{Code: runnertest.MovesCode(sol...)}}}
	rec, _, err := RunProblem(context.Background(), Deps{Client: client, Sandbox: sb, Sleep: sleep}, testOptions(), envstest.Hanoi3(), contract.MethodPoT)
	if err != nil {
		t.Fatal(err)
	}
	if !rec.Success || rec.InfraError != "" || rec.InfraRetries != 1 {
		t.Errorf("record %+v, want success with 1 infra retry", rec)
	}
	if diff := cmp.Diff([]time.Duration{sandboxBackoff}, waits); diff != "" {
		t.Errorf("waits (-want +got):\n%s", diff)
	}
}

// TestRunProblemWithoutStepLimit: a problem file without max_steps (0) puts
// no limit on the plan; it used to stop every plan before its first move.
func TestRunProblemWithoutStepLimit(t *testing.T) {
	p := envstest.Hanoi3()
	p.MaxSteps = 0
	for _, tc := range []struct {
		method string
		script []runnertest.Reply
	}{
		{contract.MethodPoT, []runnertest.Reply{{Code: runnertest.MovesCode(sol...)}}},
		{contract.MethodRePoT, []runnertest.Reply{{Code: runnertest.MovesCode(sol[0], "[1,0,1]")}, {Code: runnertest.MovesCode(sol[1:]...)}}},
	} {
		client := &runnertest.ScriptedClient{Script: tc.script}
		rec, _, err := RunProblem(context.Background(), Deps{Client: client, Sandbox: runnertest.FakeSandbox}, testOptions(), p, tc.method)
		if err != nil {
			t.Fatal(err)
		}
		if !rec.Success || rec.StoppedReason != contract.StopGoal {
			t.Errorf("%s: success %v stopped %q, want success at the goal", tc.method, rec.Success, rec.StoppedReason)
		}
	}
}

// TestEveryMethodHasABehaviour: RunProblem admits exactly the contract's
// methods and runs each one's registered behaviour, so every method in
// contract.MethodSpecs must have registered one (a method without would
// panic on its first run).
func TestEveryMethodHasABehaviour(t *testing.T) {
	var got []string
	for m := range behaviours {
		got = append(got, m)
	}
	if diff := cmp.Diff(contract.Methods, got, cmpopts.SortSlices(func(a, b string) bool { return a < b })); diff != "" {
		t.Errorf("the registered behaviours differ from contract.Methods (-contract +registered):\n%s", diff)
	}
}

// TestRegisterRefuses: a name registered twice, one the contract does not
// list, and a behaviour that does not match the contract's loop panic.
func TestRegisterRefuses(t *testing.T) {
	saved := behaviours
	t.Cleanup(func() { behaviours = saved })
	step := func(context.Context, *run, string, replay.Result) (contract.Record, contract.Trace, error) {
		return contract.Record{}, contract.Trace{}, nil
	}
	own := func(context.Context, *run, string) (contract.Record, contract.Trace, error) {
		return contract.Record{}, contract.Trace{}, nil
	}
	for _, tc := range []struct {
		name    string
		already map[string]behaviour
		method  string
		b       behaviour
		want    string
	}{
		{"twice", map[string]behaviour{contract.MethodPoT: {afterFailedPlan: step}}, contract.MethodPoT, behaviour{afterFailedPlan: step}, "registered twice"},
		{"unknown", map[string]behaviour{}, "no-such-method", behaviour{afterFailedPlan: step}, "not in contract.MethodSpecs"},
		{"own loop for a PoT method", map[string]behaviour{}, contract.MethodPoT, behaviour{own: own}, "does not match its loop"},
		{"a step for an own-loop method", map[string]behaviour{}, contract.MethodCoT, behaviour{afterFailedPlan: step}, "does not match its loop"},
		{"both", map[string]behaviour{}, contract.MethodCoT, behaviour{own: own, afterFailedPlan: step}, "does not match its loop"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			behaviours = tc.already
			defer func() {
				r := recover()
				if msg, _ := r.(string); !strings.Contains(msg, tc.want) {
					t.Errorf("register panicked with %v; want a message containing %q", r, tc.want)
				}
			}()
			register(tc.method, tc.b)
		})
	}
	behaviours = map[string]behaviour{}
	register(contract.MethodPoT, behaviour{afterFailedPlan: step})
	if !hasBehaviour(contract.MethodPoT) {
		t.Error("a valid registration was not recorded")
	}
}

func raws(moves ...string) []json.RawMessage {
	out := make([]json.RawMessage, len(moves))
	for i, m := range moves {
		out[i] = json.RawMessage(m)
	}
	return out
}
