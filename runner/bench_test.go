package runner

import (
	"context"
	"fmt"
	"os"
	"sort"
	"strconv"
	"sync"
	"testing"
	"time"

	"repot.dev/repot-operator/contract"
	"repot.dev/repot-operator/contract/program"
	"repot.dev/repot-operator/contract/prompt"
	"repot.dev/repot-operator/contract/replay"
	"repot.dev/repot-operator/envs"
	"repot.dev/repot-operator/modelserver/simserver"
	"repot.dev/repot-operator/runner/concurrency"
	"repot.dev/repot-operator/runner/methods"
	"repot.dev/repot-operator/runner/model"
	"repot.dev/repot-operator/runner/sandbox"
)

// BenchmarkPerCallWork measures the work a model call costs outside the
// model: extract the program, run it in the python sandbox, parse the moves,
// replay the plan. The replies are the simulated server's first answers to
// open-source-120. It reports the median and p99 in milliseconds.
//
//	go test -run '^$' -bench PerCallWork -benchtime 240x ./runner/
func BenchmarkPerCallWork(b *testing.B) {
	sb := realSandbox(b)
	hs := startSim(b, simOptions(b, 1, 0), nil)
	client := simClient(b, hs, 3)
	problems := openSource(b, 0)
	type item struct {
		p     *envs.Problem
		reply string
	}
	items := make([]item, len(problems))
	for i := range problems {
		resp, err := client.Complete(context.Background(), model.Request{Messages: prompt.Initial(&problems[i]), MaxTokens: 16384})
		if err != nil {
			b.Fatal(err)
		}
		items[i] = item{&problems[i], resp.Content}
	}
	durs := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		it := items[i%len(items)]
		start := time.Now()
		code := program.Extract(it.reply)
		res, err := sb.Run(context.Background(), code)
		if err != nil {
			b.Fatal(err)
		}
		if res.Failure == "" {
			if moves, err := program.ParseMoves(res.Stdout, code); err == nil {
				e, _ := it.p.Env()
				init, _ := it.p.Initial()
				goal, _ := it.p.Goal()
				replay.Replay(e, it.p, init, goal, moves, it.p.MaxSteps)
			}
		}
		durs = append(durs, time.Since(start))
	}
	b.StopTimer()
	sort.Slice(durs, func(i, j int) bool { return durs[i] < durs[j] })
	ms := func(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
	b.ReportMetric(ms(durs[len(durs)/2]), "median-ms")
	b.ReportMetric(ms(durs[min(len(durs)-1, len(durs)*99/100)]), "p99-ms")
}

