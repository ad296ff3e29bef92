package methods

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"repot.dev/repot-operator/contract"
	"repot.dev/repot-operator/contract/prompt"
	"repot.dev/repot-operator/envs"
	"repot.dev/repot-operator/envs/envstest"
	"repot.dev/repot-operator/runner/runnertest"
)

// hanoi3WithOracle is hanoi3 with its oracle plan as normalized actions.
func hanoi3WithOracle(t *testing.T) *envs.Problem {
	t.Helper()
	p := envstest.Hanoi3()
	e, _ := p.Env()
	s, _ := p.Initial()
	for _, m := range sol {
		a, err := e.Normalize(p, s, json.RawMessage(m))
		if err != nil {
			t.Fatal(err)
		}
		b, _ := a.MarshalJSON()
		p.OracleSolution = append(p.OracleSolution, b)
		s = e.Step(s, a).Next
	}
	return p
}

const (
	afterTwo     = `{"peg_names":["A","B","C"],"pegs":{"A":[3],"B":[2],"C":[1]}}`
	afterWrong   = `{"peg_names":["A","B","C"],"pegs":{"A":[3,1],"B":[2],"C":[]}}`
	legalWrong   = `{"disk":1,"from":"C","to":"A","type":"move"}`
	invalidMove  = `{"disk":3,"from":"A","to":"C","type":"move"}`
	probeAction  = `{"type":"invalid_recovery_probe"}`
	derailCaseID = "derail_test"
)

func derailTask(t *testing.T, injected, injectedState, lastValid string) DerailTask {
	return DerailTask{
		Case: envs.DerailCase{
			CaseID: derailCaseID, Complexity: 3, Environment: envs.HanoiName, ProblemID: "hanoi3",
			InjectionStep: 2, InjectionType: "legal_wrong_action",
			InjectedAction: json.RawMessage(injected), InjectedState: json.RawMessage(injectedState), LastValidState: json.RawMessage(lastValid),
		},
		Problem: hanoi3WithOracle(t),
	}
}

// rest is the oracle suffix from the checkpoint (after two moves).
var rest = sol[2:]

func jsonReply(moves ...string) string { return "[" + strings.Join(moves, ", ") + "]" }

func TestCheckpointProblem(t *testing.T) {
	task := derailTask(t, legalWrong, afterWrong, afterTwo)
	for _, st := range []string{"", contract.StatementPaper, contract.StatementFull} {
		cp, err := CheckpointProblem(task, st)
		if err != nil {
			t.Fatal(err)
		}
		if string(cp.InitialState) != afterTwo || cp.MinSteps != 5 || cp.MaxSteps != max(task.Problem.MaxSteps, 15) || len(cp.OracleSolution) != 5 {
			t.Errorf("%q: checkpoint problem %+v", st, cp)
		}
		msgs := prompt.Initial(cp)
		shows := strings.Contains(msgs[1].Content, afterTwo)
		if paper := st != contract.StatementFull; paper == shows || cp.HideInitialState != paper {
			t.Errorf("%q: the first prompt shows the checkpoint state: %v (hide %v)\n%s", st, shows, cp.HideInitialState, msgs[1].Content)
		}
		if st == contract.StatementFull && !strings.Contains(msgs[1].Content, task.Problem.NaturalLanguagePrompt) {
			t.Errorf("full statement lacks the source statement")
		}
	}
	if _, err := CheckpointProblem(task, "short"); err == nil {
		t.Error("unknown statement accepted")
	}
}

