package concurrency

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestLawStep(t *testing.T) {
	// top is 100 tokens/s per request; headroom 1.25.
	tests := []struct {
		name      string
		slowStart bool
		limit     int
		s         sample
		want      int
		action    string
	}{
		{"no measurement holds", false, 10, sample{}, 10, "hold"},
		{"slow start doubles while below the knee", true, 8,
			sample{valid: true, load: 8, running: 8, speed: 100, peak: 8, blocked: true}, 16, "slow-start"},
		{"no growth when the limit held nothing back", false, 8,
			sample{valid: true, load: 5, running: 5, speed: 100, peak: 5}, 8, "hold"},
		{"below the target the limit grows by the relative gap", false, 20,
			sample{valid: true, load: 20, running: 20, speed: 100, peak: 20, blocked: true}, 25, "increase"},
		{"near the target it grows by one", false, 20,
			sample{valid: true, load: 20, running: 20, speed: 82, peak: 20, blocked: true}, 21, "increase"},
		{"over the target it scales by target/load", false, 40,
			sample{valid: true, load: 40, running: 40, speed: 50, peak: 40, blocked: true}, 25, "decrease"},
		{"a decrease halves at most", false, 40,
			sample{valid: true, load: 40, running: 40, speed: 10, peak: 40, blocked: true}, 20, "decrease"},
		{"a previous decrease still draining holds", false, 30,
			sample{valid: true, load: 40, running: 40, speed: 50, peak: 40, blocked: true}, 30, "hold"},
		{"inside the dead band it holds", false, 20,
			sample{valid: true, load: 21, running: 21, speed: 78, peak: 20, blocked: true}, 20, "hold"},
		{"requests waiting: the target is those running", false, 16,
			sample{valid: true, load: 24, running: 16, waiting: 8, speed: 100, peak: 16, blocked: true}, 10, "decrease"},
		{"KV cache nearly full: no growth past those running", false, 16,
			sample{valid: true, load: 16, running: 16, speed: 100, kv: 0.95, peak: 16, blocked: true}, 16, "hold"},
		{"never below one", false, 1,
			sample{valid: true, load: 30, running: 30, speed: 1, peak: 1, blocked: true}, 1, "decrease"},
		{"a decrease from a limit that held nothing back starts from the peak", false, 64,
			sample{valid: true, load: 40, running: 40, speed: 50, peak: 40}, 25, "decrease"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			l := law{headroom: 1.25, min: 1, max: 256, top: 100, slowStart: tc.slowStart}
			if tc.s.kv == 0 {
				tc.s.kv = -1
			}
			got, action, _ := l.step(tc.s, tc.limit)
			if got != tc.want || action != tc.action {
				t.Errorf("step(%+v, %d) = %d %s, want %d %s", tc.s, tc.limit, got, action, tc.want, tc.action)
			}
		})
	}
}

func TestLawHoldsAfterDoubling(t *testing.T) {
	l := law{headroom: 1.25, min: 1, max: 256, top: 100, slowStart: true}
	s := sample{valid: true, load: 8, running: 8, speed: 100, peak: 8, blocked: true, kv: -1}
	var got []int
	limit := 8
	for i := 0; i < 4; i++ {
		limit, _, _ = l.step(s, limit)
		got = append(got, limit)
		s.load, s.running, s.peak = float64(limit), float64(limit), limit
	}
	if diff := cmp.Diff([]int{16, 16, 32, 32}, got); diff != "" {
		t.Errorf("slow start doubles every other step (-want +got):\n%s", diff)
	}
}

func TestLawCapsAtMax(t *testing.T) {
	l := law{headroom: 1.25, min: 1, max: 40, top: 100, slowStart: true}
	got, _, _ := l.step(sample{valid: true, load: 32, running: 32, speed: 100, peak: 32, blocked: true, kv: -1}, 32)
	if got != 40 {
		t.Errorf("limit %d, want the maximum 40", got)
	}
}

// fakeClock advances by step at each reading.
type fakeClock struct {
	t    time.Time
	step time.Duration
}

func (c *fakeClock) Now() time.Time { c.t = c.t.Add(c.step); return c.t }

// fakeGate is a Limiter whose calls in flight follow its limit.
type fakeGate struct {
	limit, inFlight int
	blocked         bool
}

func (g *fakeGate) Limit() int        { return g.limit }
func (g *fakeGate) SetLimit(n int)    { g.limit = n }
func (g *fakeGate) InFlight() int     { return g.inFlight }
func (g *fakeGate) Peak() (int, bool) { return g.inFlight, g.blocked }

// server is a fake Source: a server that decodes at most cap tokens/s, each
// request at top speed 100 tokens/s, shared by every request running, with
// shards the gates whose calls are its requests.
type server struct {
	cap    float64
	shards []*fakeGate
	gen    float64
	err    error
}

func (s *server) running() float64 {
	n := 0
	for _, g := range s.shards {
		n += g.inFlight
	}
	return float64(n)
}

