package simserver

import (
	"fmt"
	"net/http"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
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

// metrics serves Prometheus text: requests by code, injected faults, answer
// modes, served prompt/completion tokens, in-flight requests, and the
// latency model's decode accounting (capacity, decoded tokens, simulated
// busy seconds) from which the capacity share is computed. A few vLLM
// metric names are mirrored so dashboards for vLLM work unchanged.
func (s *Server) metrics(w http.ResponseWriter, _ *http.Request) {
	var b strings.Builder
	m := &s.m
	m.mu.Lock()
	codes := make([]int, 0, len(m.requests))
	for c := range m.requests {
		codes = append(codes, c)
	}
	sort.Ints(codes)
	header(&b, "repot_sim_requests_total", "counter", "Chat completion requests handled by the repot simulation, by HTTP code (499: client went away).")
	for _, c := range codes {
		fmt.Fprintf(&b, "repot_sim_requests_total{code=\"%d\"} %d\n", c, m.requests[c])
	}
	header(&b, "repot_sim_faults_total", "counter", "Faults injected by the repot simulation, by kind.")
	for _, f := range faultKinds {
		fmt.Fprintf(&b, "repot_sim_faults_total{kind=\"%s\"} %d\n", f, m.faults[f])
	}
	header(&b, "repot_sim_answers_total", "counter", "Answers of the simulated model, by outcome mode.")
	for _, md := range append([]Mode{ModeCorrect}, append(failureModes, ModeChat, ModeNoPlan)...) {
		fmt.Fprintf(&b, "repot_sim_answers_total{mode=\"%s\"} %d\n", md, m.modes[md])
	}
	pt, ct := m.promptTok, m.complTok
	m.mu.Unlock()
	header(&b, "repot_sim_prompt_tokens_total", "counter", "Prompt tokens served.")
	fmt.Fprintf(&b, "repot_sim_prompt_tokens_total %d\n", pt)
	header(&b, "repot_sim_completion_tokens_total", "counter", "Completion tokens served.")
	fmt.Fprintf(&b, "repot_sim_completion_tokens_total %d\n", ct)
	header(&b, "repot_sim_inflight_requests", "gauge", "Chat completion requests being generated.")
	fmt.Fprintf(&b, "repot_sim_inflight_requests %d\n", m.inflight.Load())
	decoded, active, seqs := s.dec.stats()
	lat := s.opt.Latency
	header(&b, "repot_sim_latency_scale", "gauge", "Real seconds per simulated second (0: no latency model).")
	fmt.Fprintf(&b, "repot_sim_latency_scale %g\n", lat.Scale)
	header(&b, "repot_sim_decode_capacity_tokens_per_second", "gauge", "Simulated decode throughput cap of all sequences together (0: none).")
	fmt.Fprintf(&b, "repot_sim_decode_capacity_tokens_per_second %g\n", lat.MaxTokensPerSecond)
	header(&b, "repot_sim_decode_tokens_total", "counter", "Tokens decoded by the latency model.")
	fmt.Fprintf(&b, "repot_sim_decode_tokens_total %.0f\n", decoded)
	header(&b, "repot_sim_decode_busy_seconds_total", "counter", "Simulated seconds with at least one sequence decoding.")
	fmt.Fprintf(&b, "repot_sim_decode_busy_seconds_total %.3f\n", active)
	header(&b, "repot_sim_decoding_sequences", "gauge", "Sequences decoding now.")
	fmt.Fprintf(&b, "repot_sim_decoding_sequences %d\n", seqs)
	header(&b, "vllm:prompt_tokens_total", "counter", "Mirror of repot_sim_prompt_tokens_total under vLLM's name (simulation).")
	fmt.Fprintf(&b, "vllm:prompt_tokens_total{model_name=%q} %d\n", s.opt.ModelName, pt)
	header(&b, "vllm:generation_tokens_total", "counter", "Mirror of repot_sim_completion_tokens_total under vLLM's name (simulation).")
	fmt.Fprintf(&b, "vllm:generation_tokens_total{model_name=%q} %d\n", s.opt.ModelName, ct)
	header(&b, "vllm:num_requests_running", "gauge", "Mirror of repot_sim_inflight_requests under vLLM's name (simulation).")
	fmt.Fprintf(&b, "vllm:num_requests_running{model_name=%q} %d\n", s.opt.ModelName, m.inflight.Load())
	w.Header().Set("Content-Type", "text/plain; version=0.0.4; charset=utf-8")
	_, _ = w.Write([]byte(b.String()))
}

func header(b *strings.Builder, name, typ, help string) {
	fmt.Fprintf(b, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, typ)
}
