package methods

import (
	"context"
	"encoding/json"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"repot.dev/repot-operator/contract"
	"repot.dev/repot-operator/contract/prompt"
	"repot.dev/repot-operator/envs"
	"repot.dev/repot-operator/envs/envstest"
	"repot.dev/repot-operator/envs/shareddata"
	"repot.dev/repot-operator/modelserver/simserver"
	"repot.dev/repot-operator/runner/model"
	"repot.dev/repot-operator/runner/runnertest"
)

// cotDifferential is testdata/cot_differential.json.
type cotDifferential struct {
	Problems []struct {
		File string `json:"file"`
		ID   string `json:"id"`
	} `json:"problems"`
	Cases []struct {
		Name    string `json:"name"`
		Method  string `json:"method"`
		K       int    `json:"k"`
		Replies []struct {
			Kind string `json:"kind"`
			At   int    `json:"at"`
		} `json:"replies"`
		Success       bool   `json:"success"`
		Stop          string `json:"stop"`
		ReferenceStop string `json:"reference_stop"`
		Calls         int    `json:"calls"`
		Kept          int    `json:"kept"`
	} `json:"cases"`
}

// cotOurStops are the stop reasons of ours that the reference's stopped_reason
// can correspond to (the mapping the cotDifferential file's comment states).
var cotOurStops = map[string][]string{
	"goal":                        {contract.StopGoal},
	"invalid_transition":          {contract.StopInvalidMove},
	"output_format_error":         {contract.StopFormatError, contract.StopNoPlan, contract.StopTruncated},
	"max_steps_or_premature_stop": {contract.StopPlanExhausted, contract.StopNoPlan, contract.StopMaxSteps},
}

