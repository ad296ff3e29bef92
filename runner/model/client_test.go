package model

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"repot.dev/repot-operator/contract"
)

// fakeSleeper records the waits instead of sleeping.
type fakeSleeper struct {
	mu    sync.Mutex
	waits []time.Duration
}

func (f *fakeSleeper) Sleep(ctx context.Context, d time.Duration) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.waits = append(f.waits, d)
	return ctx.Err()
}

// script is a test server that answers each attempt with the next step.
type script struct {
	mu     sync.Mutex
	steps  []func(w http.ResponseWriter, r *http.Request)
	bodies []map[string]any
}

func (s *script) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	var body map[string]any
	b, _ := io.ReadAll(r.Body)
	_ = json.Unmarshal(b, &body)
	s.mu.Lock()
	i := len(s.bodies)
	s.bodies = append(s.bodies, body)
	step := s.steps[len(s.steps)-1]
	if i < len(s.steps) {
		step = s.steps[i]
	}
	s.mu.Unlock()
	step(w, r)
}

func (s *script) attempts() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.bodies)
}

const okBody = `{"id":"x","object":"chat.completion","created":1,"model":"m",
 "choices":[{"index":0,"message":{"role":"assistant","content":"moves = [[1,0,2]]"},"finish_reason":"length"}],
 "usage":{"prompt_tokens":120,"completion_tokens":40,"total_tokens":160,
  "prompt_tokens_details":{"cached_tokens":64},"completion_tokens_details":{"reasoning_tokens":7}}}`

func ok(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	_, _ = io.WriteString(w, okBody)
}

