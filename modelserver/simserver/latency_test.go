package simserver

import (
	"context"
	"math"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"repot.dev/repot-operator/runner/concurrency"
)

func TestDecoderSharesThroughput(t *testing.T) {
	lat := Latency{Scale: 1, DecodeTokensPerSecond: 100, MaxTokensPerSecond: 250}
	tests := []struct {
		n    int
		want float64
	}{{0, 0}, {1, 100}, {2, 100}, {3, 250.0 / 3}, {10, 25}}
	for _, tc := range tests {
		if got := lat.rate(tc.n); math.Abs(got-tc.want) > 1e-9 {
			t.Errorf("rate(%d) = %v, want %v", tc.n, got, tc.want)
		}
	}
	d := newDecoder(lat, nil)
	a := &job{left: 50, done: make(chan struct{})}
	b := &job{left: 1000, done: make(chan struct{})}
	c := &job{left: 1000, done: make(chan struct{})}
	for _, j := range []*job{a, b, c} {
		d.jobs[j] = struct{}{}
	}
	d.step(0.5) // 3 jobs share 250 tok/s: 41.7 tokens each
	if math.Abs(a.left-(50-250.0/3*0.5)) > 1e-9 {
		t.Errorf("a.left = %v", a.left)
	}
	d.step(0.5) // a needs 8.33 more (0.1 s); then b and c run at 100 tok/s for 0.4 s
	select {
	case <-a.done:
	default:
		t.Fatal("a not done")
	}
	if len(d.jobs) != 2 {
		t.Fatalf("jobs left %d", len(d.jobs))
	}
	d.step(1) // 2 jobs at 100 tok/s each
	wantLeft := 1000 - 250.0/3*0.6 - 40 - 100
	if math.Abs(b.left-wantLeft) > 1e-9 || math.Abs(c.left-wantLeft) > 1e-9 {
		t.Errorf("b.left %v c.left %v, want %v", b.left, c.left, wantLeft)
	}
	decoded, active, n := d.stats()
	if math.Abs(decoded-(50+2*(1000-wantLeft))) > 1e-6 || math.Abs(active-2) > 1e-9 || n != 2 {
		t.Errorf("stats decoded=%v active=%v n=%d", decoded, active, n)
	}
}

func TestTTFT(t *testing.T) {
	l := Latency{Scale: 0.5, TTFT: 100 * time.Millisecond, PrefillTokensPerSecond: 1000}
	if got := l.ttft(500); got != 600*time.Millisecond {
		t.Errorf("ttft = %v", got)
	}
	if got := l.real(600 * time.Millisecond); got != 300*time.Millisecond {
		t.Errorf("real = %v", got)
	}
}

func TestSaturatingInFlight(t *testing.T) {
	cases := []struct {
		name string
		lat  Latency
		want int
	}{
		{"default model: 2500/120 = 20.8 decode at the cap, plus a quarter", DefaultLatency, 27},
		{"exact multiple", Latency{DecodeTokensPerSecond: 100, MaxTokensPerSecond: 1600}, 20},
		{"no cap", Latency{DecodeTokensPerSecond: 100}, 0},
		{"no per-sequence speed", Latency{MaxTokensPerSecond: 1600}, 0},
		{"a batch limit below the knee is the knee", Latency{DecodeTokensPerSecond: 100, MaxTokensPerSecond: 1600, MaxNumSeqs: 8}, 8},
		{"a batch limit above the knee changes nothing", Latency{DecodeTokensPerSecond: 100, MaxTokensPerSecond: 1600, MaxNumSeqs: 256}, 20},
	}
	for _, tc := range cases {
		if got := tc.lat.SaturatingInFlight(); got != tc.want {
			t.Errorf("%s: SaturatingInFlight() = %d, want %d", tc.name, got, tc.want)
		}
		if n := tc.lat.SaturatingInFlight(); n > 0 && tc.lat.MaxNumSeqs == 0 && float64(n)*tc.lat.rate(n) < tc.lat.MaxTokensPerSecond-1e-9 {
			t.Errorf("%s: %d in flight decode %g tokens/s, below the cap %g", tc.name, n, float64(n)*tc.lat.rate(n), tc.lat.MaxTokensPerSecond)
		}
	}
}

// TestBatchRunningWaiting: past MaxNumSeqs requests wait, in arrival order,
// and /metrics reports the split under vLLM's names, read by the runners'
// concurrency controller.
func TestBatchRunningWaiting(t *testing.T) {
	lat := Latency{Scale: 1, DecodeTokensPerSecond: 100, MaxTokensPerSecond: 150, MaxNumSeqs: 2, KVCacheTokens: 10000}
	s, err := New(Options{Profile: Profiles["strong"], Latency: lat, Logf: t.Logf})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 4)
	for i := 0; i < 4; i++ {
		go func() { done <- s.dec.generate(ctx, 1000, 1000) }()
	}
	var st decoderStats
	deadline := time.Now().Add(5 * time.Second)
	for {
		st = s.dec.batchStats()
		if st.running+st.waiting == 4 && st.decoding == 2 && st.decoded > 0 || time.Now().After(deadline) {
			break
		}
		time.Sleep(5 * time.Millisecond)
	}
	if st.running != 2 || st.waiting != 2 || st.decoding != 2 {
		t.Fatalf("running %d waiting %d decoding %d, want 2, 2, 2", st.running, st.waiting, st.decoding)
	}
	read := func() concurrency.Signals {
		rec := httptest.NewRecorder()
		s.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/metrics", nil))
		sig, err := concurrency.ParseSignals(rec.Body, s.ModelName())
		if err != nil {
			t.Fatal(err)
		}
		return sig
	}
	first := read()
	time.Sleep(300 * time.Millisecond)
	sig := read()
	if sig.Running != 2 || sig.Waiting != 2 || !sig.HasInterToken || sig.InterTokens <= first.InterTokens {
		t.Errorf("signals %+v: want 2 running, 2 waiting and inter-token latencies", sig)
	}
	// Two sequences share 150 tokens/s: 75 each, 1/75 s between tokens
	// (the histogram's count is rounded to whole tokens).
	itl := (sig.InterTokenSeconds - first.InterTokenSeconds) / (sig.InterTokens - first.InterTokens)
	if math.Abs(itl-1.0/75)*75 > 0.05 {
		t.Errorf("mean inter-token latency %v, want 1/75 s", itl)
	}
	// Two prompts of 1000 tokens and what they decoded, over 10000.
	if sig.KVCacheUsage < 0.2 || sig.KVCacheUsage > 0.25 {
		t.Errorf("KV cache usage %v, want 0.2 plus the decoded share", sig.KVCacheUsage)
	}
	cancel()
	for i := 0; i < 4; i++ {
		if err := <-done; err == nil {
			t.Error("a cancelled request succeeded")
		}
	}
	if st := s.dec.batchStats(); st.running != 0 || st.waiting != 0 {
		t.Errorf("after cancelling: running %d, waiting %d", st.running, st.waiting)
	}
}
