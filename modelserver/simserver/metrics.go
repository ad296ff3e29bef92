package simserver

import (
	"fmt"
	"math"
	"net/http"
	"sort"
	"sync"
	"sync/atomic"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// metrics are the server's counters.
type metrics struct {
	mu        sync.Mutex
	requests  map[int]int64
	faults    map[Fault]int64
	modes     map[Mode]int64
	promptTok int64
	complTok  int64
	inflight  atomic.Int64
}

func (m *metrics) init() {
	m.requests, m.faults, m.modes = map[int]int64{}, map[Fault]int64{}, map[Mode]int64{}
}

func (m *metrics) request(code int) {
	m.mu.Lock()
	m.requests[code]++
	m.mu.Unlock()
}

func (m *metrics) fault(f Fault) {
	m.mu.Lock()
	m.faults[f]++
	m.mu.Unlock()
}

func (m *metrics) served(mode Mode, p, c int) {
	m.mu.Lock()
	m.modes[mode]++
	m.promptTok += int64(p)
	m.complTok += int64(c)
	m.mu.Unlock()
}

// collector exposes the server's metrics to a Prometheus registry, read at
// each scrape: requests by code, injected faults, answer modes, served
// prompt/completion tokens, in-flight requests, and the latency model's
// decode accounting (capacity, decoded tokens, simulated busy seconds) from
// which the capacity share is computed. vLLM's own metrics carry vLLM's
// names and meanings (with the model_name label), so what reads a vLLM
// server (dashboards, the runners' concurrency controllers) reads the
// simulation unchanged:
//
//   - vllm:num_requests_running: requests in the batch, prefilling or
//     decoding (at most --max-num-seqs);
//   - vllm:num_requests_waiting: requests queued for a place in the batch;
//   - vllm:kv_cache_usage_perc and, under its name before vLLM 0.9,
//     vllm:gpu_cache_usage_perc: the batch's prompt and decoded tokens over
//     the KV cache size, 0-1;
//   - vllm:generation_tokens_total, vllm:prompt_tokens_total: tokens
//     generated (counted as they decode) and prompt tokens processed;
//   - vllm:inter_token_latency_seconds and, under its name before vLLM
//     0.11, vllm:time_per_output_token_seconds: the histogram of the time
//     between two tokens of a sequence, in real seconds (a sequence's
//     share of the decode throughput, at most its top speed).
type collector struct{ s *Server }

var (
	descRequests    = prometheus.NewDesc("repot_sim_requests_total", "Chat completion requests handled by the repot simulation, by HTTP code (499: client went away).", []string{"code"}, nil)
	descFaults      = prometheus.NewDesc("repot_sim_faults_total", "Faults injected by the repot simulation, by kind.", []string{"kind"}, nil)
	descAnswers     = prometheus.NewDesc("repot_sim_answers_total", "Answers of the simulated model, by outcome mode.", []string{"mode"}, nil)
	descPromptTok   = prometheus.NewDesc("repot_sim_prompt_tokens_total", "Prompt tokens served.", nil, nil)
	descComplTok    = prometheus.NewDesc("repot_sim_completion_tokens_total", "Completion tokens served.", nil, nil)
	descInflight    = prometheus.NewDesc("repot_sim_inflight_requests", "Chat completion requests being generated (running or waiting).", nil, nil)
	descScale       = prometheus.NewDesc("repot_sim_latency_scale", "Real seconds per simulated second (0: no latency model).", nil, nil)
	descCapacity    = prometheus.NewDesc("repot_sim_decode_capacity_tokens_per_second", "Simulated decode throughput cap of all sequences together (0: none).", nil, nil)
	descDecoded     = prometheus.NewDesc("repot_sim_decode_tokens_total", "Tokens decoded by the latency model.", nil, nil)
	descBusy        = prometheus.NewDesc("repot_sim_decode_busy_seconds_total", "Simulated seconds with at least one sequence decoding.", nil, nil)
	descDecoding    = prometheus.NewDesc("repot_sim_decoding_sequences", "Sequences decoding now.", nil, nil)
	modelLabel      = []string{"model_name"}
	descVPrompt     = prometheus.NewDesc("vllm:prompt_tokens_total", "Number of prefill tokens processed (repot simulation).", modelLabel, nil)
	descVGeneration = prometheus.NewDesc("vllm:generation_tokens_total", "Number of generation tokens processed (repot simulation: counted as they decode).", modelLabel, nil)
	descVRunning    = prometheus.NewDesc("vllm:num_requests_running", "Number of requests in model execution batches (repot simulation).", modelLabel, nil)
	descVWaiting    = prometheus.NewDesc("vllm:num_requests_waiting", "Number of requests waiting to be processed (repot simulation).", modelLabel, nil)
	descVKV         = prometheus.NewDesc("vllm:kv_cache_usage_perc", "KV-cache usage. 1 means 100 percent usage (repot simulation).", modelLabel, nil)
	descVITL        = prometheus.NewDesc("vllm:inter_token_latency_seconds", "Histogram of inter-token latency in seconds (repot simulation: real seconds).", modelLabel, nil)
	descVTPOT       = prometheus.NewDesc("vllm:time_per_output_token_seconds", "Histogram of time per output token in seconds (repot simulation; the name before vLLM 0.11).", modelLabel, nil)
	descVGPUKV      = prometheus.NewDesc("vllm:gpu_cache_usage_perc", "GPU KV-cache usage. 1 means 100 percent usage (repot simulation; vLLM < 0.9 name).", modelLabel, nil)
)

// Describe sends every descriptor.
func (c collector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{descRequests, descFaults, descAnswers, descPromptTok, descComplTok, descInflight,
		descScale, descCapacity, descDecoded, descBusy, descDecoding, descVPrompt, descVGeneration, descVRunning,
		descVWaiting, descVKV, descVGPUKV, descVITL, descVTPOT} {
		ch <- d
	}
}

// Collect reads the counters and the decoder's batch.
func (c collector) Collect(ch chan<- prometheus.Metric) {
	s, m := c.s, &c.s.m
	counter := func(d *prometheus.Desc, v float64, labels ...string) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.CounterValue, v, labels...)
	}
	gauge := func(d *prometheus.Desc, v float64, labels ...string) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, v, labels...)
	}
	m.mu.Lock()
	codes := make([]int, 0, len(m.requests))
	for code := range m.requests {
		codes = append(codes, code)
	}
	sort.Ints(codes)
	for _, code := range codes {
		counter(descRequests, float64(m.requests[code]), fmt.Sprint(code))
	}
	for _, f := range faultKinds {
		counter(descFaults, float64(m.faults[f]), string(f))
	}
	for _, md := range append([]Mode{ModeCorrect}, append(failureModes, ModeChat, ModeNoPlan)...) {
		counter(descAnswers, float64(m.modes[md]), string(md))
	}
	pt, ct := m.promptTok, m.complTok
	m.mu.Unlock()
	inflight := float64(m.inflight.Load())
	counter(descPromptTok, float64(pt))
	counter(descComplTok, float64(ct))
	gauge(descInflight, inflight)
	st := s.dec.batchStats()
	lat := s.opt.Latency
	gauge(descScale, lat.Scale)
	gauge(descCapacity, lat.MaxTokensPerSecond)
	counter(descDecoded, math.Round(st.decoded))
	counter(descBusy, st.active)
	gauge(descDecoding, float64(st.decoding))
	running, waiting := float64(st.running), float64(st.waiting)
	if lat.Scale <= 0 {
		// No latency model: requests are answered as they come.
		running, waiting = inflight, 0
	}
	name := s.opt.ModelName
	counter(descVPrompt, float64(pt), name)
	counter(descVGeneration, math.Round(st.decoded), name)
	gauge(descVRunning, running, name)
	gauge(descVWaiting, waiting, name)
	kv := lat.kvUsage(st.kvTokens)
	gauge(descVKV, kv, name)
	gauge(descVGPUKV, kv, name)
	buckets := st.itl.cumulative()
	for _, d := range []*prometheus.Desc{descVITL, descVTPOT} {
		ch <- prometheus.MustNewConstHistogram(d, uint64(math.Round(st.itl.count)), st.itl.sum, buckets, name)
	}
}

// newMetricsHandler serves the collector in the Prometheus text format.
func newMetricsHandler(s *Server) http.Handler {
	reg := prometheus.NewRegistry()
	reg.MustRegister(collector{s})
	return promhttp.HandlerFor(reg, promhttp.HandlerOpts{ErrorHandling: promhttp.ContinueOnError})
}
