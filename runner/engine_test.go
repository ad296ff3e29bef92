package runner

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"repot.dev/repot-operator/analysis/summary"
	"repot.dev/repot-operator/contract"
	"repot.dev/repot-operator/contract/prompt"
	"repot.dev/repot-operator/envs"
	"repot.dev/repot-operator/envs/envstest"
	"repot.dev/repot-operator/runner/concurrency"
	"repot.dev/repot-operator/runner/methods"
	"repot.dev/repot-operator/runner/model"
	"repot.dev/repot-operator/runner/runnertest"
	"repot.dev/repot-operator/runner/sandbox"
)

// suite returns n copies of hanoi3 with ids h000, h001, ...; the id is the
// natural-language prompt so the oracle client can tell them apart.
// sol is hanoi3's solution.
var sol = envstest.Hanoi3Solution

func suite(n int) []envs.Problem {
	out := make([]envs.Problem, n)
	for i := range out {
		p := *envstest.Hanoi3()
		p.ProblemID = fmt.Sprintf("h%03d", i)
		p.NaturalLanguagePrompt = "PROBLEM " + p.ProblemID
		out[i] = p
	}
	return out
}

// oracleClient answers by the problem number i and the kind of call only,
// never by arrival order: a first call solves when i%3==0, else it prints a
// plan whose second move is invalid; a fresh retry solves when i%5==0; a
// repair prints the rest of the solution when i%2==0. Problems with
// i%7==6 fail every call with an infra error when infraFor is set.
type oracleClient struct {
	infra   bool
	delay   time.Duration
	calls   atomic.Int64
	active  atomic.Int64
	maxSeen atomic.Int64
}

func (c *oracleClient) Complete(ctx context.Context, req model.Request) (model.Response, error) {
	c.calls.Add(1)
	n := c.active.Add(1)
	defer c.active.Add(-1)
	for {
		m := c.maxSeen.Load()
		if n <= m || c.maxSeen.CompareAndSwap(m, n) {
			break
		}
	}
	if c.delay > 0 {
		select {
		case <-time.After(c.delay):
		case <-ctx.Done():
			return model.Response{}, ctx.Err()
		}
	}
	text := req.Messages[len(req.Messages)-1].Content
	at := strings.Index(text, "PROBLEM h")
	i, err := strconv.Atoi(text[at+9 : at+12])
	if at < 0 || err != nil {
		return model.Response{}, fmt.Errorf("no problem in prompt")
	}
	if c.infra && i%7 == 6 {
		return model.Response{}, &model.InfraError{Cause: fmt.Errorf("503"), Attempts: 3}
	}
	var code string
	switch {
	case strings.Contains(text, prompt.Marker):
		code = runnertest.MovesCode(sol[1], "[3,0,0]")
		if i%2 == 0 {
			code = runnertest.MovesCode(sol[1:]...)
		}
	case strings.Contains(text, "Attempt: 2"):
		code = "CRASH"
		if i%5 == 0 {
			code = runnertest.MovesCode(sol...)
		}
	default:
		code = runnertest.MovesCode(sol[0], "[1,0,1]")
		if i%3 == 0 {
			code = runnertest.MovesCode(sol...)
		}
	}
	return model.Response{Content: "```python\n" + code + "\n```", FinishReason: "stop", Usage: contract.Usage{Prompt: len(text) / 4, Completion: len(code) / 4}}, nil
}

type lockedBuffer struct {
	mu sync.Mutex
	bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.Buffer.Write(p)
}

func engineConfig(client model.Client, problems []envs.Problem, recs, traces *lockedBuffer) Config {
	opts := methods.DefaultOptions()
	opts.Model = "test-model"
	return Config{
		Problems: problems, Methods: contract.DefaultMethods, Options: opts,
		Deps:    methods.Deps{Client: client, Sandbox: runnertest.FakeSandbox, Clock: runnertest.NewFakeClock()},
		Records: recs, Traces: traces,
	}
}