func status(code int, header ...string) func(w http.ResponseWriter, r *http.Request) {
	return func(w http.ResponseWriter, _ *http.Request) {
		for i := 0; i+1 < len(header); i += 2 {
			w.Header().Set(header[i], header[i+1])
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(code)
		_, _ = io.WriteString(w, `{"error":{"message":"scripted failure","type":"test","code":"x"}}`)
	}
}

func reset(w http.ResponseWriter, _ *http.Request) {
	conn, _, err := w.(http.Hijacker).Hijack()
	if err == nil {
		_ = conn.Close()
	}
}

func hang(_ http.ResponseWriter, r *http.Request) { <-r.Context().Done() }

func newTestClient(t *testing.T, url string, sl *fakeSleeper, mut func(*Config)) *OpenAI {
	t.Helper()
	cfg := Config{
		BaseURL: url + "/v1",
		Model:   "test-model",
		Retry:   RetryPolicy{MaxAttempts: 4, Initial: time.Second, Max: 10 * time.Second, Jitter: 0.5},
		Sleep:   sl.Sleep,
		Rand:    func() float64 { return 0.5 },
		Timeout: 5 * time.Second,
	}
	if mut != nil {
		mut(&cfg)
	}
	c, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

var req = Request{
	Messages:    []contract.Message{{Role: contract.RoleSystem, Content: "be brief"}, {Role: contract.RoleUser, Content: "solve"}},
	Temperature: 0,
	MaxTokens:   16384,
}

func TestCompleteParsesResponseAndSendsBody(t *testing.T) {
	s := &script{steps: []func(http.ResponseWriter, *http.Request){ok}}
	srv := httptest.NewServer(s)
	defer srv.Close()
	sl := &fakeSleeper{}
	c := newTestClient(t, srv.URL, sl, func(c *Config) {
		c.ExtraBody = DisableThinkingBody()
		c.SystemPrefix = contract.NoThinkPrefix
		c.APIKey = "secret"
	})
	resp, err := c.Complete(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Latency = 0
	want := Response{Content: "moves = [[1,0,2]]", FinishReason: "length",
		Usage: contract.Usage{Prompt: 120, Completion: 40, Cached: 64, Reasoning: 7}}
	if diff := cmp.Diff(want, resp); diff != "" {
		t.Errorf("response (-want +got):\n%s", diff)
	}
	body := s.bodies[0]
	wantBody := map[string]any{
		"model":                "test-model",
		"temperature":          0.0,
		"max_tokens":           16384.0,
		"chat_template_kwargs": map[string]any{"enable_thinking": false},
		"messages": []any{
			map[string]any{"role": "system", "content": "/no_think\nbe brief"},
			map[string]any{"role": "user", "content": "solve"},
		},
	}
	if diff := cmp.Diff(wantBody, body); diff != "" {
		t.Errorf("request body (-want +got):\n%s", diff)
	}
	if len(sl.waits) != 0 {
		t.Errorf("slept %v on a clean call", sl.waits)
	}
}

func TestMaxCompletionTokens(t *testing.T) {
	s := &script{steps: []func(http.ResponseWriter, *http.Request){ok}}
	srv := httptest.NewServer(s)
	defer srv.Close()
	c := newTestClient(t, srv.URL, &fakeSleeper{}, func(c *Config) { c.MaxCompletionTokens = true })
	if _, err := c.Complete(context.Background(), req); err != nil {
		t.Fatal(err)
	}
	if _, has := s.bodies[0]["max_tokens"]; has || s.bodies[0]["max_completion_tokens"] != 16384.0 {
		t.Errorf("body %v", s.bodies[0])
	}
}

// TestSeedReachesTheWire: a request's seed is sent as "seed"; a request
// without one sends no seed field.
func TestSeedReachesTheWire(t *testing.T) {
	seed := int64(7)
	for _, tc := range []struct {
		name string
		seed *int64
		want any
	}{
		{"no seed", nil, nil},
		{"seed 7", &seed, 7.0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := &script{steps: []func(http.ResponseWriter, *http.Request){ok}}
			srv := httptest.NewServer(s)
			defer srv.Close()
			c := newTestClient(t, srv.URL, &fakeSleeper{}, nil)
			r := req
			r.Temperature, r.Seed = 0.7, tc.seed
			if _, err := c.Complete(context.Background(), r); err != nil {
				t.Fatal(err)
			}
			got, has := s.bodies[0]["seed"]
			if (tc.want != nil) != has || got != tc.want {
				t.Errorf("seed in body: %v (present %v), want %v", got, has, tc.want)
			}
		})
	}
}

func TestSystemPrefixWithoutSystemMessage(t *testing.T) {
	got := withSystemPrefix([]contract.Message{{Role: contract.RoleUser, Content: "u"}}, "/no_think")
	want := []contract.Message{{Role: contract.RoleSystem, Content: "/no_think"}, {Role: contract.RoleUser, Content: "u"}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Error(diff)
	}
	in := []contract.Message{{Role: contract.RoleSystem, Content: "s"}}
	_ = withSystemPrefix(in, "/p")
	if in[0].Content != "s" {
		t.Error("withSystemPrefix modified its input")
	}
}

func TestRetries(t *testing.T) {
	type fn = func(http.ResponseWriter, *http.Request)
	tests := []struct {
		name         string
		steps        []fn
		wantAttempts int
		wantErr      bool
		wantStatus   int
		wantWaits    []time.Duration
	}{
		{"429 honours Retry-After", []fn{status(429, "Retry-After", "7"), ok}, 2, false, 0, []time.Duration{7 * time.Second}},
		{"Retry-After capped by Max", []fn{status(429, "Retry-After", "3600"), ok}, 2, false, 0, []time.Duration{10 * time.Second}},
		{"short Retry-After loses to backoff", []fn{status(429, "Retry-After-Ms", "10"), ok}, 2, false, 0, []time.Duration{750 * time.Millisecond}},
		{"503 then 502 then ok", []fn{status(503), status(502), ok}, 3, false, 0, []time.Duration{750 * time.Millisecond, 1500 * time.Millisecond}},
		{"408 retried", []fn{status(408), ok}, 2, false, 0, []time.Duration{750 * time.Millisecond}},
		{"connection reset", []fn{reset, reset, ok}, 3, false, 0, []time.Duration{750 * time.Millisecond, 1500 * time.Millisecond}},
		{"500 forever", []fn{status(500)}, 4, true, 500, []time.Duration{750 * time.Millisecond, 1500 * time.Millisecond, 3 * time.Second}},
		{"400 not retried", []fn{status(400), ok}, 1, true, 400, nil},
		{"401 not retried", []fn{status(401), ok}, 1, true, 401, nil},
		{"404 not retried", []fn{status(404), ok}, 1, true, 404, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := &script{steps: tc.steps}
			srv := httptest.NewServer(s)
			defer srv.Close()
			sl := &fakeSleeper{}
			c := newTestClient(t, srv.URL, sl, nil)
			resp, err := c.Complete(context.Background(), req)
			if got := s.attempts(); got != tc.wantAttempts {
				t.Errorf("server saw %d attempts, want %d", got, tc.wantAttempts)
			}
			if diff := cmp.Diff(tc.wantWaits, sl.waits); diff != "" {
				t.Errorf("waits (-want +got):\n%s", diff)
			}
			if !tc.wantErr {
				if err != nil {
					t.Fatalf("Complete: %v", err)
				}
				if resp.Retries != tc.wantAttempts-1 || resp.Content == "" {
					t.Errorf("retries=%d content=%q", resp.Retries, resp.Content)
				}
				return
			}
			var ie *InfraError
			if !errors.As(err, &ie) {
				t.Fatalf("error %v (%T) is not *InfraError", err, err)
			}
			if ie.Attempts != tc.wantAttempts || ie.StatusCode != tc.wantStatus || ie.Retries() != tc.wantAttempts-1 {
				t.Errorf("InfraError attempts=%d status=%d, want %d and %d", ie.Attempts, ie.StatusCode, tc.wantAttempts, tc.wantStatus)
			}
		})
	}
}

func TestAttemptTimeoutIsRetried(t *testing.T) {
	s := &script{steps: []func(http.ResponseWriter, *http.Request){hang, ok}}
	srv := httptest.NewServer(s)
	defer srv.Close()
	sl := &fakeSleeper{}
	c := newTestClient(t, srv.URL, sl, func(c *Config) { c.Timeout = 50 * time.Millisecond })
	resp, err := c.Complete(context.Background(), req)
	if err != nil {
		t.Fatalf("Complete: %v", err)
	}
	if resp.Retries != 1 {
		t.Errorf("retries = %d, want 1", resp.Retries)
	}
}

func TestAttemptTimeoutExhausted(t *testing.T) {
	s := &script{steps: []func(http.ResponseWriter, *http.Request){hang}}
	srv := httptest.NewServer(s)
	defer srv.Close()
	c := newTestClient(t, srv.URL, &fakeSleeper{}, func(c *Config) {
		c.Timeout = 20 * time.Millisecond
		c.Retry.MaxAttempts = 2
	})
	_, err := c.Complete(context.Background(), req)
	var ie *InfraError
	if !errors.As(err, &ie) || ie.Attempts != 2 || !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("err = %v, want InfraError after 2 attempts wrapping a deadline", err)
	}
}