// BenchmarkCapacityShare runs open-source-120 x the four default methods
// (longest first) against a simulated server and reports the share of the
// server's decode capacity each run used (from /metrics before and after),
// its wall clock over the capacity bound (the simulated seconds the decoded
// tokens need at the cap) and the calls in flight the runners settled at.
// It measures, in one run, three latency models that saturate at very
// different calls in flight (simserver.Latency.SaturatingInFlight):
//
//   - model=default: simserver.DefaultLatency, 27;
//   - model=narrow: a fast small model, 400 tokens/s per sequence under the
//     same 2500 tokens/s cap, 8;
//   - model=wide: 120 tokens/s per sequence under a 12288 tokens/s cap,
//     128. So many in flight need more work than the suite to fill the
//     server for long: it runs the suite 5 times (problem ids suffixed), so
//     that its capacity bound, like the others', is about 85 simulated
//     seconds and the longest run fits in it;
//
// each with:
//
//   - inflight=64: a fixed 64 calls in flight (the old default);
//   - inflight=adaptive: the default configuration (no concurrency given:
//     the concurrency controller, bounded by DefaultConcurrency, reading
//     the server's vLLM metrics);
//
// and with 4 shards (4 engines in this process, each with its own
// controller, sharing the default model's server): shards=4/inflight=16
// (the operator's old 4 x 16) and shards=4/inflight=adaptive.
//
// REPOT_BENCH_CONCURRENCY=N adds a fixed N for each model. The latency scale
// (real seconds per simulated second) comes from REPOT_BENCH_LATENCY_SCALE
// (default 0.25, so each case takes about half a minute; 1 is real time);
// the controllers step every concurrency.DefaultInterval of simulated
// time. A program the sandbox
// already ran (the same reply again: a replica, or an earlier case) is not
// run again: its result comes back after the time the first run took, so
// the python sandbox's CPU is paid once per program.
//
//	go test -run '^$' -bench CapacityShare -benchtime 1x ./runner/
func BenchmarkCapacityShare(b *testing.B) {
	scale := 0.25
	if v := os.Getenv("REPOT_BENCH_LATENCY_SCALE"); v != "" {
		f, err := strconv.ParseFloat(v, 64)
		if err != nil {
			b.Fatal(err)
		}
		scale = f
	}
	var sized []int
	if v := os.Getenv("REPOT_BENCH_CONCURRENCY"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			b.Fatalf("REPOT_BENCH_CONCURRENCY=%q: want a positive integer", v)
		}
		sized = append(sized, n)
	}
	sb := newMemoSandbox(realSandbox(b))
	for _, m := range benchModels() {
		for _, conc := range append([]int{64, 0}, sized...) {
			name := "adaptive"
			if conc > 0 {
				name = strconv.Itoa(conc)
			}
			b.Run(fmt.Sprintf("model=%s/inflight=%s", m.name, name), func(b *testing.B) {
				for i := 0; i < b.N; i++ {
					capacityShare(b, scale, m, 1, conc, sb)
				}
			})
		}
	}
	def := benchModels()[0]
	for _, conc := range []int{16, 0} {
		name := "adaptive"
		if conc > 0 {
			name = strconv.Itoa(conc)
		}
		b.Run(fmt.Sprintf("model=%s/shards=4/inflight=%s", def.name, name), func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				capacityShare(b, scale, def, 4, conc, sb)
			}
		})
	}
}

// benchModel is a latency model of BenchmarkCapacityShare and the times the
// suite runs against it.
type benchModel struct {
	name     string
	lat      simserver.Latency
	replicas int
}

func benchModels() []benchModel {
	narrow := simserver.DefaultLatency
	narrow.DecodeTokensPerSecond = 400
	wide := simserver.DefaultLatency
	wide.MaxTokensPerSecond = 12288
	return []benchModel{{"default", simserver.DefaultLatency, 1}, {"narrow", narrow, 1}, {"wide", wide, 5}}
}

// replicate returns the problems n times, ids suffixed from the second on.
func replicate(ps []envs.Problem, n int) []envs.Problem {
	out := append([]envs.Problem(nil), ps...)
	for r := 2; r <= n; r++ {
		for _, p := range ps {
			p.ProblemID = fmt.Sprintf("%s#%d", p.ProblemID, r)
			out = append(out, p)
		}
	}
	return out
}

// memoSandbox runs each program once; the same program again gets the
// first result after the time the first run took.
type memoSandbox struct {
	sb   sandbox.Sandbox
	mu   sync.Mutex
	runs map[string]*memoRun
}

type memoRun struct {
	done chan struct{}
	res  sandbox.Result
	err  error
}

func newMemoSandbox(sb sandbox.Sandbox) *memoSandbox {
	return &memoSandbox{sb: sb, runs: map[string]*memoRun{}}
}

func (m *memoSandbox) Run(ctx context.Context, code string) (sandbox.Result, error) {
	m.mu.Lock()
	r, ok := m.runs[code]
	if !ok {
		r = &memoRun{done: make(chan struct{})}
		m.runs[code] = r
	}
	m.mu.Unlock()
	if !ok {
		r.res, r.err = m.sb.Run(ctx, code)
		close(r.done)
		return r.res, r.err
	}
	<-r.done
	if err := model.SleepContext(ctx, r.res.Duration); err != nil {
		return sandbox.Result{}, err
	}
	return r.res, r.err
}

