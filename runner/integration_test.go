package runner

// Integration tests: the real simulated server (in process, over HTTP via
// httptest), the real openai-go client and the real python sandbox. They
// check the "done when" list of the engine issue.

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"repot.dev/repot-operator/analysis/summary"
	"repot.dev/repot-operator/contract"
	"repot.dev/repot-operator/envs"
	"repot.dev/repot-operator/modelserver/simserver"
	"repot.dev/repot-operator/runner/methods"
	"repot.dev/repot-operator/runner/model"
	"repot.dev/repot-operator/runner/runnertest"
	"repot.dev/repot-operator/runner/sandbox"
)

// TestMain closes the shared python sandbox (runnertest.Python).
func TestMain(m *testing.M) { runnertest.Main(m) }

func realSandbox(t testing.TB) sandbox.Sandbox { return runnertest.Python(t) }

// simOptions are a strong simulated model answering at once.
func simOptions(t testing.TB, seed int64, faults int) simserver.Options {
	t.Helper()
	prof, err := simserver.LookupProfile("strong")
	if err != nil {
		t.Fatal(err)
	}
	return simserver.Options{Profile: prof, Seed: seed, FaultPermille: faults, HangDuration: 20 * time.Millisecond, Logf: t.Logf}
}

// startSim serves a simulated model; wrap, when not nil, wraps its handler.
func startSim(t testing.TB, opts simserver.Options, wrap func(http.Handler) http.Handler) *httptest.Server {
	t.Helper()
	s, err := simserver.New(opts)
	if err != nil {
		t.Fatal(err)
	}
	var h http.Handler = s
	if wrap != nil {
		h = wrap(s)
	}
	hs := httptest.NewServer(h)
	t.Cleanup(hs.Close)
	return hs
}

// simClient is the real client against hs, retrying without waiting.
func simClient(t testing.TB, hs *httptest.Server, attempts int) model.Client {
	t.Helper()
	c, err := model.New(model.Config{
		BaseURL: hs.URL + "/v1", Model: "sim-strong",
		SystemPrefix: contract.NoThinkPrefix, ExtraBody: model.DisableThinkingBody(),
		Retry:   model.RetryPolicy{MaxAttempts: attempts, Initial: time.Millisecond, Max: time.Millisecond},
		Timeout: 10 * time.Minute,
		Sleep:   func(ctx context.Context, _ time.Duration) error { return ctx.Err() },
	})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// openSource returns the first n problems of open-source-120 (n <= 0: all).
func openSource(t testing.TB, n int) []envs.Problem {
	t.Helper()
	ps, err := envs.Suite("open-source-120")
	if err != nil {
		t.Fatal(err)
	}
	if n > 0 && n < len(ps) {
		ps = ps[:n]
	}
	return ps
}

// runInto runs the default methods into dir (resuming what it holds) and
// returns the result and the bytes of summary.json.
func runInto(t testing.TB, ctx context.Context, dir string, client model.Client, problems []envs.Problem, conc int) (Result, []byte) {
	t.Helper()
	out, err := OpenOutput(dir, "", true)
	if err != nil {
		t.Fatal(err)
	}
	defer out.Close()
	opts := methods.DefaultOptions()
	opts.Model = "sim-strong"
	cfg := Config{
		Problems: problems, Methods: contract.DefaultMethods, Options: opts, Concurrency: conc,
		Deps: methods.Deps{Client: client, Sandbox: realSandbox(t), Clock: model.SystemClock},
	}
	res, _, err := Execute(ctx, cfg, out)
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(dir, contract.SummaryFile))
	if err != nil {
		t.Fatal(err)
	}
	return res, b
}

func decodeSummary(t testing.TB, b []byte) summary.Summary {
	t.Helper()
	var s summary.Summary
	if err := json.Unmarshal(b, &s); err != nil {
		t.Fatal(err)
	}
	return s
}