// cotReply builds a scripted CoT reply of a kind from the oracle plan.
func cotReply(t *testing.T, kind string, at int, oracle []json.RawMessage, illegal json.RawMessage) runnertest.Reply {
	t.Helper()
	list := func(ms []json.RawMessage) string {
		b, err := json.Marshal(ms)
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	actions := func(ms []json.RawMessage) string { return `{"actions": ` + list(ms) + `}` }
	raw := func(s string) runnertest.Reply { return runnertest.Reply{Code: s, Raw: true} }
	switch kind {
	case "correct":
		return raw(actions(oracle))
	case "correct_fenced":
		return raw("Let me work through it step by step.\nFirst, ... then ... .\n```json\n" + actions(oracle) + "\n```\nThat is the plan.")
	case "correct_array":
		return raw(list(oracle))
	case "correct_moves_line":
		return raw("Working it out.\nmoves = " + list(oracle) + "\n")
	case "past_goal":
		return raw(actions(append(append([]json.RawMessage{}, oracle...), oracle[0])))
	case "illegal":
		plan := append(append(append([]json.RawMessage{}, oracle[:at]...), illegal), oracle[at:]...)
		return raw(actions(plan))
	case "short":
		return raw(actions(oracle[:len(oracle)-1]))
	case "empty_list":
		return raw(`{"actions": []}`)
	case "prose":
		return raw("I would move the smallest piece first and keep going until everything is in place.")
	case "empty":
		return raw("")
	case "truncated":
		s := actions(oracle)
		return runnertest.Reply{Code: s[:len(s)/2], Raw: true, Finish: "length"}
	}
	t.Fatalf("unknown reply kind %q", kind)
	return runnertest.Reply{}
}

// TestCoTDifferential runs cot and self-consistency on scripted replies and
// compares outcome, stop reason and calls with what the reference's agents
// give (testdata/cot_differential.json).
func TestCoTDifferential(t *testing.T) {
	b, err := os.ReadFile("testdata/cot_differential.json")
	if err != nil {
		t.Fatal(err)
	}
	var d cotDifferential
	if err := json.Unmarshal(b, &d); err != nil {
		t.Fatal(err)
	}
	loaded := map[string]map[string]*envs.Problem{}
	for _, pr := range d.Problems {
		if loaded[pr.File] == nil {
			ps, err := envs.LoadProblemsFile(shareddata.Require(t, pr.File))
			if err != nil {
				t.Fatalf("load %s: %v", pr.File, err)
			}
			loaded[pr.File] = map[string]*envs.Problem{}
			for i := range ps {
				loaded[pr.File][ps[i].ProblemID] = &ps[i]
			}
		}
		p := loaded[pr.File][pr.ID]
		if p == nil {
			t.Fatalf("%s has no problem %s", pr.File, pr.ID)
		}
		for _, c := range d.Cases {
			t.Run(p.Environment+"/"+c.Name, func(t *testing.T) {
				if !cotContains(cotOurStops[c.ReferenceStop], c.Stop) {
					t.Fatalf("case: our stop %q does not correspond to the reference's %q", c.Stop, c.ReferenceStop)
				}
				script := make([]runnertest.Reply, len(c.Replies))
				for i, r := range c.Replies {
					script[i] = cotReply(t, r.Kind, r.At, cotOracleMoves(t, p), cotIllegalAt(t, p, r.At))
				}
				client := &runnertest.ScriptedClient{Script: script}
				opts := testOptions()
				opts.SelfConsistencySamples = c.K
				rec, tr, err := RunProblem(context.Background(), Deps{Client: client, Clock: runnertest.NewFakeClock()}, opts, p, c.Method)
				if err != nil {
					t.Fatal(err)
				}
				got := []any{rec.Success, rec.StoppedReason, rec.Calls, len(tr.Calls)}
				want := []any{c.Success, c.Stop, c.Calls, c.Calls}
				if diff := cmp.Diff(want, got); diff != "" {
					t.Fatalf("success, stop, calls, traced calls (-want +got):\n%s\nlast call: %+v", diff, tr.Calls[len(tr.Calls)-1].Replay)
				}
				if kept := tr.Calls[c.Kept].Replay; kept == nil || tr.Metadata.FinalPrefixLen != kept.PrefixLen || rec.StoppedReason != kept.StopReason {
					t.Errorf("the record should report sample %d: final prefix %d, stop %s; sample replay %+v", c.Kept, tr.Metadata.FinalPrefixLen, rec.StoppedReason, kept)
				}
				if c.Method == contract.MethodSelfConsistency && rec.Samples != c.Calls {
					t.Errorf("samples %d, want %d", rec.Samples, c.Calls)
				}
			})
		}
	}
}

// cotOracleMoves is p's oracle plan as a model writes it (env.RawMove).
func cotOracleMoves(t *testing.T, p *envs.Problem) []json.RawMessage {
	t.Helper()
	e, err := p.Env()
	if err != nil {
		t.Fatal(err)
	}
	acts, err := p.Oracle()
	if err != nil {
		t.Fatal(err)
	}
	out := make([]json.RawMessage, len(acts))
	for i, a := range acts {
		out[i] = e.RawMove(a)
	}
	return out
}

// cotIllegalAt is a move that is well formed but illegal after the oracle's
// first at moves: the first of the oracle's moves, in order, that the
// verifier rejects there (nil when at is 0 or beyond the oracle). Any
// illegal move will do: the reference stops at it all the same.
func cotIllegalAt(t *testing.T, p *envs.Problem, at int) json.RawMessage {
	t.Helper()
	moves := cotOracleMoves(t, p)
	if at < 1 || at > len(moves) {
		return nil
	}
	e, _ := p.Env()
	acts, _ := p.Oracle()
	st, err := p.Initial()
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range acts[:at] {
		st = e.Step(st, a).Next
	}
	for _, m := range moves {
		a, err := e.Normalize(p, st, m)
		if err == nil && !e.Step(st, a).Valid {
			return m
		}
	}
	t.Fatalf("%s: no oracle move is illegal after %d moves", p.ProblemID, at)
	return nil
}

func cotContains(xs []string, x string) bool {
	for _, y := range xs {
		if y == x {
			return true
		}
	}
	return false
}

// TestCoTRecord checks a cot run's whole record and its trace on hanoi3.
func TestCoTRecord(t *testing.T) {
	short := `{"actions": [` + strings.Join(sol[:3], ", ") + `]}`
	for _, tc := range []struct {
		name    string
		reply   runnertest.Reply
		want    func() contract.Record
		outcome string
		parse   bool // the trace has a parse error
	}{
		{"success", runnertest.Reply{Code: "```json\n{\"actions\": [" + strings.Join(sol, ",") + "]}\n```", Raw: true}, func() contract.Record {
			r := baseRecord(contract.MethodCoT, 1)
			r.Success, r.StoppedReason, r.Route = true, contract.StopGoal, contract.RouteInitialSuccess
			r.InitialPlanLen, r.InitialPrefixPermille, r.InitialSuccess = 7, 1000, true
			return r
		}, contract.StopGoal, false},
		{"short", runnertest.Reply{Code: short, Raw: true}, func() contract.Record {
			r := baseRecord(contract.MethodCoT, 1)
			r.StoppedReason, r.Route = contract.StopPlanExhausted, contract.RouteNoExtraCall
			r.InitialPlanLen, r.InitialPrefixPermille = 3, 1000
			return r
		}, contract.StopPlanExhausted, false},
		{"truncated", runnertest.Reply{Code: `{"actions": [[1,0,2],`, Raw: true, Finish: "length"}, func() contract.Record {
			r := baseRecord(contract.MethodCoT, 1)
			r.StoppedReason, r.Route = contract.StopTruncated, contract.RouteNoExtraCall
			return r
		}, contract.StopTruncated, true},
		{"infra error", runnertest.Reply{Err: errInfra}, func() contract.Record {
			r := baseRecord(contract.MethodCoT, 0)
			r.StoppedReason, r.Route, r.InfraError, r.InfraRetries = contract.StopInfraError, contract.RouteNoExtraCall, errInfra.Error(), errInfra.Retries()
			return r
		}, "", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			client := &runnertest.ScriptedClient{Script: []runnertest.Reply{tc.reply}}
			rec, tr, err := RunProblem(context.Background(), Deps{Client: client, Clock: runnertest.NewFakeClock()}, testOptions(), envstest.Hanoi3(), contract.MethodCoT)
			if err != nil {
				t.Fatal(err)
			}
			rec.WallMillis, rec.StartedUnixMilli = 0, 0
			if diff := cmp.Diff(tc.want(), rec); diff != "" {
				t.Errorf("record (-want +got):\n%s", diff)
			}
			if len(client.Reqs) != 1 || client.Reqs[0].Seed != nil {
				t.Fatalf("want one request without a seed, got %+v", client.Reqs)
			}
			if diff := cmp.Diff(prompt.Sample(envstest.Hanoi3()), client.Reqs[0].Messages); diff != "" {
				t.Errorf("prompt (-want +got):\n%s", diff)
			}
			if len(tr.Calls) != 1 {
				t.Fatalf("%d traced calls", len(tr.Calls))
			}
			ct := tr.Calls[0]
			if ct.Purpose != contract.PurposeSample || ct.Outcome != tc.outcome || (ct.ParseError != "") != tc.parse || ct.Code != "" {
				t.Errorf("call trace: purpose %q outcome %q parse error %q code %q", ct.Purpose, ct.Outcome, ct.ParseError, ct.Code)
			}
			if tc.outcome != "" && !tc.parse && len(ct.Plan) == 0 {
				t.Error("call trace has no plan")
			}
		})
	}
}