func summaryJSON(t *testing.T, recs []contract.Record) string {
	t.Helper()
	b, err := json.MarshalIndent(summary.Aggregate(recs), "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func readBack(t *testing.T, b *lockedBuffer) []contract.Record {
	t.Helper()
	recs, partial, err := contract.ReadRecords(bytes.NewReader(b.Bytes()))
	if err != nil || partial != 0 {
		t.Fatalf("ReadRecords: %v (partial %d)", err, partial)
	}
	return recs
}

func TestEngineDeterministicAcrossConcurrency(t *testing.T) {
	problems := suite(30)
	var want string
	for _, conc := range []int{1, 4, 64} {
		var recs, traces lockedBuffer
		cfg := engineConfig(&oracleClient{}, problems, &recs, &traces)
		cfg.Concurrency = conc
		res, err := Run(context.Background(), cfg)
		if err != nil {
			t.Fatalf("concurrency %d: %v", conc, err)
		}
		if res.Aborted || res.Planned != 120 || len(res.Records) != 120 || res.MaxInFlight > conc {
			t.Errorf("concurrency %d: result %+v", conc, res)
		}
		got := summaryJSON(t, readBack(t, &recs))
		if want == "" {
			want = got
		} else if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("concurrency %d changed the summary (-first +this):\n%s", conc, diff)
		}
		if n := strings.Count(traces.String(), "\n"); n != 120 {
			t.Errorf("concurrency %d: %d trace lines, want 120", conc, n)
		}
	}
	// Spot-check the figures the oracle implies: pot solves i%3==0 (10 of
	// 30); repot adds the even i among the rest (10 more: 20 of 30).
	var recs, traces lockedBuffer
	if _, err := Run(context.Background(), engineConfig(&oracleClient{}, problems, &recs, &traces)); err != nil {
		t.Fatal(err)
	}
	solved := map[string]int{}
	for _, m := range summary.Aggregate(readBack(t, &recs)).Models[0].Methods {
		solved[m.Method] = m.Solved
	}
	// pot-retry: i%3==0 or i%5==0 -> 14; adaptive: the first plan has prefix
	// 1 of 2 (500 > 150) so it repairs like repot -> 20.
	wantSolved := map[string]int{contract.MethodPoT: 10, contract.MethodPoTRetry: 14, contract.MethodRePoT: 20, contract.MethodAdaptive: 20}
	if diff := cmp.Diff(wantSolved, solved); diff != "" {
		t.Errorf("solved (-want +got):\n%s", diff)
	}
}

func TestEngineResumeSkipsDoneKeepsInfra(t *testing.T) {
	problems := suite(21)
	var recs1, tr1 lockedBuffer
	if _, err := Run(context.Background(), engineConfig(&oracleClient{infra: true}, problems, &recs1, &tr1)); err != nil {
		t.Fatal(err)
	}
	first := readBack(t, &recs1)
	infra := 0
	for _, r := range first {
		if r.InfraError != "" {
			infra++
			if r.StoppedReason != contract.StopInfraError || r.Success || r.InfraRetries != 2 {
				t.Errorf("infra record %+v", r)
			}
		}
	}
	if infra != 3*4 { // i = 6, 13, 20
		t.Errorf("%d infra records, want 12", infra)
	}
	// Resume against a healthy server: only the infra runs are made again.
	client := &oracleClient{}
	cfg := engineConfig(client, problems, &recs1, &tr1)
	cfg.Done = contract.DoneKeys(first)
	res, err := Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if res.Skipped != 84-12 || res.Planned != 12 || len(res.Records) != 12 {
		t.Errorf("resume result: skipped %d planned %d records %d", res.Skipped, res.Planned, len(res.Records))
	}
	var clean, cleanTr lockedBuffer
	if _, err := Run(context.Background(), engineConfig(&oracleClient{}, problems, &clean, &cleanTr)); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(summaryJSON(t, readBack(t, &clean)), summaryJSON(t, readBack(t, &recs1))); diff != "" {
		t.Errorf("resumed summary differs from a clean run (-clean +resumed):\n%s", diff)
	}
}

func TestEngineShards(t *testing.T) {
	problems := suite(10)
	seen := map[string]int{}
	for idx := 0; idx < 3; idx++ {
		var recs, tr lockedBuffer
		cfg := engineConfig(&oracleClient{}, problems, &recs, &tr)
		cfg.Methods = []string{contract.MethodPoT}
		cfg.ShardIndex, cfg.ShardCount = idx, 3
		if _, err := Run(context.Background(), cfg); err != nil {
			t.Fatal(err)
		}
		for _, r := range readBack(t, &recs) {
			n, _ := strconv.Atoi(r.ProblemID[1:])
			if n%3 != idx {
				t.Errorf("shard %d ran %s", idx, r.ProblemID)
			}
			seen[r.ProblemID]++
		}
	}
	if len(seen) != 10 {
		t.Errorf("shards covered %d problems, want 10", len(seen))
	}
	for id, n := range seen {
		if n != 1 {
			t.Errorf("%s ran %d times", id, n)
		}
	}
}