func TestCallerCancelStopsRetrying(t *testing.T) {
	s := &script{steps: []func(http.ResponseWriter, *http.Request){status(503)}}
	srv := httptest.NewServer(s)
	defer srv.Close()
	ctx, cancel := context.WithCancel(context.Background())
	sl := &fakeSleeper{}
	c := newTestClient(t, srv.URL, sl, func(c *Config) {
		c.Sleep = func(ctx context.Context, d time.Duration) error { cancel(); return sl.Sleep(ctx, d) }
	})
	_, err := c.Complete(ctx, req)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
	if s.attempts() != 1 {
		t.Errorf("attempts = %d after cancel, want 1", s.attempts())
	}
}

func TestBackoff(t *testing.T) {
	p := RetryPolicy{MaxAttempts: 8, Initial: time.Second, Max: 8 * time.Second, Jitter: 0.5}
	tests := []struct {
		retry int
		r     float64
		ra    time.Duration
		want  time.Duration
	}{
		{1, 0, 0, 500 * time.Millisecond},
		{1, 0.999999999, 0, time.Second - time.Nanosecond},
		{2, 0.5, 0, 1500 * time.Millisecond},
		{4, 1, 0, 8 * time.Second},
		{10, 1, 0, 8 * time.Second},
		{1, 0, 3 * time.Second, 3 * time.Second},
		{1, 0, time.Hour, 8 * time.Second},
	}
	for _, tc := range tests {
		if got := p.Backoff(tc.retry, tc.r, tc.ra); got != tc.want {
			t.Errorf("Backoff(%d, %v, %v) = %v, want %v", tc.retry, tc.r, tc.ra, got, tc.want)
		}
	}
}

func TestRetryAfterHeader(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	tests := []struct {
		h    http.Header
		want time.Duration
	}{
		{http.Header{}, 0},
		{http.Header{"Retry-After": {"2"}}, 2 * time.Second},
		{http.Header{"Retry-After": {"0.5"}}, 500 * time.Millisecond},
		{http.Header{"Retry-After": {now.Add(90 * time.Second).Format(http.TimeFormat)}}, 90 * time.Second},
		{http.Header{"Retry-After": {"soon"}}, 0},
		{http.Header{"Retry-After-Ms": {"250"}, "Retry-After": {"9"}}, 250 * time.Millisecond},
	}
	for _, tc := range tests {
		if got := retryAfter(tc.h, now); got != tc.want {
			t.Errorf("retryAfter(%v) = %v, want %v", tc.h, got, tc.want)
		}
	}
}

func TestNewValidates(t *testing.T) {
	for _, cfg := range []Config{{Model: "m"}, {BaseURL: "ftp://x/v1", Model: "m"}, {BaseURL: "http://x/v1"}} {
		if _, err := New(cfg); err == nil {
			t.Errorf("New(%+v) accepted a bad config", cfg)
		}
	}
	if _, err := New(Config{BaseURL: "http://x:8000/v1", Model: "m"}); err != nil {
		t.Errorf("New rejected a good config: %v", err)
	}
}

func TestInfraErrorMessage(t *testing.T) {
	e := &InfraError{Cause: errors.New("HTTP 503: busy"), Attempts: 3}
	if !strings.Contains(e.Error(), "3 attempt") || !strings.Contains(e.Error(), "503") {
		t.Errorf("message %q", e.Error())
	}
}