// TestSelfConsistencySeeds: at a temperature above 0 sample i carries seed
// i; at temperature 0 no sample carries one. Tokens add up over samples.
func TestSelfConsistencySeeds(t *testing.T) {
	for _, temp := range []float64{0, 0.7} {
		prose := runnertest.Reply{Code: "no idea", Raw: true}
		client := &runnertest.ScriptedClient{Script: []runnertest.Reply{prose, prose, prose, prose}}
		opts := testOptions()
		opts.Temperature, opts.SelfConsistencySamples = temp, 4
		rec, _, err := RunProblem(context.Background(), Deps{Client: client, Clock: runnertest.NewFakeClock()}, opts, envstest.Hanoi3(), contract.MethodSelfConsistency)
		if err != nil {
			t.Fatal(err)
		}
		var seeds []*int64
		for _, r := range client.Reqs {
			seeds = append(seeds, r.Seed)
		}
		want := []*int64{nil, nil, nil, nil}
		if temp > 0 {
			want = []*int64{cotPtr(int64(0)), cotPtr(int64(1)), cotPtr(int64(2)), cotPtr(int64(3))}
		}
		if diff := cmp.Diff(want, seeds); diff != "" {
			t.Errorf("temperature %v: seeds (-want +got):\n%s", temp, diff)
		}
		for i := 1; i < len(client.Reqs); i++ {
			if !cmp.Equal(client.Reqs[0].Messages, client.Reqs[i].Messages) {
				t.Errorf("sample %d's prompt differs from the first", i)
			}
		}
		got := []int{rec.Samples, rec.Calls, rec.PromptTokens, rec.CompletionTokens}
		if diff := cmp.Diff([]int{4, 4, 400, 80}, got); diff != "" {
			t.Errorf("temperature %v: samples, calls, tokens (-want +got):\n%s", temp, diff)
		}
	}
}