// stopAfterFirst cancels the engine's context once its first call returned;
// later calls fail with the context's error.
type stopAfterFirst struct {
	model.Client
	once   sync.Once
	cancel func()
}

func (c *stopAfterFirst) Complete(ctx context.Context, req model.Request) (model.Response, error) {
	if err := ctx.Err(); err != nil {
		return model.Response{}, err // as an HTTP call cut by its context
	}
	resp, err := c.Client.Complete(ctx, req)
	c.once.Do(c.cancel)
	return resp, err
}

// A run stopped after a call of it returned is written as an aborted
// attempt carrying that call: not a run of the result, and a resume makes
// it again.
func TestEngineWritesAbortedAttempt(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var recs, traces lockedBuffer
	cfg := engineConfig(&stopAfterFirst{Client: &oracleClient{}, cancel: cancel}, suite(2)[1:], &recs, &traces)
	cfg.Methods, cfg.FixedConcurrency, cfg.Concurrency = []string{contract.MethodPoTRetry}, true, 1
	res, err := Run(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if !res.Aborted || len(res.Records) != 0 {
		t.Errorf("aborted %v with %d runs, want aborted with none", res.Aborted, len(res.Records))
	}
	got := readBack(t, &recs)
	if len(got) != 1 || !got[0].Aborted || got[0].Calls != 1 || got[0].CompletionTokens == 0 || got[0].ProblemID != "h001" {
		t.Fatalf("records file holds %+v, want one aborted attempt of h001 with its one call", got)
	}
	if done := contract.DoneKeys(got); len(done) != 0 {
		t.Errorf("a resume would skip %v", done)
	}
	if traces.Len() != 0 {
		t.Errorf("an aborted attempt wrote a trace: %s", traces.String())
	}
}

// Under a budget cap the engine admits only the calls the cap covers, the
// earlier sessions' spending included, and then waits (here until the
// wait, told once, cancels it).
func TestEngineHoldsCallsToTheBudgetCap(t *testing.T) {
	dir := t.TempDir()
	earlier := contract.Record{Model: "test-model", ProblemID: "h000", Method: contract.MethodPoT, Calls: 1, CompletionTokens: 10}
	line, err := json.Marshal(earlier)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, contract.RecordsFile), append(line, '\n'), 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := OpenOutput(dir, "", true)
	if err != nil {
		t.Fatal(err)
	}
	defer out.Close()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	client := &oracleClient{}
	var told []string
	cfg := engineConfig(client, suite(5), nil, nil)
	cfg.Methods, cfg.FixedConcurrency, cfg.Concurrency = []string{contract.MethodPoT}, true, 4
	three := int64(3)
	cfg.Allowance = &concurrency.Allowance{
		Read:   func() (contract.BudgetCap, error) { return contract.BudgetCap{ModelCalls: &three}, nil },
		OnWait: func(why string) { told = append(told, why); cancel() },
	}
	res, _, err := Execute(ctx, cfg, out)
	if err != nil {
		t.Fatal(err)
	}
	if got := client.calls.Load(); got != 2 {
		t.Errorf("%d calls made under a cap of 3 with 1 made before, want 2", got)
	}
	if !res.Aborted || len(told) != 1 {
		t.Errorf("aborted %v, told %q; want aborted, told once", res.Aborted, told)
	}
}

