package runner

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"repot.dev/repot-operator/envs"
	"repot.dev/repot-operator/envs/shareddata"
	"repot.dev/repot-operator/runner/model"
	"repot.dev/repot-operator/runner/summary"
)

// hanoi3WithOracle is hanoi3 with its oracle plan as normalized actions.
func hanoi3WithOracle(t *testing.T) *envs.Problem {
	t.Helper()
	p := hanoi3()
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

func TestRunDerail(t *testing.T) {
	fromWrong := movesCode("[1,0,1]", "[3,0,2]", "[1,1,0]", "[2,1,2]", "[1,0,2]")
	tests := []struct {
		name     string
		task     DerailTask
		method   string
		reply    string
		success  bool
		stop     string
		prefixPM int
		verified int
		from     int
		message  string
	}{
		{"legal wrong, repot repairs from the injected state", derailTask(t, legalWrong, afterWrong, afterTwo), summary.MethodRePoT, fromWrong, true, StopGoal, 1000, 3, 3, "Move 3 ([1,2,0]) is valid but took the plan off course"},
		{"legal wrong, no-prefix too", derailTask(t, legalWrong, afterWrong, afterTwo), summary.MethodRePoTNoPrefix, fromWrong, true, StopGoal, 1000, 3, 3, "off course"},
		{"legal wrong, restart replays from the start", derailTask(t, legalWrong, afterWrong, afterTwo), summary.MethodRePoTRestart, fromWrong, false, StopInvalidMove, 1000, 3, 0, "off course"},
		{"restart with a whole plan", derailTask(t, legalWrong, afterWrong, afterTwo), summary.MethodRePoTRestart, movesCode(sol...), true, StopGoal, 1000, 3, 0, "off course"},
		{"invalid injected move", derailTask(t, invalidMove, afterTwo, afterTwo), summary.MethodRePoT, movesCode(sol[2:]...), true, StopGoal, 667, 2, 2, "Move 3 ([3,0,2]) is invalid: "},
		{"probe action", derailTask(t, probeAction, afterTwo, afterTwo), summary.MethodRePoT, movesCode(sol[2:]...), true, StopGoal, 667, 2, 2, "is not a valid action"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			client := &scriptedClient{script: []reply{{code: tc.reply}}}
			rec, tr, err := RunDerail(context.Background(), Deps{Client: client, Sandbox: fakeSandbox, Clock: newFakeClock()}, testOptions(), tc.task, tc.method)
			if err != nil {
				t.Fatal(err)
			}
			want := summary.Record{
				Model: "test-model", ProblemID: derailCaseID, Environment: envs.HanoiName, Complexity: 3, Method: tc.method,
				Success: tc.success, StoppedReason: tc.stop, Route: summary.RouteSuffixRepair, RepairUsed: true,
				Calls: 1, PromptTokens: 100, CompletionTokens: 20, CachedTokens: 5, ReasoningTokens: 1,
				InitialPlanLen: 3, InitialPrefixPermille: tc.prefixPM, WallMillis: rec.WallMillis,
				StartedUnixMilli: fakeClockStart.UnixMilli() + 1000, // the clock reading after the start
			}
			if diff := cmp.Diff(want, rec); diff != "" {
				t.Errorf("record (-want +got):\n%s", diff)
			}
			d := tr.Metadata.Derail
			if d == nil || d.Verified != tc.verified || !strings.Contains(d.Message, tc.message) {
				t.Errorf("derail info %+v, want %d verified and message with %q", d, tc.verified, tc.message)
			}
			if len(tr.Calls) != 1 || tr.Calls[0].Purpose != PurposeRepair || tr.Calls[0].Replay.From != tc.from {
				t.Errorf("calls %+v", tr.Calls)
			}
		})
	}
}

func TestRunDerailRejects(t *testing.T) {
	tests := []struct {
		name   string
		task   DerailTask
		method string
		want   string
	}{
		{"pot", derailTask(t, legalWrong, afterWrong, afterTwo), summary.MethodPoT, "cannot run Derail cases"},
		{"wrong last valid state", derailTask(t, legalWrong, afterWrong, afterWrong), summary.MethodRePoT, "does not reach last_valid_state"},
		{"wrong injected state", derailTask(t, legalWrong, afterTwo, afterTwo), summary.MethodRePoT, "does not reach injected_state"},
	}
	for _, tc := range tests {
		_, _, err := RunDerail(context.Background(), Deps{Client: &scriptedClient{}, Sandbox: fakeSandbox}, testOptions(), tc.task, tc.method)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: err = %v, want %q", tc.name, err, tc.want)
		}
	}
}

// loadDerail pairs the published Derail-550 cases with PuzzleZoo-775.
func loadDerail(t *testing.T) []DerailTask {
	t.Helper()
	path := shareddata.Require(t, "derail_550.jsonl")
	cases, err := envs.LoadDerail(path)
	if err != nil {
		t.Fatal(err)
	}
	pz, err := envs.Suite("puzzlezoo-775")
	if err != nil {
		t.Fatal(err)
	}
	tasks, err := DerailTasks(cases, pz)
	if err != nil {
		t.Fatal(err)
	}
	return tasks
}

// TestDerailCheckpointsOfPublishedCases rebuilds all 550 checkpoints from
// the generated PuzzleZoo-775 oracle plans.
func TestDerailCheckpointsOfPublishedCases(t *testing.T) {
	tasks := loadDerail(t)
	if len(tasks) != 550 {
		t.Fatalf("%d cases, want 550", len(tasks))
	}
	if err := validateDerail(tasks); err != nil {
		t.Fatal(err)
	}
	kinds := map[string]int{}
	for _, task := range tasks {
		e, _ := task.Problem.Env()
		init, _ := task.Problem.Initial()
		cp, err := derailCheckpoint(e, task, init)
		if err != nil {
			t.Fatal(err)
		}
		kinds[task.Case.InjectionType+"/"+cp.StopReason]++
	}
	want := map[string]int{"legal_wrong_action/" + StopPlanExhausted: 525, "invalid_action/" + StopFormatError: 25}
	if diff := cmp.Diff(want, kinds); diff != "" {
		t.Errorf("checkpoint kinds (-want +got):\n%s", diff)
	}
}

// TestDerailAgainstSimServer runs a few published cases with the three
// repair variants through the real server, client and sandbox.
func TestDerailAgainstSimServer(t *testing.T) {
	tasks := loadDerail(t)[:6]
	hs := startSim(t, simOptions(t, 2, 0), nil)
	var recs, traces lockedBuffer
	opts := DefaultOptions()
	opts.Model = "sim-strong"
	cfg := Config{
		Derail: tasks, Methods: DerailMethods, Options: opts, Records: &recs, Traces: &traces,
		Deps: Deps{Client: simClient(t, hs, 3), Sandbox: realSandbox(t), Clock: model.SystemClock},
	}
	res, err := Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Records) != 18 {
		t.Fatalf("%d records, want 18", len(res.Records))
	}
	s := summary.Aggregate(res.Records)
	for _, m := range s.Models[0].Methods {
		if m.Total != 6 || m.InfraErrors != 0 || m.Calls != 6 {
			t.Errorf("%s: total %d infra %d calls %d", m.Method, m.Total, m.InfraErrors, m.Calls)
		}
	}
	cfg.Methods = []string{summary.MethodPoT}
	if _, err := Run(context.Background(), cfg); err == nil {
		t.Errorf("pot on Derail cases was accepted")
	}
}
