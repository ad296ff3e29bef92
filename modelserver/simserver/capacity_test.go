package simserver

import (
	"context"
	"math"
	"net/http/httptest"
	"strconv"
	"sync"
	"testing"
	"time"

	"repot.dev/repot-operator/contract"
	"repot.dev/repot-operator/contract/prompt"
	"repot.dev/repot-operator/runner/model"
)

func TestScrapeAndShare(t *testing.T) {
	ps := suite(t)
	lat := Latency{Scale: 0.001, DecodeTokensPerSecond: 100, MaxTokensPerSecond: 1000}
	_, hs := startServer(t, Options{Latency: lat})
	t0 := time.Now()
	a, err := Scrape(context.Background(), nil, hs.URL+"/v1", t0)
	if err != nil {
		t.Fatal(err)
	}
	r, err := client(t, hs.URL, "sim-strong").Complete(context.Background(), model.Request{Messages: prompt.Initial(&ps[0])})
	if err != nil {
		t.Fatal(err)
	}
	b, err := Scrape(context.Background(), nil, hs.URL, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if b.Requests != 1 || b.CompletionTokens != float64(r.Usage.Completion) || b.Capacity != 1000 || b.Scale != 0.001 {
		t.Errorf("snapshot %+v", b)
	}
	// One sequence alone decodes at its own speed: busy for tokens/100 s.
	if want := float64(r.Usage.Completion) / 100; math.Abs(b.BusySeconds-want) > 1e-6 {
		t.Errorf("busy %.6f s, want %.6f", b.BusySeconds, want)
	}
	sh, err := CapacityShare(a, b)
	if err != nil {
		t.Fatal(err)
	}
	if sh.Capacity <= 0 || sh.Capacity > 0.1+1e-9 || sh.Busy <= 0 || sh.Busy > 1 {
		t.Errorf("share %v: one sequence can use at most 10%% of the cap", sh)
	}
	if _, err := CapacityShare(b, a); err == nil {
		t.Error("reversed snapshots accepted")
	}
}

// BenchmarkCapacityShare drives the simulated server with the first calls
// of open-source-120 (initial and fresh-retry prompts) at the given
// concurrency with no think time between calls, and reports the share of
// the throughput cap used. A real `repot run` adds sandbox and replay work
// between calls, so its share is at most this.
func BenchmarkCapacityShare(b *testing.B) {
	ps := suite(b)
	for _, conc := range []int{16, 64} {
		b.Run("concurrency="+itoa(conc), func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				lat := DefaultLatency
				lat.Scale = 0.05
				s, err := New(Options{Profile: Profiles["strong"], Latency: lat, Logf: b.Logf})
				if err != nil {
					b.Fatal(err)
				}
				hs := newBenchServer(s)
				c, err := model.New(model.Config{BaseURL: hs.URL + "/v1", Model: "sim-strong", SystemPrefix: contract.NoThinkPrefix})
				if err != nil {
					b.Fatal(err)
				}
				a, _ := Scrape(context.Background(), nil, hs.URL, time.Now())
				sem := make(chan struct{}, conc)
				var wg sync.WaitGroup
				for k := range ps {
					for _, msgs := range [][]contract.Message{prompt.Initial(&ps[k]), prompt.Fresh(&ps[k], 2)} {
						wg.Add(1)
						sem <- struct{}{}
						go func() {
							defer wg.Done()
							defer func() { <-sem }()
							if _, err := c.Complete(context.Background(), model.Request{Messages: msgs, MaxTokens: 16384}); err != nil {
								b.Error(err)
							}
						}()
					}
				}
				wg.Wait()
				z, _ := Scrape(context.Background(), nil, hs.URL, time.Now())
				hs.Close()
				sh, err := CapacityShare(a, z)
				if err != nil {
					b.Fatal(err)
				}
				b.ReportMetric(100*sh.Capacity, "%cap")
				b.ReportMetric(sh.TokensPerSecond, "tok/s")
				b.ReportMetric(sh.SimulatedSeconds, "sim-s")
			}
		})
	}
}

func itoa(n int) string { return strconv.Itoa(n) }

func newBenchServer(s *Server) *httptest.Server { return httptest.NewServer(s) }
