package simserver

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// Snapshot is a reading of a simulated server's /metrics.
type Snapshot struct {
	// At is when the reading was taken (the caller's clock).
	At time.Time
	// Requests counts answered chat completions (HTTP 200).
	Requests         float64
	PromptTokens     float64
	CompletionTokens float64
	// DecodeTokens and BusySeconds are the latency model's accounting.
	DecodeTokens float64
	BusySeconds  float64
	// Capacity is the decode throughput cap (tokens per simulated second).
	Capacity float64
	// Scale is real seconds per simulated second.
	Scale float64
}

// Scrape reads the simulated server's /metrics. baseURL may be the API root
// ("http://host:8000/v1") or the server root.
func Scrape(ctx context.Context, hc *http.Client, baseURL string, now time.Time) (Snapshot, error) {
	if hc == nil {
		hc = http.DefaultClient
	}
	root := strings.TrimSuffix(strings.TrimSuffix(baseURL, "/"), "/v1")
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, root+"/metrics", nil)
	if err != nil {
		return Snapshot{}, err
	}
	resp, err := hc.Do(req)
	if err != nil {
		return Snapshot{}, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return Snapshot{}, fmt.Errorf("GET %s/metrics: HTTP %d", root, resp.StatusCode)
	}
	s := Snapshot{At: now}
	fields := map[string]*float64{
		`repot_sim_requests_total{code="200"}`:        &s.Requests,
		"repot_sim_prompt_tokens_total":               &s.PromptTokens,
		"repot_sim_completion_tokens_total":           &s.CompletionTokens,
		"repot_sim_decode_tokens_total":               &s.DecodeTokens,
		"repot_sim_decode_busy_seconds_total":         &s.BusySeconds,
		"repot_sim_decode_capacity_tokens_per_second": &s.Capacity,
		"repot_sim_latency_scale":                     &s.Scale,
	}
	found := 0
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		name, val, ok := strings.Cut(sc.Text(), " ")
		if p, known := fields[name]; ok && known {
			v, err := strconv.ParseFloat(strings.TrimSpace(val), 64)
			if err != nil {
				return Snapshot{}, fmt.Errorf("metric %s: %v", name, err)
			}
			*p = v
			found++
		}
	}
	if err := sc.Err(); err != nil {
		return Snapshot{}, err
	}
	if found < len(fields)-1 { // requests{code="200"} is absent before the first answer
		return Snapshot{}, errors.New("not a repot simulation /metrics page")
	}
	return s, nil
}

// Share is the capacity the interval between two snapshots used.
type Share struct {
	// SimulatedSeconds is the interval in simulated time.
	SimulatedSeconds float64
	// TokensPerSecond is decoded tokens per simulated second.
	TokensPerSecond float64
	// Capacity is the fraction of the throughput cap used
	// (TokensPerSecond / cap).
	Capacity float64
	// Busy is the fraction of the interval with at least one sequence
	// decoding.
	Busy float64
}

// CapacityShare compares two snapshots of one server. It needs a latency
// model (scale > 0) and a throughput cap.
func CapacityShare(a, b Snapshot) (Share, error) {
	if b.Scale <= 0 || b.Capacity <= 0 {
		return Share{}, errors.New("capacity share needs --latency-scale > 0 and --max-tokens-per-second > 0")
	}
	real := b.At.Sub(a.At).Seconds()
	if real <= 0 {
		return Share{}, errors.New("snapshots are not in time order")
	}
	sim := real / b.Scale
	tps := (b.DecodeTokens - a.DecodeTokens) / sim
	return Share{
		SimulatedSeconds: sim,
		TokensPerSecond:  tps,
		Capacity:         tps / b.Capacity,
		Busy:             (b.BusySeconds - a.BusySeconds) / sim,
	}, nil
}

// String describes the share in one line for a report.
func (s Share) String() string {
	return fmt.Sprintf("%.1f%% of the throughput cap (%.0f tokens/s), decoding %.1f%% of %.0f simulated seconds",
		100*s.Capacity, s.TokensPerSecond, 100*s.Busy, s.SimulatedSeconds)
}
