package judge

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"repot.dev/repot-operator/contract"
	"repot.dev/repot-operator/contract/program"
	"repot.dev/repot-operator/envs"
	"repot.dev/repot-operator/envs/envstest"
	"repot.dev/repot-operator/envs/shareddata"
	"repot.dev/repot-operator/modelserver/simserver"
	"repot.dev/repot-operator/runner"
	"repot.dev/repot-operator/runner/methods"
	"repot.dev/repot-operator/runner/model"
	"repot.dev/repot-operator/runner/runnertest"
	"repot.dev/repot-operator/runner/sandbox"
)

// TestMain closes the shared python sandbox (runnertest.Python).
func TestMain(m *testing.M) { runnertest.Main(m) }

func realSandbox(t testing.TB) sandbox.Sandbox { return runnertest.Python(t) }

// simRun runs cfg's problems or cases against the simulated model of
// profile through the real client and sandbox, as repot run does, and
// returns the lines of traces.jsonl and the records by key.
func simRun(t *testing.T, profile string, cfg runner.Config) ([][]byte, map[string]contract.Record) {
	t.Helper()
	prof, err := simserver.LookupProfile(profile)
	if err != nil {
		t.Fatal(err)
	}
	s, err := simserver.New(simserver.Options{Profile: prof, Seed: 7, Logf: t.Logf})
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(s)
	t.Cleanup(hs.Close)
	client, err := model.New(model.Config{
		BaseURL: hs.URL + "/v1", Model: "sim-" + profile,
		SystemPrefix: contract.NoThinkPrefix, ExtraBody: model.DisableThinkingBody(),
		Retry:   model.RetryPolicy{MaxAttempts: 2, Initial: time.Millisecond, Max: time.Millisecond},
		Timeout: 5 * time.Minute,
		Sleep:   func(ctx context.Context, _ time.Duration) error { return ctx.Err() },
	})
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	out, err := runner.OpenOutput(dir, "", false)
	if err != nil {
		t.Fatal(err)
	}
	cfg.Options.Model = "sim-" + profile
	cfg.Concurrency = 4
	cfg.Deps = methods.Deps{Client: client, Sandbox: realSandbox(t), Clock: model.SystemClock}
	res, _, err := runner.Execute(context.Background(), cfg, out)
	out.Close()
	if err != nil {
		t.Fatal(err)
	}
	if res.Aborted {
		t.Fatal("the run was aborted")
	}
	recs := map[string]contract.Record{}
	for _, l := range readLines(t, filepath.Join(dir, contract.RecordsFile)) {
		var r contract.Record
		if err := json.Unmarshal(l, &r); err != nil {
			t.Fatal(err)
		}
		recs[r.Model+"|"+r.ProblemID+"|"+r.Method] = r
	}
	return readLines(t, filepath.Join(dir, contract.TracesFile)), recs
}