func (s *server) advance(dt float64) {
	s.gen += min(100*s.running(), s.cap) * dt
}

func (s *server) Read(context.Context) (Signals, error) {
	if s.err != nil {
		return Signals{}, s.err
	}
	return Signals{Running: s.running(), GenerationTokens: s.gen, KVCacheUsage: -1}, nil
}

// TestControllersShareAServer: four controllers on one server, none
// knowing of the others, bring the total near the knee (20 requests at
// 100 tokens/s reach the 2000 tokens/s cap) with equal shares.
func TestControllersShareAServer(t *testing.T) {
	srv := &server{cap: 2000}
	clock := &fakeClock{t: time.Unix(0, 0), step: 0}
	var ctls []*Controller
	for i := 0; i < 4; i++ {
		g := &fakeGate{blocked: true}
		srv.shards = append(srv.shards, g)
		ctls = append(ctls, New(Options{Max: 256, Initial: 1, Samples: 1, Source: srv, Clock: clock}, g))
	}
	for step := 0; step < 60; step++ {
		clock.t = clock.t.Add(time.Second)
		srv.advance(1)
		for _, c := range ctls {
			c.Step(context.Background())
		}
		for _, g := range srv.shards {
			g.inFlight = g.limit // the calls follow the limits set in this step
		}
	}
	total := srv.running()
	if total < 20 || total > 28 {
		t.Errorf("total in flight %v, want 20-28 (the knee 20, the headroom and an additive step)", total)
	}
	for i, g := range srv.shards {
		if g.limit < 5 || g.limit > 7 {
			t.Errorf("shard %d limit %d, want a fair share of 5-7", i, g.limit)
		}
	}
	if m := ctls[0].Mode(); m != ModeServer {
		t.Errorf("mode %s, want %s", m, ModeServer)
	}
}

// TestControllerFallsBackOnCalls: a server without metrics (ErrNoMetrics)
// is asked no more, and the throughput of the observed calls drives the
// limit.
func TestControllerFallsBackOnCalls(t *testing.T) {
	srv := &server{err: ErrNoMetrics}
	clock := &fakeClock{t: time.Unix(0, 0)}
	g := &fakeGate{blocked: true, inFlight: 4}
	c := New(Options{Max: 64, Initial: 4, Samples: 1, Source: srv, Clock: clock}, g)
	var limits []int
	for step := 0; step < 4; step++ {
		clock.t = clock.t.Add(time.Second)
		c.Observe(1000, 10*time.Second) // 100 tokens/s per call: no slowdown
		c.Observe(1000, 10*time.Second)
		limits = append(limits, c.Step(context.Background()).Limit)
		g.inFlight = g.limit
		srv.err = errors.New("must not be asked again")
	}
	if diff := cmp.Diff([]int{8, 8, 16, 16}, limits); diff != "" {
		t.Errorf("limits (-want +got):\n%s", diff)
	}
	if c.Mode() != ModeCalls {
		t.Errorf("mode %s, want %s", c.Mode(), ModeCalls)
	}
	// The calls slow to a third: the limit comes down.
	var st Step
	for step := 0; step < 2 && st.Action != "decrease"; step++ {
		clock.t = clock.t.Add(time.Second)
		c.Observe(1000, 30*time.Second)
		c.Observe(1000, 30*time.Second)
		st = c.Step(context.Background())
	}
	if st.Action != "decrease" || st.Limit >= 16 {
		t.Errorf("after a slowdown: %+v, want a decrease", st)
	}
}

func TestSettled(t *testing.T) {
	g := &fakeGate{blocked: true}
	c := New(Options{Initial: 3}, g)
	if got := c.Settled(); got != 3 {
		t.Errorf("Settled() before any step = %d, want the limit 3", got)
	}
	c.history = []int{30, 27, 28, 27, 90}
	if got := c.Settled(); got != 28 {
		t.Errorf("Settled() = %d, want the median 28", got)
	}
}

func TestParseSignals(t *testing.T) {
	page := `# HELP vllm:num_requests_running Number of requests in model execution batches.
# TYPE vllm:num_requests_running gauge
vllm:num_requests_running{engine="0",model_name="m"} 20
vllm:num_requests_running{engine="1",model_name="m"} 7
vllm:num_requests_running{engine="0",model_name="other"} 100
# TYPE vllm:num_requests_waiting gauge
vllm:num_requests_waiting{engine="0",model_name="m"} 3
# TYPE vllm:gpu_cache_usage_perc gauge
vllm:gpu_cache_usage_perc{engine="0",model_name="m"} 0.5
vllm:gpu_cache_usage_perc{engine="1",model_name="m"} 0.7
# TYPE vllm:generation_tokens_total counter
vllm:generation_tokens_total{engine="0",model_name="m"} 1e+06
vllm:generation_tokens_total{engine="1",model_name="m"} 5000
`
	got, err := ParseSignals(strings.NewReader(page), "m")
	if err != nil {
		t.Fatal(err)
	}
	want := Signals{Running: 27, Waiting: 3, KVCacheUsage: 0.6, GenerationTokens: 1005000}
	if diff := cmp.Diff(want, got, cmpApprox); diff != "" {
		t.Errorf("ParseSignals (-want +got):\n%s", diff)
	}
	bad := []struct{ name, page, want string }{
		{"not the text format", "<html>hello</html>", "parsing"},
		{"no vLLM metrics", "up 1\n", "no vllm:num_requests_running"},
		{"another model only", `vllm:num_requests_running{model_name="x"} 1` + "\n" + `vllm:generation_tokens_total{model_name="x"} 1` + "\n", "no vllm:num_requests_running"},
		{"negative count", `vllm:num_requests_running{model_name="m"} -1` + "\n", "not a count"},
		{"NaN", `vllm:num_requests_running{model_name="m"} NaN` + "\n", "not a count"},
	}
	for _, tc := range bad {
		if _, err := ParseSignals(strings.NewReader(tc.page), "m"); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: err = %v, want one saying %q", tc.name, err, tc.want)
		}
	}
}