// TestRecoveryPromptInformation pins what each prompted condition's prompt
// carries.
func TestRecoveryPromptInformation(t *testing.T) {
	task := derailTask(t, legalWrong, afterWrong, afterTwo)
	e, _ := task.Problem.Env()
	prefix, cp, err := derailPrefix(e, task)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		cond                       string
		flagged, checkpoint, legal bool
	}{
		{contract.CondNoFeedback, false, false, false},
		{contract.CondErrorOnly, true, false, false},
		{contract.CondStateFeedback, true, true, false},
		{contract.CondStateLegal, true, true, true},
	}
	for _, tc := range tests {
		msgs := prompt.RecoveryPrompt(task.Problem, recoveryFor(e, task, prefix, cp, tc.cond))
		p, err := prompt.ParseRecovery(msgs)
		if err != nil {
			t.Fatal(err)
		}
		got := []bool{p.Flagged, p.Checkpoint != nil, p.Legal != nil}
		if d := cmp.Diff([]bool{tc.flagged, tc.checkpoint, tc.legal}, got); d != "" {
			t.Errorf("%s: flagged/checkpoint/legal (-want +got):\n%s", tc.cond, d)
		}
		if len(p.Trace) != 2 || string(p.Next) != "[1,2,0]" || string(p.Current) != afterWrong || !strings.Contains(msgs[1].Content, task.Problem.NaturalLanguagePrompt) {
			t.Errorf("%s: trace %s next %s current %s", tc.cond, p.Trace, p.Next, p.Current)
		}
		if tc.checkpoint && string(p.Checkpoint) != afterTwo {
			t.Errorf("%s: checkpoint %s", tc.cond, p.Checkpoint)
		}
		if tc.legal && len(p.Legal) != 3 {
			t.Errorf("%s: legal %s", tc.cond, p.Legal)
		}
	}
}

func TestJudgeReply(t *testing.T) {
	p := hanoi3WithOracle(t)
	e, _ := p.Env()
	cp, _ := e.DecodeState([]byte(afterTwo))
	goal, _ := p.Goal()
	good := jsonReply(rest...)
	bad := jsonReply(rest[1:]...)
	tests := []struct {
		name       string
		reply      string
		success    bool
		candidates int
		chosen     int
		stop       string
	}{
		{"one correct list", good, true, 1, 0, contract.StopGoal},
		{"no list", "I cannot tell.", false, 0, -1, ""},
		{"an invalid list", bad, false, 1, 0, contract.StopInvalidMove},
		{"dedupe: JSON, span and tuple forms count once", good + "\nFinal answer: " + strings.ReplaceAll(strings.ReplaceAll(good, "[1", "(1"), "]", ")") + "]", true, 1, 0, contract.StopGoal},
		{"dedupe: pegs as letters normalise alike", good + " or " + `[[1,"C","B"],[3,"A","C"],[1,"B","A"],[2,"B","C"],[1,"A","C"]]`, true, 1, 0, contract.StopGoal},
		{"object moves keep their extra keys", `[{"disk":1,"from":"C","to":"B","type":"move","why":"x"},{"disk":3,"from":"A","to":"C","type":"move"},{"disk":1,"from":"B","to":"A","type":"move"},{"disk":2,"from":"B","to":"C","type":"move"},{"disk":1,"from":"A","to":"C","type":"move"}]` + " " + good, true, 2, 1, contract.StopGoal},
		{"any candidate succeeds; the final one is chosen when it fails? no: a goal one", good + " Final answer: " + bad, true, 2, 0, contract.StopGoal},
		{"the last to start is final: chosen among failures", bad + " and " + jsonReply(rest[:2]...), false, 2, 1, contract.StopPlanExhausted},
		{"final marker makes a later-starting list final too", "draft " + jsonReply(rest[:2]...) + " Therefore " + bad + " " + jsonReply(rest[:3]...), false, 3, 2, contract.StopPlanExhausted},
		{"first final goal candidate wins over an earlier goal one", good + " Final: " + jsonReply(append(append([]string{}, rest...), "[1,2,0]", "[1,0,2]")...) + " " + `[[1,"C","B"],[3,"A","C"],[1,"B","A"],[2,"B","C"],[1,"A","C"]]`, true, 2, 0, contract.StopGoal},
		{"a move past the goal fails", jsonReply(append(append([]string{}, rest...), "[1,2,0]")...), false, 1, 0, contract.StopPastGoal},
		{"past the goal and back is still a success", jsonReply(append(append([]string{}, rest...), "[1,2,0]", "[1,0,2]")...), true, 1, 0, contract.StopGoal},
		{"re-emitting the injected move is legal at the checkpoint", jsonReply(append([]string{"[1,2,0]", "[1,0,2]"}, rest...)...), true, 1, 0, contract.StopGoal},
		{"an unreadable move", `[["x"], [1,2,1]]`, false, 1, 0, contract.StopFormatError},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			j := JudgeReply(e, p, cp, goal, tc.reply)
			stop := ""
			if j.Chosen >= 0 {
				stop = j.Candidates[j.Chosen].StopReason
			}
			got := []any{j.Success, len(j.Candidates), j.Chosen, stop}
			if d := cmp.Diff([]any{tc.success, tc.candidates, tc.chosen, tc.stop}, got); d != "" {
				t.Errorf("success/candidates/chosen/stop (-want +got):\n%s\ncandidates %+v", d, j.Candidates)
			}
		})
	}
}

