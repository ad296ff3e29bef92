package simserver

import (
	"context"
	"encoding/json"
	"testing"

	"repot.dev/repot-operator/contract"
	"repot.dev/repot-operator/contract/prompt"
	"repot.dev/repot-operator/envs"
	"repot.dev/repot-operator/envs/shareddata"
	"repot.dev/repot-operator/runner/methods"
	"repot.dev/repot-operator/runner/runnertest"
)

// TestDecideStepAnswers: a step prompt gets a readable choice naming a
// shortest-path move most of the time for a strong profile, less often for
// a weak one, and some wrong answers; other prompts are not step prompts.
func TestDecideStepAnswers(t *testing.T) {
	p := &envs.Problem{Environment: envs.BlocksName, NaturalLanguagePrompt: "Stack the blocks.",
		InitialState: json.RawMessage(`{"blocks":["A","B","C"],"stacks":[["C"],["B"],["A"]]}`),
		GoalState:    json.RawMessage(`{"blocks":["A","B","C"],"stacks":[[],[],["A","B","C"]]}`), MaxSteps: 10}
	e, _ := p.Env()
	s, _ := p.Initial()
	var opts []prompt.StepOption
	right := ""
	for i, a := range e.Legal(s) {
		id := "a" + string(rune('0'+i))
		opts = append(opts, prompt.StepOption{ID: id, Move: e.RawMove(a)})
		if b, _ := json.Marshal(a); string(b) == `{"block":"B","from":1,"to":2,"type":"move"}` {
			right = id
		}
	}
	if right == "" {
		t.Fatal("no right option")
	}
	if _, _, ok := decideStep(Profiles["strong"], 1, Call{Messages: prompt.Initial(p)}); ok {
		t.Error("an initial prompt answered as a step prompt")
	}
	rate := func(profile string) (float64, map[Mode]int) {
		hits, modes := 0, map[Mode]int{}
		const n = 300
		for i := 0; i < n; i++ {
			msgs := prompt.StepPrompt(p, prompt.Step{State: p.InitialState, Options: opts, Blocked: []string{"a5"}, Message: string(rune('a' + i%26)), RetryReason: "x" + string(rune('a'+i/26))})
			d, reply, ok := decideStep(Profiles[profile], 7, Call{Messages: msgs})
			if !ok {
				t.Fatal("a step prompt was not answered")
			}
			modes[d.Mode]++
			c, err := prompt.ParseStepChoice(reply.Content)
			if (err != nil) != (d.Mode == ModeProse) {
				t.Fatalf("mode %s, reply %q: %v", d.Mode, reply.Content, err)
			}
			if err == nil && c.ActionID == right {
				hits++
			}
		}
		return float64(hits) / n, modes
	}
	strong, modes := rate("strong")
	weak, _ := rate("weak")
	if strong < 0.85 || weak >= strong-0.1 || weak < 0.5 {
		t.Errorf("right-id rates: strong %.2f weak %.2f", strong, weak)
	}
	if modes[ModeWrongMove] == 0 || modes[ModeCorrect] == 0 {
		t.Errorf("modes %v", modes)
	}
}

// TestStateGuardAgainstSimServer runs the stateguard-rollback condition
// through the HTTP sim-server on Derail cases of the three environments:
// some succeed, some runs roll back.
func TestStateGuardAgainstSimServer(t *testing.T) {
	cases, err := envs.LoadDerail(shareddata.Require(t, "derail_550.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	problems, err := envs.LoadProblemsFile(shareddata.Require(t, "puzzlezoo_775.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	tasks, err := methods.DerailTasks(cases, problems)
	if err != nil {
		t.Fatal(err)
	}
	// One case per environment and complexity, up to four per
	// environment (cases of one problem family often share their prompts).
	perEnv, seen := map[string]int{}, map[string]bool{}
	var picked []methods.DerailTask
	for _, task := range tasks {
		key := task.Case.Environment + "/" + string(rune('0'+task.Case.Complexity))
		if perEnv[task.Case.Environment] < 4 && !seen[key] {
			perEnv[task.Case.Environment]++
			seen[key] = true
			picked = append(picked, task)
		}
	}
	_, hs := startServer(t, Options{Profile: Profiles["medium"], Seed: 3})
	c := client(t, hs.URL, "sim-medium")
	successes, rollbacks, loops := 0, 0, 0
	for _, task := range picked {
		opts := methods.DefaultOptions()
		opts.Model = "sim-medium"
		rec, _, err := methods.RunDerail(context.Background(), methods.Deps{Client: c, Sandbox: runnertest.FakeSandbox}, opts, task, contract.CondStateGuard)
		if err != nil {
			t.Fatal(err)
		}
		if rec.StepAgent == nil || rec.InfraError != "" {
			t.Fatalf("%s: record %+v", task.Case.CaseID, rec)
		}
		if rec.Success {
			successes++
		}
		rollbacks += min(rec.StepAgent.Rollbacks, 1)
		loops += rec.StepAgent.LoopRecoveries
		t.Logf("%s %s: success %v stop %s calls %d %+v", task.Case.CaseID, task.Case.Environment, rec.Success, rec.StoppedReason, rec.Calls, *rec.StepAgent)
	}
	if successes == 0 || rollbacks == 0 {
		t.Errorf("%d runs: %d succeeded, %d rolled back", len(picked), successes, rollbacks)
	}
}
