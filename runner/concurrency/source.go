// Package concurrency adapts the number of model calls a runner keeps in
// flight to what its model server can take: enough to keep the server's
// decode throughput at its top, not more, so that no sequence decodes slower
// than it has to and the longest replies do not end last and alone.
//
// The shards of one model are separate processes that share one server and
// never talk to each other. Each runs its own Controller on the same server
// signals (vLLM's Prometheus metrics, read by PrometheusSource), and the
// control law (additive increase, multiplicative decrease toward a target
// derived from the server's throughput) brings them to a fair share the way
// TCP flows share a link. Where the server exposes no metrics, the
// controller falls back on the token throughput of the runner's own calls.
// docs/concurrency.md explains the law and where it comes from.
package concurrency

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"strings"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// Signals is one reading of a model server's load, with vLLM's meanings.
type Signals struct {
	// Running is vllm:num_requests_running: requests in the model's
	// execution batch (prefilling or decoding).
	Running float64
	// Waiting is vllm:num_requests_waiting: requests queued for a place in
	// the batch.
	Waiting float64
	// KVCacheUsage is vllm:kv_cache_usage_perc (vllm:gpu_cache_usage_perc
	// before vLLM 0.9), 0-1; negative when the server does not report it.
	KVCacheUsage float64
	// GenerationTokens is the counter vllm:generation_tokens_total.
	GenerationTokens float64
	// InterTokenSeconds and InterTokens are the sum and count of the
	// histogram vllm:inter_token_latency_seconds (before vLLM 0.11
	// vllm:time_per_output_token_seconds): their deltas give the decode
	// speed of one sequence. HasInterToken says the server reports it.
	InterTokenSeconds, InterTokens float64
	HasInterToken                  bool
}

// Source reads a server's signals.
type Source interface {
	Read(ctx context.Context) (Signals, error)
}

// ErrNoMetrics says the endpoint exposes no usable vLLM metrics (no
// /metrics page, or one without them): the controller stops asking and
// uses the throughput of its own calls.
var ErrNoMetrics = errors.New("the server exposes no vLLM metrics")

// vLLM metric names.
const (
	MetricRunning          = "vllm:num_requests_running"
	MetricWaiting          = "vllm:num_requests_waiting"
	MetricKVCacheUsage     = "vllm:kv_cache_usage_perc"
	MetricGPUCacheUsage    = "vllm:gpu_cache_usage_perc" // before vLLM 0.9
	MetricGenerationTokens = "vllm:generation_tokens_total"
	MetricInterToken       = "vllm:inter_token_latency_seconds"
	MetricTimePerToken     = "vllm:time_per_output_token_seconds" // before vLLM 0.11
	// LabelModel names the served model on every vLLM metric.
	LabelModel = "model_name"
)

// MetricsTimeout bounds one read of the /metrics page.
const MetricsTimeout = 5 * time.Second

// maxMetricsBytes bounds the /metrics page read.
const maxMetricsBytes = 8 << 20

// PrometheusSource reads vLLM's metrics from a server's /metrics page.
type PrometheusSource struct {
	// URL is the page, http://host:port/metrics.
	URL string
	// Model, when not empty, selects the series labelled model_name=Model.
	Model string
	// Client makes the request; nil means a client with MetricsTimeout
	// on Go's default transport. The runner passes its model client's
	// transport, so that the page is reached as the calls are.
	Client *http.Client
}

// NewPrometheusSource reads the metrics of the server at baseURL (the API
// root, http://host:8000/v1, or the server root) for model.
func NewPrometheusSource(baseURL, model string) *PrometheusSource {
	root := strings.TrimSuffix(strings.TrimSuffix(baseURL, "/"), "/v1")
	return &PrometheusSource{URL: root + "/metrics", Model: model}
}

// Read fetches and parses the page. A page that is refused or not there
// (HTTP 4xx), is not in the Prometheus text format, or holds no vLLM
// metrics is ErrNoMetrics.
func (p *PrometheusSource) Read(ctx context.Context) (Signals, error) {
	hc := p.Client
	if hc == nil {
		hc = &http.Client{Timeout: MetricsTimeout}
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, p.URL, nil)
	if err != nil {
		return Signals{}, err
	}
	req.Header.Set("Accept", "text/plain;version=0.0.4")
	resp, err := hc.Do(req)
	if err != nil {
		return Signals{}, err
	}
	defer resp.Body.Close()
	switch {
	case resp.StatusCode >= 400 && resp.StatusCode < 500:
		return Signals{}, fmt.Errorf("GET %s: HTTP %d: %w", p.URL, resp.StatusCode, ErrNoMetrics)
	case resp.StatusCode != http.StatusOK:
		return Signals{}, fmt.Errorf("GET %s: HTTP %d", p.URL, resp.StatusCode)
	}
	return ParseSignals(io.LimitReader(resp.Body, maxMetricsBytes), p.Model)
}