func TestRunDerailConditions(t *testing.T) {
	legal := derailTask(t, legalWrong, afterWrong, afterTwo)
	invalid := derailTask(t, invalidMove, afterTwo, afterTwo)
	rawReply := func(s string) runnertest.Reply { return runnertest.Reply{Code: s} }
	tests := []struct {
		name      string
		task      DerailTask
		cond      string
		statement string
		script    []runnertest.Reply
		success   bool
		stop      string
		calls     int
		firstHas  string
		firstLack string
	}{
		{"prompted, rolled back", legal, contract.CondStateLegal, "", []runnertest.Reply{rawReply(jsonReply(rest...))}, true, contract.StopGoal, 1, "Legal moves from the checkpoint", ""},
		{"prompted no_feedback, answered from the checkpoint", legal, contract.CondNoFeedback, "", []runnertest.Reply{rawReply(jsonReply(rest...))}, true, contract.StopGoal, 1, "Continue from the trace's current state", "flagged"},
		{"prompted, invalid injection: current state is the checkpoint", invalid, contract.CondErrorOnly, "", []runnertest.Reply{rawReply(jsonReply(rest...))}, true, contract.StopGoal, 1, "flagged as wrong", "Checkpoint to roll back"},
		{"prompted, continued from the derailed state without undoing", legal, contract.CondErrorOnly, "", []runnertest.Reply{rawReply(jsonReply("[1,0,2]", "[2,1,2]", "[1,2,1]"))}, false, contract.StopInvalidMove, 1, "flagged as wrong", "Checkpoint to roll back"},
		{"prompted, no list", legal, contract.CondStateFeedback, "", []runnertest.Reply{rawReply("no idea")}, false, contract.StopNoPlan, 1, "Checkpoint to roll back", "Legal moves from the checkpoint"},
		{"repot-full, paper: first call sees no state, repair does", legal, contract.CondRePoTFull, "", []runnertest.Reply{{Code: runnertest.MovesCode()}, {Code: runnertest.MovesCode(rest...)}}, true, contract.StopGoal, 2, "Continue this tower_of_hanoi puzzle", afterTwo},
		{"repot-full, full statement: first call plans from the checkpoint", legal, contract.CondRePoTFull, contract.StatementFull, []runnertest.Reply{{Code: runnertest.MovesCode(rest...)}}, true, contract.StopGoal, 1, afterTwo, ""},
		{"repot-no-prefix repairs without the tail", legal, contract.CondRePoTNoPrefix, contract.StatementFull, []runnertest.Reply{{Code: runnertest.MovesCode(rest[:2]...)}, {Code: runnertest.MovesCode(rest[2:]...)}}, true, contract.StopGoal, 2, afterTwo, ""},
		{"repot-restart plans from the source's initial state, then repairs there", legal, contract.CondRePoTRestart, "", []runnertest.Reply{{Code: runnertest.MovesCode(rest...)}, {Code: runnertest.MovesCode(sol...)}}, true, contract.StopGoal, 2, `"A":[3,2,1]`, ""},
		{"repot-restart solved first time", legal, contract.CondRePoTRestart, "", []runnertest.Reply{{Code: runnertest.MovesCode(sol...)}}, true, contract.StopGoal, 1, `"A":[3,2,1]`, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			client := &runnertest.ScriptedClient{Script: tc.script}
			opts := testOptions()
			opts.CheckpointStatement = tc.statement
			rec, tr, err := RunDerail(context.Background(), Deps{Client: client, Sandbox: runnertest.FakeSandbox, Clock: runnertest.NewFakeClock()}, opts, tc.task, tc.cond)
			if err != nil {
				t.Fatal(err)
			}
			st := tc.statement
			if st == "" {
				st = contract.StatementPaper
			}
			got := []any{rec.Success, rec.StoppedReason, rec.Calls, rec.ProblemID, rec.Method, rec.Derail.Schema, rec.Derail.CheckpointStatement, rec.Derail.InjectionType}
			want := []any{tc.success, tc.stop, tc.calls, derailCaseID, tc.cond, contract.DerailSchema, st, tc.task.Case.InjectionType}
			if d := cmp.Diff(want, got); d != "" {
				t.Errorf("record (-want +got):\n%s", d)
			}
			first := client.Reqs[0].Messages[1].Content
			if !strings.Contains(first, tc.firstHas) || (tc.firstLack != "" && strings.Contains(first, tc.firstLack)) {
				t.Errorf("first prompt should hold %q and not %q:\n%s", tc.firstHas, tc.firstLack, first)
			}
			if tr.Metadata.Derail == nil || tr.Metadata.Derail.Condition != tc.cond || tr.ProblemID != derailCaseID {
				t.Errorf("trace derail info %+v", tr.Metadata.Derail)
			}
		})
	}
}