// capacityShare makes one capacity measurement: shards engines, each with
// conc calls in flight (0: the default configuration, adaptive).
func capacityShare(b *testing.B, scale float64, m benchModel, shards, conc int, sb sandbox.Sandbox) {
	opts := simOptions(b, 1, 0)
	opts.Latency = m.lat
	opts.Latency.Scale = scale
	hs := startSim(b, opts, nil)
	problems := replicate(openSource(b, 0), m.replicas)
	before, err := simserver.Scrape(context.Background(), nil, hs.URL, time.Now())
	if err != nil {
		b.Fatal(err)
	}
	results := make([]Result, shards)
	errs := make([]error, shards)
	var wg sync.WaitGroup
	for i := 0; i < shards; i++ {
		out, err := OpenOutput(b.TempDir(), "", true)
		if err != nil {
			b.Fatal(err)
		}
		defer out.Close()
		ropts := methods.DefaultOptions()
		ropts.Model = "sim-strong"
		cfg := Config{
			Problems: problems, Methods: contract.DefaultMethods, Options: ropts, Order: OrderLongestFirst,
			ShardIndex: i, ShardCount: shards,
			Deps: methods.Deps{Client: simClient(b, hs, 3), Sandbox: sb, Clock: model.SystemClock},
		}
		if conc > 0 {
			cfg.Concurrency, cfg.FixedConcurrency = conc, true
		}
		cfg.Control.Interval = time.Duration(scale * float64(concurrency.DefaultInterval))
		if path := os.Getenv("REPOT_BENCH_TRACE"); path != "" {
			// The controllers' steps, appended to the file named.
			f, err := os.OpenFile(path, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
			if err != nil {
				b.Fatal(err)
			}
			defer f.Close()
			shard := i
			var mu sync.Mutex
			cfg.Control.OnStep = func(st concurrency.Step) {
				mu.Lock()
				defer mu.Unlock()
				fmt.Fprintf(f, "%s shard %d: %s load %.1f running %.1f waiting %.1f speed %.1f top %.1f target %.1f -> limit %d\n",
					st.At.Format("15:04:05.000"), shard, st.Action, st.Load, st.Running, st.Waiting, st.Speed, st.TopSpeed, st.Target, st.Limit)
			}
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			results[i], _, errs[i] = Execute(context.Background(), cfg, out)
		}()
	}
	wg.Wait()
	after, err := simserver.Scrape(context.Background(), nil, hs.URL, time.Now())
	if err != nil {
		b.Fatal(err)
	}
	for _, err := range errs {
		if err != nil {
			b.Fatal(err)
		}
	}
	share, err := simserver.CapacityShare(before, after)
	if err != nil {
		b.Fatal(err)
	}
	infra, retries, completion, runs, settled, maxInFlight := 0, 0, 0, 0, 0, 0
	var perShard []string
	for _, res := range results {
		for _, r := range res.Records {
			completion += r.CompletionTokens
			retries += r.InfraRetries
			if r.InfraError != "" {
				infra++
			}
		}
		runs += len(res.Records)
		settled += res.InFlightLimit
		maxInFlight += res.MaxInFlight
		perShard = append(perShard, fmt.Sprintf("%d (%s, max %d)", res.InFlightLimit, res.ConcurrencyMode, res.MaxInFlight))
	}
	if infra > 0 || retries > 0 {
		b.Errorf("%d infra errors and %d retries: the measurement is not of a healthy run", infra, retries)
	}
	decoded := after.DecodeTokens - before.DecodeTokens
	bound := decoded / after.Capacity
	b.Logf("model %s (saturates at %d in flight), %d shards, concurrency %d (0: adaptive): %d runs, settled at %v, %d completion tokens recorded, server: %.0f completion / %.0f decoded tokens: %s; capacity bound %.0f simulated s, wall %.0f simulated s (%.3fx)",
		m.name, m.lat.SaturatingInFlight(), shards, conc, runs, perShard, completion, after.CompletionTokens-before.CompletionTokens, decoded, share,
		bound, share.SimulatedSeconds, share.SimulatedSeconds/bound)
	b.ReportMetric(100*share.Capacity, "%capacity")
	b.ReportMetric(100*share.Busy, "%busy")
	b.ReportMetric(share.TokensPerSecond, "tokens/sim-s")
	b.ReportMetric(share.SimulatedSeconds/bound, "wall/bound")
	b.ReportMetric(float64(settled), "settled-inflight")
	b.ReportMetric(float64(m.lat.SaturatingInFlight()), "saturating-inflight")
}