func readLines(t *testing.T, path string) [][]byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var out [][]byte
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(nil, 64<<20)
	for sc.Scan() {
		out = append(out, append([]byte(nil), sc.Bytes()...))
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// tally counts what the judge did with a run's traces.
type tally struct {
	judged, notJudged, solved, failed int
	// repairs and freshRetries count judged traces with such a call, so
	// that the test sees those paths exercised.
	repairs, freshRetries int
}

// judgeAll judges every line and fails on any verdict that disagrees
// with its trace or its record, or any trace the judge finds
// inconsistent; methods in wantNotJudged must come back not re-judged.
func judgeAll(t *testing.T, j *Judge, lines [][]byte, recs map[string]contract.Record, wantNotJudged map[string]bool) tally {
	t.Helper()
	var n tally
	for i, l := range lines {
		v := j.Line(i+1, l)
		if v.Malformed != "" || v.Inconsistent != "" {
			t.Errorf("line %d (%s %s): malformed %q, inconsistent %q", i+1, v.Method, v.ProblemID, v.Malformed, v.Inconsistent)
			continue
		}
		if v.InfraError {
			continue
		}
		if wantNotJudged[v.Method] {
			if v.Judged || v.NotJudged == "" {
				t.Errorf("line %d: %s was re-judged, want not re-judged with a reason", i+1, v.Method)
			}
			n.notJudged++
			continue
		}
		if !v.Judged {
			t.Errorf("line %d: %s %s not re-judged: %s", i+1, v.Method, v.ProblemID, v.NotJudged)
			continue
		}
		n.judged++
		if v.Success {
			n.solved++
		} else {
			n.failed++
		}
		if v.Success != v.TraceSuccess {
			t.Errorf("line %d: %s %s: judge %v, trace %v (%s)", i+1, v.Method, v.ProblemID, v.Success, v.TraceSuccess, v.Detail)
		}
		rec, ok := recs[v.Model+"|"+v.ProblemID+"|"+v.Method]
		if !ok || rec.Success != v.Success {
			t.Errorf("line %d: %s %s: judge %v, record %v (found %v)", i+1, v.Method, v.ProblemID, v.Success, rec.Success, ok)
		}
		var tr contract.Trace
		if err := json.Unmarshal(l, &tr); err != nil {
			t.Fatal(err)
		}
		for _, c := range tr.Calls {
			switch c.Purpose {
			case contract.PurposeRepair:
				n.repairs++
			case contract.PurposeFreshRetry:
				n.freshRetries++
			}
		}
	}
	return n
}

// TestJudgeAgreesWithTheRunner runs the PuzzleZoo methods against the
// simulated server with the real sandbox and re-judges every trace: the
// judge must agree with each trace and record, on successes and failures,
// through repairs and fresh retries; vex is reported as not re-judged.
func TestJudgeAgreesWithTheRunner(t *testing.T) {
	ps, err := envs.Suite(envs.SuiteOpenSource)
	if err != nil {
		t.Fatal(err)
	}
	ms := []string{
		contract.MethodPoT, contract.MethodPoTRetry, contract.MethodRePoT, contract.MethodAdaptive,
		contract.MethodRePoTNoPrefix, contract.MethodRePoTRestart, contract.MethodCoT, contract.MethodSelfConsistency, contract.MethodVEX,
	}
	opts := methods.DefaultOptions()
	opts.RepairBudget = 2
	opts.SelfConsistencySamples = 3
	lines, recs := simRun(t, "weak", runner.Config{Problems: ps[:24], Methods: ms, Options: opts})
	if want := 24 * len(ms); len(lines) != want {
		t.Fatalf("%d traces, want %d", len(lines), want)
	}
	j, err := New(envs.SuiteOpenSource, nil, Options{})
	if err != nil {
		t.Fatal(err)
	}
	n := judgeAll(t, j, lines, recs, map[string]bool{contract.MethodVEX: true})
	if n.solved == 0 || n.failed == 0 || n.repairs == 0 || n.freshRetries == 0 || n.notJudged != 24 {
		t.Errorf("the run exercised too little: %+v", n)
	}
	tamperRealTraces(t, j, lines, ps[:24])
}

// tamperRealTraces tampers with the runner's own traces of solved runs:
// a success flipped, and a first program's printed plan cut to its first
// move (on a problem that needs more), must both be caught.
func tamperRealTraces(t *testing.T, j *Judge, lines [][]byte, ps []envs.Problem) {
	t.Helper()
	minSteps := map[string]int{}
	for _, p := range ps {
		minSteps[p.ProblemID] = p.MinSteps
	}
	flipped, cut := 0, 0
	for i, l := range lines {
		var tr contract.Trace
		if err := json.Unmarshal(l, &tr); err != nil {
			t.Fatal(err)
		}
		if !tr.Success || tr.Method != contract.MethodPoT || tr.Metadata.InfraError != "" {
			continue
		}
		flip := tr
		flip.Success = false
		if v := judgeTrace(t, j, i+1, flip); !v.Judged || !v.Success || v.TraceSuccess {
			t.Errorf("line %d with its success flipped: %+v, want judged solved against a trace not solved", i+1, v)
		}
		flipped++
		moves, err := program.ParseMoves(tr.Calls[0].Stdout, tr.Calls[0].Code)
		if err != nil || len(moves) < 2 || minSteps[tr.ProblemID] < 2 {
			continue
		}
		tr.Calls = append([]contract.CallTrace(nil), tr.Calls...)
		tr.Calls[0].Stdout = "moves = [" + string(moves[0]) + "]\n"
		if v := judgeTrace(t, j, i+1, tr); !v.Judged || v.Success || !v.TraceSuccess {
			t.Errorf("line %d with its plan cut to one move: %+v, want judged not solved against a trace solved", i+1, v)
		}
		cut++
	}
	if flipped == 0 || cut == 0 {
		t.Errorf("tampered with %d flipped and %d cut traces; want some of each", flipped, cut)
	}
}

func judgeTrace(t *testing.T, j *Judge, line int, tr contract.Trace) contract.TraceVerdict {
	t.Helper()
	b, err := json.Marshal(tr)
	if err != nil {
		t.Fatal(err)
	}
	return j.Line(line, b)
}

// TestJudgeAgreesOnDerail does the same for Derail-550 cases under every
// condition; the step-by-step agent and the VEX conditions are not
// re-judged.
func TestJudgeAgreesOnDerail(t *testing.T) {
	path := shareddata.Require(t, "derail_550.jsonl")
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	j, err := New(envs.SuiteDerail, bytes.NewReader(data), Options{})
	if err != nil {
		t.Fatal(err)
	}
	cases, err := envs.LoadDerailReader(bytes.NewReader(data), path)
	if err != nil {
		t.Fatal(err)
	}
	pz, err := envs.Suite(envs.SuitePuzzleZoo)
	if err != nil {
		t.Fatal(err)
	}
	// Every 25th case: all environments and both injection types.
	var some []envs.DerailCase
	for i := 0; i < len(cases); i += 25 {
		some = append(some, cases[i])
	}
	tasks, err := methods.DerailTasks(some, pz)
	if err != nil {
		t.Fatal(err)
	}
	lines, recs := simRun(t, "strong", runner.Config{Derail: tasks, Methods: contract.DerailConditions, Options: methods.DefaultOptions()})
	if want := len(tasks) * len(contract.DerailConditions); len(lines) != want {
		t.Fatalf("%d traces, want %d", len(lines), want)
	}
	n := judgeAll(t, j, lines, recs, map[string]bool{
		contract.CondStateGuard: true, contract.CondVEXFull: true, contract.CondVEXNoPrefix: true, contract.CondVEXRestart: true,
	})
	if n.solved == 0 || n.failed == 0 || n.notJudged != 4*len(tasks) {
		t.Errorf("the run exercised too little: %+v", n)
	}
}

// hanoiTrace is a pot trace of the 3-disk Tower of Hanoi as the runner
// writes it, its plan printed by the program.
func hanoiTrace(moves string, success bool) contract.Trace {
	code := "print(\"moves = " + moves + "\")"
	return contract.Trace{
		ProblemID: "hanoi3", Environment: "tower_of_hanoi", Model: "m", Method: contract.MethodPoT, Success: success,
		Calls: []contract.CallTrace{{
			Purpose: contract.PurposeInitial, Completion: "```python\n" + code + "\n```", Code: code,
			Stdout: "moves = " + moves + "\n",
		}},
	}
}

const hanoiSolution = "[[1, 0, 2], [2, 0, 1], [1, 2, 1], [3, 0, 2], [1, 1, 0], [2, 1, 2], [1, 0, 2]]"

// TestJudgeFindsTampering tampers with traces and checks what the judge
// reports.
func TestJudgeFindsTampering(t *testing.T) {
	j := &Judge{problems: map[string]*envs.Problem{}}
	p := envstest.Hanoi3()
	j.problems[p.ProblemID] = p
	tests := []struct {
		name  string
		trace func() contract.Trace
		want  contract.TraceVerdict
	}{
		{
			name:  "a solving plan",
			trace: func() contract.Trace { return hanoiTrace(hanoiSolution, true) },
			want:  contract.TraceVerdict{Judged: true, Success: true, TraceSuccess: true},
		},
		{
			name:  "success flipped",
			trace: func() contract.Trace { return hanoiTrace(hanoiSolution, false) },
			want:  contract.TraceVerdict{Judged: true, Success: true, TraceSuccess: false},
		},
		{
			name: "a move of stdout changed",
			trace: func() contract.Trace {
				tr := hanoiTrace(hanoiSolution, true)
				tr.Calls[0].Stdout = strings.Replace(tr.Calls[0].Stdout, "[3, 0, 2]", "[3, 0, 1]", 1)
				return tr
			},
			want: contract.TraceVerdict{Judged: true, Success: false, TraceSuccess: true},
		},
		{
			name: "the recorded program is not the completion's",
			trace: func() contract.Trace {
				tr := hanoiTrace(hanoiSolution, true)
				tr.Calls[0].Code = "print('moves = []')"
				return tr
			},
			want: contract.TraceVerdict{TraceSuccess: true, Inconsistent: "call 0: the recorded program is not the completion's program"},
		},
		{
			name: "a repair completes a valid prefix",
			trace: func() contract.Trace {
				tr := hanoiTrace("[[1, 0, 2], [2, 0, 1], [1, 2, 1], [3, 0, 1]]", true)
				tr.Method = contract.MethodRePoT
				code := "print(\"moves = [[3, 0, 2], [1, 1, 0], [2, 1, 2], [1, 0, 2]]\")"
				tr.Calls = append(tr.Calls, contract.CallTrace{Index: 1, Purpose: contract.PurposeRepair, Completion: "```python\n" + code + "\n```", Code: code,
					Stdout: "moves = [[3, 0, 2], [1, 1, 0], [2, 1, 2], [1, 0, 2]]\n"})
				return tr
			},
			want: contract.TraceVerdict{Judged: true, Success: true, TraceSuccess: true},
		},
		{
			name: "a call after the goal",
			trace: func() contract.Trace {
				tr := hanoiTrace(hanoiSolution, true)
				tr.Method = contract.MethodPoTRetry
				tr.Calls = append(tr.Calls, tr.Calls[0])
				tr.Calls[1].Purpose = contract.PurposeFreshRetry
				return tr
			},
			want: contract.TraceVerdict{TraceSuccess: true, Inconsistent: "call 1 follows a plan that reached the goal"},
		},
		{
			name: "an infrastructure error is left out",
			trace: func() contract.Trace {
				tr := hanoiTrace(hanoiSolution, false)
				tr.Metadata.InfraError = "connection refused"
				return tr
			},
			want: contract.TraceVerdict{InfraError: true},
		},
		{
			name: "vex is not re-judged",
			trace: func() contract.Trace {
				tr := hanoiTrace(hanoiSolution, true)
				tr.Method = contract.MethodVEX
				return tr
			},
			want: contract.TraceVerdict{TraceSuccess: true, NotJudged: notJudged[contract.MethodVEX]},
		},
		{
			name: "an unknown problem",
			trace: func() contract.Trace {
				tr := hanoiTrace(hanoiSolution, true)
				tr.ProblemID = "nowhere"
				return tr
			},
			want: contract.TraceVerdict{TraceSuccess: true, Inconsistent: "problem nowhere is not in the evaluation's problem set"},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tr := tc.trace()
			b, err := json.Marshal(tr)
			if err != nil {
				t.Fatal(err)
			}
			got := j.Line(3, b)
			want := tc.want
			want.Line, want.Model, want.Method, want.ProblemID = 3, tr.Model, tr.Method, tr.ProblemID
			if diff := cmp.Diff(want, got, ignoreDetail); diff != "" {
				t.Errorf("verdict (-want +got):\n%s", diff)
			}
		})
	}
}