// TestOpenSource120AgainstSimServer is the first done-when check: the whole
// suite with the four default methods completes, the summary has every
// field, and routing counts add up to the number of problems.
func TestOpenSource120AgainstSimServer(t *testing.T) {
	if testing.Short() {
		t.Skip("full suite run; skipped with -short")
	}
	hs := startSim(t, simOptions(t, 1, 0), nil)
	res, b := runInto(t, context.Background(), t.TempDir(), simClient(t, hs, 3), openSource(t, 0), DefaultConcurrency)
	if res.Aborted || len(res.Records) != 480 {
		t.Fatalf("run finished %d of 480 runs (aborted %v)", len(res.Records), res.Aborted)
	}
	s := decodeSummary(t, b)
	if len(s.Models) != 1 || s.Models[0].Problems != 120 || len(s.Models[0].Methods) != 4 || len(s.Models[0].Comparisons) != 6 {
		t.Fatalf("summary shape: %s", b)
	}
	for _, m := range s.Models[0].Methods {
		checkMethodSummary(t, m, 120)
	}
}

// checkMethodSummary checks that every figure of one method is present and
// consistent.
func checkMethodSummary(t *testing.T, m summary.MethodSummary, problems int) {
	t.Helper()
	if m.Total != problems || m.InfraErrors != 0 {
		t.Errorf("%s: total %d infra %d, want %d and 0", m.Method, m.Total, m.InfraErrors, problems)
	}
	routes, solved := 0, 0
	for _, r := range m.Routes {
		routes += r.Count
		solved += r.Solved
	}
	if routes != problems || solved != m.Solved {
		t.Errorf("%s: routes add up to %d (solved %d), want %d (%d)", m.Method, routes, solved, problems, m.Solved)
	}
	if m.Percent == "" || m.Interval == "" || m.CallsPerProblem == "" || m.CostVsPot == "" || m.FailedPrefix == "" {
		t.Errorf("%s: a formatted figure is empty: %+v", m.Method, m)
	}
	if m.Calls < int64(problems) || m.Tokens.Prompt == 0 || m.Tokens.Completion == 0 || m.TokensPerProblem.Prompt == 0 {
		t.Errorf("%s: calls %d tokens %+v", m.Method, m.Calls, m.Tokens)
	}
	if len(m.ByEnvironment) == 0 || len(m.ByComplexity) == 0 || len(m.StopReasons) == 0 {
		t.Errorf("%s: breakdowns missing", m.Method)
	}
	if m.Method == contract.MethodPoT && (m.CostVsPotPermille != 1000 || m.Calls != int64(problems)) {
		t.Errorf("pot: cost %d calls %d", m.CostVsPotPermille, m.Calls)
	}
}

// subset is the slice of open-source-120 the quicker checks use, and
// subsetSeed the simulated model's seed for them.
const (
	subset     = 12
	subsetSeed = 5
)

var (
	cleanOnce    sync.Once
	cleanSummary []byte
)

// clean returns summary.json of an uninterrupted, fault-free run of the
// subset at the default concurrency (computed once per test binary).
func clean(t *testing.T) []byte {
	t.Helper()
	cleanOnce.Do(func() {
		hs := startSim(t, simOptions(t, subsetSeed, 0), nil)
		_, cleanSummary = runInto(t, context.Background(), t.TempDir(), simClient(t, hs, 3), openSource(t, subset), DefaultConcurrency)
	})
	if cleanSummary == nil {
		t.Fatal("the clean reference run failed")
	}
	return cleanSummary
}

// TestSummaryByteIdenticalAcrossConcurrency: two runs with the same seed
// give byte-identical summaries at concurrency 1 and 64.
func TestSummaryByteIdenticalAcrossConcurrency(t *testing.T) {
	want := clean(t)
	for _, m := range decodeSummary(t, want).Models[0].Methods {
		checkMethodSummary(t, m, subset)
	}
	hs := startSim(t, simOptions(t, subsetSeed, 0), nil)
	_, got := runInto(t, context.Background(), t.TempDir(), simClient(t, hs, 3), openSource(t, subset), 1)
	if diff := cmp.Diff(string(want), string(got)); diff != "" {
		t.Errorf("summary at concurrency 1 differs from concurrency 64 (-64 +1):\n%s", diff)
	}
}

// solvedCounts maps method to solved count.
func solvedCounts(s summary.Summary) map[string]int {
	out := map[string]int{}
	for _, m := range s.Models[0].Methods {
		out[m.Method] = m.Solved
	}
	return out
}

