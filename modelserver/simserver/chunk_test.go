package simserver

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"repot.dev/repot-operator/contract"
	"repot.dev/repot-operator/contract/program"
	"repot.dev/repot-operator/contract/prompt"
	"repot.dev/repot-operator/envs"
	"repot.dev/repot-operator/envs/envstest"
	"repot.dev/repot-operator/runner/methods"
	"repot.dev/repot-operator/runner/model"
	"repot.dev/repot-operator/runner/sandbox"
)

// chunkClient answers VEX proposal prompts in process with decideChunk
// (and fails any other prompt).
type chunkClient struct {
	t       *testing.T
	profile *Profile
	seed    int64
}

func (c chunkClient) Complete(_ context.Context, req model.Request) (model.Response, error) {
	_, reply, ok := decideChunk(c.profile, c.seed, Call{Messages: req.Messages, MaxTokens: req.MaxTokens})
	if !ok {
		c.t.Fatalf("not a proposal prompt: %q", req.Messages[len(req.Messages)-1].Content)
	}
	return model.Response{Content: reply.Content, FinishReason: reply.FinishReason}, nil
}

// planSandbox "runs" a rendered program by printing the moves of its plan
// literal (the simulation's programs print their plan).
var planSandbox = sandbox.Func(func(_ context.Context, code string) (sandbox.Result, error) {
	moves, err := program.ParseMoves("", strings.Replace(code, "plan = ", "moves = ", 1))
	if err != nil {
		return sandbox.Result{Failure: "crash", Stderr: err.Error(), ExitCode: 1}, nil
	}
	b, _ := json.Marshal(moves)
	return sandbox.Result{Stdout: "moves = " + string(b) + "\n"}, nil
})

// problemsFor builds a few problems of each environment, from the solver.
func chunkProblems(t *testing.T) []*envs.Problem {
	t.Helper()
	ps := []*envs.Problem{envstest.Hanoi3()}
	h5 := envstest.Hanoi3()
	h5.ProblemID, h5.Complexity, h5.MaxSteps = "hanoi5", 5, 62
	h5.InitialState = json.RawMessage(`{"peg_names":["A","B","C"],"pegs":{"A":[5,4,3,2,1],"B":[],"C":[]}}`)
	h5.GoalState = json.RawMessage(`{"peg_names":["A","B","C"],"pegs":{"A":[],"B":[],"C":[5,4,3,2,1]}}`)
	ps = append(ps, h5)
	ps = append(ps, &envs.Problem{ProblemID: "blocks4", Environment: "blocksworld", Complexity: 4, MaxSteps: 40,
		InitialState: json.RawMessage(`{"blocks":["A","B","C","D"],"stacks":[["A","B","C","D"],[],[]]}`),
		GoalState:    json.RawMessage(`{"blocks":["A","B","C","D"],"stacks":[["D","C","B","A"],[],[]]}`)})
	return ps
}

func TestVEXAgainstSimulation(t *testing.T) {
	prof, err := LookupProfile("medium")
	if err != nil {
		t.Fatal(err)
	}
	rollbacks, successes, runs := 0, 0, 0
	for _, p := range chunkProblems(t) {
		for _, proposer := range []string{methods.ProposerJSON, methods.ProposerCode} {
			for seed := int64(1); seed <= 6; seed++ {
				opts := methods.DefaultOptions()
				opts.Model = "sim"
				opts.VEX.ChunkSize = map[string]int{p.Environment: 4}
				opts.VEX.Proposer = map[string]string{p.Environment: proposer}
				deps := methods.Deps{Client: chunkClient{t: t, profile: prof, seed: seed}, Sandbox: planSandbox}
				rec, _, err := methods.RunProblem(context.Background(), deps, opts, p, contract.MethodVEX)
				if err != nil {
					t.Fatal(err)
				}
				runs++
				rollbacks += rec.VEX.Rollbacks
				if rec.Success {
					successes++
				}
				if rec.InfraError != "" {
					t.Fatalf("%s %s: %s", p.ProblemID, proposer, rec.InfraError)
				}
			}
		}
	}
	if successes == 0 || rollbacks == 0 {
		t.Fatalf("%d of %d runs reached the goal with %d rollbacks in all; want some of each", successes, runs, rollbacks)
	}
	t.Logf("%d of %d runs reached the goal, %d rollbacks", successes, runs, rollbacks)
}

func TestDecideChunk(t *testing.T) {
	p := envstest.Hanoi3()
	e, _ := p.Env()
	init, _ := p.Initial()
	bad := json.RawMessage(`[2,0,1]`) // disk 2 is under disk 1
	c, err := prompt.NewChunk(e, prompt.ChunkJSON, nil, init, []prompt.BlockedMove{{Move: bad, Message: "no"}}, "", 3, false)
	if err != nil {
		t.Fatal(err)
	}
	msgs := prompt.ChunkPrompt(p, c)
	weak, _ := LookupProfile("weak")
	sawWrong, sawRight := false, false
	for seed := int64(0); seed < 200; seed++ {
		d, reply, ok := decideChunk(weak, seed, Call{Messages: msgs})
		if !ok {
			t.Fatal("not answered")
		}
		moves, err := program.ChunkActions(reply.Content)
		if err != nil {
			t.Fatalf("seed %d: %v in %q", seed, err, reply.Content)
		}
		if len(moves) != 3 {
			t.Fatalf("seed %d: %d moves, want 3", seed, len(moves))
		}
		switch d.Mode {
		case ModeCorrect:
			sawRight = true
		case ModeWrongMove:
			sawWrong = true
			if d.Depth == 0 && string(moves[0]) == string(bad) {
				t.Fatalf("seed %d: proposed the rejected move again", seed)
			}
		default:
			t.Fatalf("seed %d: mode %s", seed, d.Mode)
		}
	}
	if !sawWrong || !sawRight {
		t.Errorf("right %v wrong %v: want both over 200 seeds", sawRight, sawWrong)
	}
	// Other prompts are not the chunk decider's.
	if _, _, ok := decideChunk(weak, 1, Call{Messages: prompt.Initial(p)}); ok {
		t.Error("answered a first-call prompt")
	}
}

// TestVEXOverHTTP runs vex against the server itself: proposal prompts
// reach the chunk decider through the chat endpoint.
func TestVEXOverHTTP(t *testing.T) {
	s, hs := startServer(t, Options{Profile: Profiles["medium"], Seed: 3})
	c := client(t, hs.URL, s.ModelName())
	for _, p := range chunkProblems(t) {
		for _, proposer := range []string{methods.ProposerJSON, methods.ProposerCode} {
			opts := methods.DefaultOptions()
			opts.Model = s.ModelName()
			opts.VEX.ChunkSize = map[string]int{p.Environment: 3}
			opts.VEX.Proposer = map[string]string{p.Environment: proposer}
			rec, tr, err := methods.RunProblem(context.Background(), methods.Deps{Client: c, Sandbox: planSandbox}, opts, p, contract.MethodVEX)
			if err != nil {
				t.Fatal(err)
			}
			if rec.InfraError != "" || rec.VEX == nil || rec.VEX.Committed == 0 {
				t.Fatalf("%s %s: %+v", p.ProblemID, proposer, rec)
			}
			for _, ct := range tr.Calls {
				if ct.Outcome == contract.StopNoPlan || ct.Outcome == contract.StopTruncated {
					t.Errorf("%s %s call %d: %s: %q", p.ProblemID, proposer, ct.Index, ct.Outcome, ct.Completion)
				}
			}
		}
	}
}