// ParseSignals reads vLLM's signals from a page in the Prometheus text
// format. With model set, only series labelled model_name=model count;
// series of several engines (vLLM's data parallel) add up, and the KV cache
// usage is their mean. Running and the generation counter are required;
// waiting reads 0 and the KV cache usage -1 when absent. A page that does
// not parse, or lacks a required signal, is ErrNoMetrics; a value that is
// negative, NaN or infinite is another error.
func ParseSignals(r io.Reader, modelName string) (Signals, error) {
	parser := expfmt.NewTextParser(model.UTF8Validation)
	mfs, err := parser.TextToMetricFamilies(r)
	if err != nil {
		return Signals{}, fmt.Errorf("parsing /metrics: %v: %w", err, ErrNoMetrics)
	}
	sum := func(name string) (total float64, n int, err error) {
		mf := mfs[name]
		if mf == nil {
			return 0, 0, nil
		}
		for _, m := range mf.GetMetric() {
			if modelName != "" && label(m, LabelModel) != modelName {
				continue
			}
			v := value(m)
			if math.IsNaN(v) || math.IsInf(v, 0) || v < 0 {
				return 0, 0, fmt.Errorf("metric %s: value %v is not a count", name, v)
			}
			total += v
			n++
		}
		return total, n, nil
	}
	var s Signals
	var n int
	if s.Running, n, err = sum(MetricRunning); err != nil {
		return Signals{}, err
	} else if n == 0 {
		return Signals{}, fmt.Errorf("no %s%s: %w", MetricRunning, forModel(modelName), ErrNoMetrics)
	}
	if s.GenerationTokens, n, err = sum(MetricGenerationTokens); err != nil {
		return Signals{}, err
	} else if n == 0 {
		return Signals{}, fmt.Errorf("no %s%s: %w", MetricGenerationTokens, forModel(modelName), ErrNoMetrics)
	}
	if s.Waiting, _, err = sum(MetricWaiting); err != nil {
		return Signals{}, err
	}
	for _, name := range []string{MetricInterToken, MetricTimePerToken} {
		mf := mfs[name]
		if mf == nil {
			continue
		}
		for _, m := range mf.GetMetric() {
			h := m.GetHistogram()
			if h == nil || modelName != "" && label(m, LabelModel) != modelName {
				continue
			}
			sum, n := h.GetSampleSum(), float64(h.GetSampleCount())
			if math.IsNaN(sum) || math.IsInf(sum, 0) || sum < 0 {
				return Signals{}, fmt.Errorf("metric %s: sum %v is not a duration", name, sum)
			}
			s.InterTokenSeconds += sum
			s.InterTokens += n
			s.HasInterToken = true
		}
		if s.HasInterToken {
			break
		}
	}
	s.KVCacheUsage = -1
	for _, name := range []string{MetricKVCacheUsage, MetricGPUCacheUsage} {
		kv, n, err := sum(name)
		if err != nil {
			return Signals{}, err
		}
		if n > 0 {
			s.KVCacheUsage = min(1, kv/float64(n))
			break
		}
	}
	return s, nil
}

func forModel(m string) string {
	if m == "" {
		return ""
	}
	return fmt.Sprintf("{%s=%q}", LabelModel, m)
}

func label(m *dto.Metric, name string) string {
	for _, l := range m.GetLabel() {
		if l.GetName() == name {
			return l.GetValue()
		}
	}
	return ""
}

// value is a gauge's, counter's or untyped sample's value (NaN for other
// kinds, which no vLLM signal is).
func value(m *dto.Metric) float64 {
	switch {
	case m.Gauge != nil:
		return m.Gauge.GetValue()
	case m.Counter != nil:
		return m.Counter.GetValue()
	case m.Untyped != nil:
		return m.Untyped.GetValue()
	}
	return math.NaN()
}