var cmpApprox = cmp.Comparer(func(a, b float64) bool { return a-b < 1e-9 && b-a < 1e-9 })

// FuzzParseSignals: no page, however hostile, panics the parser, and what
// it accepts is a set of finite, non-negative counts.
func FuzzParseSignals(f *testing.F) {
	f.Add("vllm:num_requests_running{model_name=\"m\"} 1\nvllm:generation_tokens_total{model_name=\"m\"} 2\n")
	f.Add("# TYPE vllm:num_requests_running histogram\nvllm:num_requests_running_bucket{le=\"+Inf\"} 1\n")
	f.Add("vllm:num_requests_running{model_name=\"m\"} 1e400\n")
	f.Add("\x00\xff{{{}}} \"")
	f.Fuzz(func(t *testing.T, page string) {
		s, err := ParseSignals(strings.NewReader(page), "m")
		if err != nil {
			return
		}
		for _, v := range []float64{s.Running, s.Waiting, s.GenerationTokens} {
			if v < 0 || v != v || v > 1e308 {
				t.Fatalf("accepted %v from %q", v, page)
			}
		}
		if s.KVCacheUsage > 1 {
			t.Fatalf("KV cache usage %v > 1 from %q", s.KVCacheUsage, page)
		}
	})
}

// TestControllerGivesUpAFailingSource: a metrics page that never answers
// (a name the page's client cannot resolve) does not freeze the limit: after
// maxFailedSteps steps without a reading the calls drive it, and they grow it.
func TestControllerGivesUpAFailingSource(t *testing.T) {
	srv := &server{err: errors.New("dial tcp: lookup m.ns.svc: no such host")}
	clock := &fakeClock{t: time.Unix(0, 0)}
	g := &fakeGate{blocked: true, inFlight: 2}
	c := New(Options{Max: 64, Initial: 2, Samples: 1, Source: srv, Clock: clock}, g)
	var limits []int
	var modes []Mode
	for step := 0; step < 8; step++ {
		clock.t = clock.t.Add(time.Second)
		c.Observe(1000, 10*time.Second) // 100 tokens/s per call: no slowdown
		c.Observe(1000, 10*time.Second)
		st := c.Step(context.Background())
		limits, modes = append(limits, st.Limit), append(modes, st.Mode)
		g.inFlight = g.limit
	}
	if diff := cmp.Diff([]Mode{ModeServer, ModeServer, ModeCalls, ModeCalls, ModeCalls, ModeCalls, ModeCalls, ModeCalls}, modes); diff != "" {
		t.Errorf("modes (-want +got):\n%s", diff)
	}
	if limits[1] != 2 || limits[len(limits)-1] < 8 {
		t.Errorf("limits %v: want 2 while the source is asked, then growth to at least 8", limits)
	}
	if err := c.SourceError(); err == nil || !strings.Contains(err.Error(), "no such host") {
		t.Errorf("SourceError() = %v, want the page's last error", err)
	}
}

// TestCallModeCarriesFewCalls: an interval in which fewer than
// minCallsPerStep calls ended is not judged; its calls count in the next.
func TestCallModeCarriesFewCalls(t *testing.T) {
	clock := &fakeClock{t: time.Unix(0, 0)}
	g := &fakeGate{blocked: true, inFlight: 4}
	c := New(Options{Max: 64, Initial: 4, Samples: 1, Clock: clock}, g)
	clock.t = clock.t.Add(time.Second)
	c.Observe(1000, 10*time.Second)
	if st := c.Step(context.Background()); st.Action != "hold" || st.Limit != 4 {
		t.Errorf("one call: %+v, want a hold at 4", st)
	}
	clock.t = clock.t.Add(time.Second)
	c.Observe(1000, 10*time.Second)
	if st := c.Step(context.Background()); st.Action != "slow-start" || st.Speed != 100 {
		t.Errorf("two calls over two intervals: %+v, want slow start at 100 tokens/s", st)
	}
}