// TestSelfConsistencyInfraError: an infrastructure failure ends the run as
// an infra-error record counting the samples whose call returned.
func TestSelfConsistencyInfraError(t *testing.T) {
	client := &runnertest.ScriptedClient{Script: []runnertest.Reply{{Code: "no", Raw: true}, {Err: errInfra}}}
	opts := testOptions()
	opts.SelfConsistencySamples = 3
	rec, _, err := RunProblem(context.Background(), Deps{Client: client, Clock: runnertest.NewFakeClock()}, opts, envstest.Hanoi3(), contract.MethodSelfConsistency)
	if err != nil {
		t.Fatal(err)
	}
	got := []any{rec.Success, rec.StoppedReason, rec.Calls, rec.Samples, rec.InfraError != ""}
	if diff := cmp.Diff([]any{false, contract.StopInfraError, 1, 1, true}, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

func cotPtr[T any](v T) *T { return &v }

// TestCoTAgainstSimServer runs cot and self-consistency through the real
// client against the simulated server: every reply is read (no infra
// error), self-consistency at temperature 0 draws k identical answers for
// a problem its first sample fails, and at temperature 0.7 (seeded
// samples) it solves more problems than at temperature 0.
func TestCoTAgainstSimServer(t *testing.T) {
	if testing.Short() {
		t.Skip("short")
	}
	ps, err := envs.Suite("open-source-120")
	if err != nil {
		t.Skipf("open-source-120 not available: %v", err)
	}
	s, err := simserver.New(simserver.Options{Profile: simserver.Profiles["medium"], ModelName: "sim-medium", Seed: 5, Logf: t.Logf})
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(s)
	defer hs.Close()
	client, err := model.New(model.Config{BaseURL: hs.URL + "/v1", Model: "sim-medium", Timeout: time.Minute,
		Retry: model.RetryPolicy{MaxAttempts: 1, Initial: time.Millisecond, Max: time.Millisecond}})
	if err != nil {
		t.Fatal(err)
	}
	const k = 4
	solved := map[float64]int{}
	identical := 0
	for _, temp := range []float64{0, 0.7} {
		for i := 0; i < len(ps); i += 3 {
			for _, method := range []string{contract.MethodCoT, contract.MethodSelfConsistency} {
				opts := testOptions()
				opts.Temperature, opts.SelfConsistencySamples = temp, k
				rec, tr, err := RunProblem(context.Background(), Deps{Client: client, Clock: runnertest.NewFakeClock()}, opts, &ps[i], method)
				if err != nil {
					t.Fatal(err)
				}
				if rec.InfraError != "" || rec.Calls < 1 || rec.Calls > k || (rec.Success != (rec.StoppedReason == contract.StopGoal)) {
					t.Fatalf("%s %s: record %+v", ps[i].ProblemID, method, rec)
				}
				if method != contract.MethodSelfConsistency {
					continue
				}
				if rec.Success {
					solved[temp]++
				}
				if temp == 0 && !tr.Calls[0].Replay.ReachedGoal {
					if rec.Calls != k {
						t.Errorf("%s: %d calls at temperature 0 after a failed first sample, want %d", ps[i].ProblemID, rec.Calls, k)
					}
					for _, c := range tr.Calls[1:] {
						if c.Completion != tr.Calls[0].Completion {
							t.Errorf("%s: samples differ at temperature 0", ps[i].ProblemID)
						}
					}
					identical++
				}
			}
		}
	}
	t.Logf("self-consistency k=%d solved %d at temperature 0, %d at 0.7; %d problems got %d identical answers at 0", k, solved[0], solved[0.7], identical, k)
	if identical == 0 || solved[0.7] <= solved[0] {
		t.Errorf("want failed problems at temperature 0 and more solved at 0.7: %v, %d", solved, identical)
	}
}