func TestEngineAbortFlushesFinished(t *testing.T) {
	problems := suite(40)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var recs, tr lockedBuffer
	cfg := engineConfig(&oracleClient{delay: 2 * time.Millisecond}, problems, &recs, &tr)
	cfg.Concurrency = 2
	cfg.Progress = func(p Progress) {
		if p.Done == 10 {
			cancel()
		}
	}
	res, err := Run(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if !res.Aborted || len(res.Records) < 10 || len(res.Records) >= 160 {
		t.Errorf("aborted %v with %d records", res.Aborted, len(res.Records))
	}
	if got, _ := summary.Dedupe(readBack(t, &recs)); len(got) != len(res.Records) {
		t.Errorf("records file has %d runs, result %d", len(got), len(res.Records))
	}
	for _, r := range res.Records {
		if r.InfraError != "" {
			t.Errorf("abort recorded as infra error: %+v", r)
		}
	}
}

func TestEngineBoundsCallsInFlight(t *testing.T) {
	client := &oracleClient{delay: 5 * time.Millisecond}
	var recs, tr lockedBuffer
	cfg := engineConfig(client, suite(20), &recs, &tr)
	cfg.Concurrency, cfg.FixedConcurrency = 5, true
	res, err := Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if got := client.maxSeen.Load(); got > 5 {
		t.Errorf("client saw %d calls at once, bound is 5", got)
	}
	if res.MaxInFlight != 5 {
		t.Errorf("MaxInFlight = %d, want the bound 5 reached", res.MaxInFlight)
	}
}

func TestEngineRejectsBadConfig(t *testing.T) {
	bad := suite(2)
	bad[1].InitialState = json.RawMessage(`{"pegs":1}`)
	dup := suite(2)
	dup[1].ProblemID = dup[0].ProblemID
	tests := []struct {
		name   string
		mutate func(*Config)
		want   string
	}{
		{"bad state", func(c *Config) { c.Problems = bad }, "problem h001"},
		{"duplicate id", func(c *Config) { c.Problems = dup }, "appears twice"},
		{"unknown method", func(c *Config) { c.Methods = []string{"nope"} }, "unknown method"},
		{"shard range", func(c *Config) { c.ShardIndex, c.ShardCount = 3, 3 }, "shard index"},
		{"no writer", func(c *Config) { c.Records = nil }, "no records writer"},
	}
	for _, tc := range tests {
		client := &oracleClient{}
		var recs, tr lockedBuffer
		cfg := engineConfig(client, suite(2), &recs, &tr)
		tc.mutate(&cfg)
		_, err := Run(context.Background(), cfg)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: err = %v, want %q", tc.name, err, tc.want)
		}
		if client.calls.Load() != 0 {
			t.Errorf("%s: %d model calls made", tc.name, client.calls.Load())
		}
	}
}

func TestReadRecords(t *testing.T) {
	line := `{"model":"m","problem_id":"p","method":"pot","success":true}`
	tests := []struct {
		name    string
		in      string
		n       int
		partial int
		err     string
	}{
		{"empty", "", 0, 0, ""},
		{"two lines", line + "\n\n" + line + "\n", 2, 0, ""},
		{"no final newline but complete", line, 1, 0, ""},
		{"cut off last line", line + "\n" + `{"model":"m","pro`, 1, 17, ""},
		{"bad middle line", line + "\n{oops\n" + line + "\n", 0, 0, "records line 2"},
		{"missing key", `{"model":"m"}` + "\n", 0, 0, "records line 1: record lacks"},
	}
	for _, tc := range tests {
		recs, partial, err := contract.ReadRecords(strings.NewReader(tc.in))
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%s: err = %v, want %q", tc.name, err, tc.err)
			}
			continue
		}
		if err != nil || len(recs) != tc.n || partial != tc.partial {
			t.Errorf("%s: %d records, partial %d, err %v; want %d, %d", tc.name, len(recs), partial, err, tc.n, tc.partial)
		}
	}
}

// TestEngineAbortKeepsRunsAlreadyFinished: runs that finished before ctx
// ended are written even if the writer had not taken them yet (a regression:
// they used to be dropped and made again on resume).
func TestEngineAbortKeepsRunsAlreadyFinished(t *testing.T) {
	const n = 6
	problems := suite(n)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var ran atomic.Int64
	allRan := make(chan struct{})
	sb := sandbox.Func(func(ctx context.Context, code string) (sandbox.Result, error) {
		if ran.Add(1) == n {
			close(allRan)
		}
		return runnertest.FakeSandbox(ctx, code)
	})
	var recs, tr lockedBuffer
	cfg := engineConfig(&oracleClient{}, problems, &recs, &tr)
	cfg.Deps.Sandbox = sb
	cfg.Methods = []string{contract.MethodPoT}
	cfg.Concurrency = n
	cfg.Progress = func(p Progress) {
		if p.Done != 1 {
			return
		}
		// Every run has executed its program and goes on to finish
		// without another model call; interrupt now.
		select {
		case <-allRan:
		case <-time.After(30 * time.Second):
			t.Error("the runs never reached their programs")
		}
		cancel()
	}
	res, err := Run(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Records) != n || res.Aborted {
		t.Errorf("%d of %d finished runs written (aborted %v)", len(res.Records), n, res.Aborted)
	}
	if got := readBack(t, &recs); len(got) != n {
		t.Errorf("records file has %d lines, want %d", len(got), n)
	}
}