var ignoreDetail = cmp.FilterPath(func(p cmp.Path) bool { return p.String() == "Detail" }, cmp.Ignore())

// TestJudgeMalformedLines checks that lines that are not traces are
// reported with their position.
func TestJudgeMalformedLines(t *testing.T) {
	j := &Judge{problems: map[string]*envs.Problem{}}
	tests := []struct {
		line string
		want string
	}{
		{`not json`, "not a trace: invalid character 'o' in literal null (expecting 'u')"},
		{`{"model":"m","method":"pot"}`, "not a trace: no model, method or problem_id"},
		{`{"model":"m","method":"pot","problem_id":"x","calls":"many"}`, "not a trace: json: cannot unmarshal string into Go struct field Trace.calls of type []contract.CallTrace"},
	}
	for i, tc := range tests {
		got := j.Line(i+1, []byte(tc.line))
		if diff := cmp.Diff(contract.TraceVerdict{Line: i + 1, Malformed: tc.want}, got); diff != "" {
			t.Errorf("%s: (-want +got):\n%s", tc.line, diff)
		}
	}
}

// FuzzLine feeds arbitrary lines to the judge: it must never panic, and a
// line it does not call malformed names its run.
func FuzzLine(f *testing.F) {
	for _, tr := range []contract.Trace{hanoiTrace(hanoiSolution, true), hanoiTrace("[[1, 0, 2]]", false)} {
		b, err := json.Marshal(tr)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Add([]byte(`{"model":"m","method":"cot","problem_id":"hanoi3","calls":[{"purpose":"sample","completion":"[[1,0,2]]"}]}`))
	f.Add([]byte(`{"model":"m","method":"repot","problem_id":"hanoi3","calls":[{"purpose":"initial"},{"purpose":"repair","stdout":"moves = [(1, 0, 2)]"}]}`))
	f.Add([]byte(`{`))
	j := &Judge{problems: map[string]*envs.Problem{"hanoi3": envstest.Hanoi3()}}
	f.Fuzz(func(t *testing.T, line []byte) {
		v := j.Line(5, line)
		if v.Line != 5 {
			t.Fatalf("line %d, want 5", v.Line)
		}
		if v.Malformed == "" && (v.Model == "" || v.Method == "" || v.ProblemID == "") {
			t.Fatalf("a trace verdict without its run: %+v", v)
		}
		if v.Judged && v.NotJudged != "" {
			t.Fatalf("judged and not judged: %+v", v)
		}
	})
}