// TestFaultsKeepSolvedCounts: a run with 10% injected faults gives the same
// solved counts as a clean run, with the retries visible.
func TestFaultsKeepSolvedCounts(t *testing.T) {
	cb := clean(t)
	faulty := startSim(t, simOptions(t, subsetSeed, 100), nil)
	_, fb := runInto(t, context.Background(), t.TempDir(), simClient(t, faulty, 8), openSource(t, subset), DefaultConcurrency)
	cs, fs := decodeSummary(t, cb), decodeSummary(t, fb)
	if diff := cmp.Diff(solvedCounts(cs), solvedCounts(fs)); diff != "" {
		t.Errorf("solved counts differ with faults (-clean +faults):\n%s", diff)
	}
	var retries int64
	for _, m := range fs.Models[0].Methods {
		retries += m.InfraRetries
		if m.InfraErrors != 0 {
			t.Errorf("%s: %d infra errors with 8 attempts per call", m.Method, m.InfraErrors)
		}
	}
	if retries == 0 {
		t.Errorf("no infra retries visible in the faulty run's summary")
	}
	// Everything but the retry counts is the same.
	for i := range fs.Models[0].Methods {
		fs.Models[0].Methods[i].InfraRetries = 0
	}
	if diff := cmp.Diff(cs, fs); diff != "" {
		t.Errorf("summaries differ beyond retries (-clean +faults):\n%s", diff)
	}
}

// dyingHandler serves n chat completions, then resets every connection, as
// a server that died would.
func dyingHandler(n int64) func(http.Handler) http.Handler {
	return func(h http.Handler) http.Handler {
		var served atomic.Int64
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Path == "/v1/chat/completions" && served.Add(1) > n {
				if hj, ok := w.(http.Hijacker); ok {
					if conn, _, err := hj.Hijack(); err == nil {
						conn.Close()
						return
					}
				}
				http.Error(w, "dead", http.StatusServiceUnavailable)
				return
			}
			h.ServeHTTP(w, r)
		})
	}
}

// TestResumeAfterServerDeath: a run whose server dies mid-way, resumed with
// a healthy server, gives the same summary as an uninterrupted run.
func TestResumeAfterServerDeath(t *testing.T) {
	problems := openSource(t, subset)
	want := clean(t)
	dir := t.TempDir()
	dying := startSim(t, simOptions(t, subsetSeed, 0), dyingHandler(25))
	res, _ := runInto(t, context.Background(), dir, simClient(t, dying, 2), problems, 8)
	infra := 0
	for _, r := range res.Records {
		if r.InfraError != "" {
			infra++
		}
	}
	if infra == 0 {
		t.Fatalf("the dying server caused no infra errors")
	}
	revived := startSim(t, simOptions(t, subsetSeed, 0), nil)
	res2, got := runInto(t, context.Background(), dir, simClient(t, revived, 3), problems, 8)
	if res2.Planned != infra {
		t.Errorf("resume planned %d runs, want the %d infra-error runs", res2.Planned, infra)
	}
	if diff := cmp.Diff(string(want), string(got)); diff != "" {
		t.Errorf("resumed summary differs from an uninterrupted run (-want +got):\n%s", diff)
	}
}

// TestInterruptedRunResumes: cancelling the context (SIGINT) keeps what
// finished; a resume completes the same summary.
func TestInterruptedRunResumes(t *testing.T) {
	problems := openSource(t, subset)
	want := clean(t)
	dir := t.TempDir()
	hs := startSim(t, simOptions(t, subsetSeed, 0), nil)
	ctx, cancel := context.WithCancel(context.Background())
	out, err := OpenOutput(dir, "", false)
	if err != nil {
		t.Fatal(err)
	}
	opts := methods.DefaultOptions()
	opts.Model = "sim-strong"
	cfg := Config{
		Problems: problems, Methods: contract.DefaultMethods, Options: opts, Concurrency: 4,
		Deps: methods.Deps{Client: simClient(t, hs, 3), Sandbox: realSandbox(t), Clock: model.SystemClock},
		Progress: func(p Progress) {
			if p.Done == 5 {
				cancel()
			}
		},
	}
	res, _, err := Execute(ctx, cfg, out)
	out.Close()
	if err != nil {
		t.Fatal(err)
	}
	if !res.Aborted || len(res.Records) >= 4*subset {
		t.Fatalf("interrupted run: aborted %v, %d records", res.Aborted, len(res.Records))
	}
	_, got := runInto(t, context.Background(), dir, simClient(t, hs, 3), problems, 4)
	if diff := cmp.Diff(string(want), string(got)); diff != "" {
		t.Errorf("resumed summary differs (-want +got):\n%s", diff)
	}
}