// A Derail run stopped after its first call returned gives an aborted
// attempt named like the condition's records (case id, condition, schema),
// so its key is the condition's and not the underlying method's.
func TestRunDerailAbortedAttempt(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	client := &cancelAfter{Client: &runnertest.ScriptedClient{Script: []runnertest.Reply{{Code: runnertest.MovesCode()}, {Code: runnertest.MovesCode(rest...)}}}, n: 1, cancel: cancel}
	rec, _, err := RunDerail(ctx, Deps{Client: client, Sandbox: runnertest.FakeSandbox, Clock: runnertest.NewFakeClock()}, testOptions(), derailTask(t, legalWrong, afterWrong, afterTwo), contract.CondRePoTFull)
	if !errors.Is(err, ErrAborted) {
		t.Fatalf("err = %v, want ErrAborted", err)
	}
	got := []any{rec.Aborted, rec.Calls, rec.ProblemID, rec.Method, rec.Derail != nil && rec.Derail.Schema == contract.DerailSchema}
	if d := cmp.Diff([]any{true, 1, derailCaseID, contract.CondRePoTFull, true}, got); d != "" {
		t.Errorf("aborted attempt (-want +got):\n%s", d)
	}
}

func TestRunDerailRejects(t *testing.T) {
	tests := []struct {
		name   string
		task   DerailTask
		method string
		want   string
	}{
		{"pot", derailTask(t, legalWrong, afterWrong, afterTwo), contract.MethodPoT, "not a Derail-550 condition"},
		{"wrong last valid state", derailTask(t, legalWrong, afterWrong, afterWrong), contract.CondRePoTFull, "does not reach last_valid_state"},
		{"wrong injected state", derailTask(t, legalWrong, afterTwo, afterTwo), contract.CondStateFeedback, "does not reach injected_state"},
		{"invalid injection with a moved state", derailTask(t, invalidMove, afterWrong, afterTwo), contract.CondErrorOnly, "injected_state is not last_valid_state"},
	}
	for _, tc := range tests {
		_, _, err := RunDerail(context.Background(), Deps{Client: &runnertest.ScriptedClient{}, Sandbox: runnertest.FakeSandbox}, testOptions(), tc.task, tc.method)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: err = %v, want %q", tc.name, err, tc.want)
		}
	}
}
