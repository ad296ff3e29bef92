package runner

import (
	"context"
	"fmt"
	"os"
	"sort"
	"strconv"
	"testing"
	"time"

	"repot.dev/repot-operator/envs"
	"repot.dev/repot-operator/runner/model"
	"repot.dev/repot-operator/runner/program"
	"repot.dev/repot-operator/runner/prompt"
	"repot.dev/repot-operator/runner/simserver"
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
				Replay(e, it.p, init, goal, moves, it.p.MaxSteps)
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
// against a simulated server with its default latency model and throughput
// cap, and reports the share of the server's decode capacity each run used
// (from /metrics before and after) and its wall clock over the capacity
// bound (the simulated seconds the decoded tokens need at the cap). It
// measures, in one run:
//
//   - order=suite/inflight=64: the old engine (suite order, 64 calls in
//     flight);
//   - order=longest-first/inflight=64: the order alone;
//   - order=longest-first/inflight=N: the order with the calls in flight
//     that saturate the server without oversubscribing it
//     (simserver.Latency.SaturatingInFlight: 27 for the default model).
//
// A server whose aggregate decode rate is capped shares it among every
// sequence in flight: with 64 in flight each decodes at a third of its top
// speed, and the longest replies straggle at the end however early they
// start. REPOT_BENCH_CONCURRENCY replaces N. The latency scale (real seconds
// per simulated second) comes from REPOT_BENCH_LATENCY_SCALE (default 0.25,
// so each run takes about half a minute; 1 is real time).
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
	sized := simserver.DefaultLatency.SaturatingInFlight()
	if v := os.Getenv("REPOT_BENCH_CONCURRENCY"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			b.Fatalf("REPOT_BENCH_CONCURRENCY=%q: want a positive integer", v)
		}
		sized = n
	}
	for _, c := range []struct {
		order Order
		conc  int
	}{{OrderSuite, DefaultConcurrency}, {OrderLongestFirst, DefaultConcurrency}, {OrderLongestFirst, sized}} {
		b.Run(fmt.Sprintf("order=%s/inflight=%d", c.order, c.conc), func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				capacityShare(b, scale, c.order, c.conc)
			}
		})
	}
}

// capacityShare makes one capacity measurement with the given run order.
func capacityShare(b *testing.B, scale float64, order Order, conc int) {
	opts := simOptions(b, 1, 0)
	opts.Latency = simserver.DefaultLatency
	opts.Latency.Scale = scale
	hs := startSim(b, opts, nil)
	out, err := OpenOutput(b.TempDir(), "", true)
	if err != nil {
		b.Fatal(err)
	}
	defer out.Close()
	ropts := DefaultOptions()
	ropts.Model = "sim-strong"
	cfg := Config{
		Problems: openSource(b, 0), Methods: DefaultMethods, Options: ropts, Concurrency: conc, Order: order,
		Deps: Deps{Client: simClient(b, hs, 3), Sandbox: realSandbox(b), Clock: model.SystemClock},
	}
	before, err := simserver.Scrape(context.Background(), nil, hs.URL, time.Now())
	if err != nil {
		b.Fatal(err)
	}
	res, _, err := Execute(context.Background(), cfg, out)
	if err != nil {
		b.Fatal(err)
	}
	after, err := simserver.Scrape(context.Background(), nil, hs.URL, time.Now())
	if err != nil {
		b.Fatal(err)
	}
	share, err := simserver.CapacityShare(before, after)
	if err != nil {
		b.Fatal(err)
	}
	infra, retries, completion := 0, 0, 0
	for _, r := range res.Records {
		completion += r.CompletionTokens
		retries += r.InfraRetries
		if r.InfraError != "" {
			infra++
		}
	}
	if infra > 0 || retries > 0 {
		b.Errorf("%d infra errors and %d retries: the measurement is not of a healthy run", infra, retries)
	}
	decoded := after.DecodeTokens - before.DecodeTokens
	bound := decoded / after.Capacity
	b.Logf("order %s, concurrency %d: %d runs, max %d calls in flight, %d completion tokens recorded, server: %.0f completion / %.0f decoded tokens: %s; capacity bound %.0f simulated s, wall %.0f simulated s (%.3fx)",
		order, conc, len(res.Records), res.MaxInFlight, completion, after.CompletionTokens-before.CompletionTokens, decoded, share,
		bound, share.SimulatedSeconds, share.SimulatedSeconds/bound)
	b.ReportMetric(100*share.Capacity, "%capacity")
	b.ReportMetric(100*share.Busy, "%busy")
	b.ReportMetric(share.TokensPerSecond, "tokens/sim-s")
	b.ReportMetric(share.SimulatedSeconds/bound, "wall/bound")
}