// fullServer is a Source for a server whose batch holds 2 requests and has
// 6 more waiting, whatever the runner does.
type fullServer struct{ gen atomic.Int64 }

func (s *fullServer) Read(context.Context) (concurrency.Signals, error) {
	return concurrency.Signals{Running: 2, Waiting: 6, KVCacheUsage: -1, GenerationTokens: float64(s.gen.Add(100))}, nil
}

// noMetrics is a Source for an endpoint without a metrics page.
type noMetrics struct{ reads atomic.Int64 }

func (s *noMetrics) Read(context.Context) (concurrency.Signals, error) {
	s.reads.Add(1)
	return concurrency.Signals{}, concurrency.ErrNoMetrics
}

func TestEngineAdaptsConcurrency(t *testing.T) {
	t.Run("a server with requests waiting brings the limit down", func(t *testing.T) {
		client := &oracleClient{delay: 2 * time.Millisecond}
		var recs, tr lockedBuffer
		cfg := engineConfig(client, suite(30), &recs, &tr)
		cfg.Signals = &fullServer{}
		cfg.Control = concurrency.Options{Interval: 4 * time.Millisecond}
		res, err := Run(context.Background(), cfg)
		if err != nil {
			t.Fatal(err)
		}
		if res.ConcurrencyMode != string(concurrency.ModeServer) || res.InFlightLimit > 2 || res.InFlightLimit < 1 {
			t.Errorf("settled at %d (%s), want at most the 2 running, from the server's metrics", res.InFlightLimit, res.ConcurrencyMode)
		}
		last := readBack(t, &recs)
		if got := last[len(last)-1].InFlightLimit; got > 2 || got < 1 {
			t.Errorf("the last record's in_flight_limit is %d, want 1 or 2", got)
		}
	})
	t.Run("without metrics the limit holds at the start with no call throughput to read", func(t *testing.T) {
		client := &oracleClient{delay: time.Millisecond}
		var recs, tr lockedBuffer
		cfg := engineConfig(client, suite(20), &recs, &tr)
		src := &noMetrics{}
		cfg.Signals = src
		cfg.Control = concurrency.Options{Interval: 4 * time.Millisecond}
		res, err := Run(context.Background(), cfg)
		if err != nil {
			t.Fatal(err)
		}
		if res.ConcurrencyMode != string(concurrency.ModeCalls) {
			t.Errorf("mode %q, want %q", res.ConcurrencyMode, concurrency.ModeCalls)
		}
		if n := src.reads.Load(); n != 1 {
			t.Errorf("the metrics were read %d times, want once (then no more)", n)
		}
		if got := client.maxSeen.Load(); got > InitialInFlight {
			t.Errorf("client saw %d calls at once, the initial limit is %d", got, InitialInFlight)
		}
		for _, r := range readBack(t, &recs) {
			if r.InFlightLimit != InitialInFlight {
				t.Fatalf("record %s/%s: in_flight_limit %d, want %d", r.ProblemID, r.Method, r.InFlightLimit, InitialInFlight)
			}
		}
	})
	t.Run("fixed concurrency has no controller", func(t *testing.T) {
		var recs, tr lockedBuffer
		cfg := engineConfig(&oracleClient{}, suite(5), &recs, &tr)
		cfg.Concurrency, cfg.FixedConcurrency = 7, true
		res, err := Run(context.Background(), cfg)
		if err != nil {
			t.Fatal(err)
		}
		if res.ConcurrencyMode != "fixed" || res.InFlightLimit != 7 {
			t.Errorf("result %d (%s), want 7 (fixed)", res.InFlightLimit, res.ConcurrencyMode)
		}
	})
}
