package simserver

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"repot.dev/repot-operator/contract"
	"repot.dev/repot-operator/contract/prompt"
	"repot.dev/repot-operator/envs"
	"repot.dev/repot-operator/runner/model"
)

func suite(t testing.TB) []envs.Problem {
	t.Helper()
	ps, err := envs.Suite("open-source-120")
	if err != nil {
		t.Skipf("open-source-120 not available: %v", err)
	}
	return ps
}

func startServer(t *testing.T, opt Options) (*Server, *httptest.Server) {
	t.Helper()
	if opt.Profile == nil {
		opt.Profile = Profiles["strong"]
	}
	if opt.Logf == nil {
		opt.Logf = t.Logf
	}
	s, err := New(opt)
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(s)
	t.Cleanup(hs.Close)
	return s, hs
}

func client(t *testing.T, url, name string) *model.OpenAI {
	t.Helper()
	c, err := model.New(model.Config{
		BaseURL:      url + "/v1",
		Model:        name,
		SystemPrefix: contract.NoThinkPrefix,
		ExtraBody:    model.DisableThinkingBody(),
		Retry:        model.RetryPolicy{MaxAttempts: 30, Initial: time.Millisecond, Max: time.Millisecond},
		Sleep:        func(ctx context.Context, _ time.Duration) error { return ctx.Err() },
		Rand:         func() float64 { return 0 },
		Timeout:      10 * time.Second,
	})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestModelsAndHealth(t *testing.T) {
	_, hs := startServer(t, Options{Profile: Profiles["weak"]})
	resp, err := http.Get(hs.URL + "/v1/models")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var list struct {
		Data []struct {
			ID      string `json:"id"`
			OwnedBy string `json:"owned_by"`
		} `json:"data"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&list); err != nil {
		t.Fatal(err)
	}
	if len(list.Data) != 1 || list.Data[0].ID != "sim-weak" || list.Data[0].OwnedBy != OwnedBy {
		t.Errorf("models = %+v", list.Data)
	}
	h, err := http.Get(hs.URL + "/health")
	if err != nil || h.StatusCode != 200 || h.Header.Get("Server") != OwnedBy {
		t.Errorf("health: %v %v", err, h)
	}
}

func TestCompletionUsageAndDeterminism(t *testing.T) {
	ps := suite(t)
	_, hs := startServer(t, Options{Seed: 3})
	c := client(t, hs.URL, "sim-strong")
	req := model.Request{Messages: prompt.Initial(&ps[0]), MaxTokens: 16384}
	r1, err := c.Complete(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	r2, err := c.Complete(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	r1.Latency, r2.Latency = 0, 0
	if diff := cmp.Diff(r1, r2); diff != "" {
		t.Errorf("same prompt, different answers:\n%s", diff)
	}
	sent := append([]contract.Message{}, req.Messages...)
	sent[0].Content = contract.NoThinkPrefix + "\n" + sent[0].Content
	if r1.Usage.Prompt != promptTokens(sent) || r1.Usage.Completion != Tokens(r1.Content) {
		t.Errorf("usage %+v, want prompt %d completion %d", r1.Usage, promptTokens(sent), Tokens(r1.Content))
	}
	if r1.Usage.Cached == 0 || r1.Usage.Cached%cacheBlock != 0 || r1.Usage.Cached > r1.Usage.Prompt {
		t.Errorf("cached tokens %d of %d", r1.Usage.Cached, r1.Usage.Prompt)
	}
	if r1.Usage.Reasoning != 0 {
		t.Errorf("reasoning tokens %d with thinking off", r1.Usage.Reasoning)
	}
}

func TestThinkingOnAddsReasoning(t *testing.T) {
	ps := suite(t)
	_, hs := startServer(t, Options{})
	body := map[string]any{"model": "sim-strong", "messages": prompt.Initial(&ps[0])}
	var out chatResponse
	post(t, hs.URL, body, &out)
	if out.SystemFingerprint != "repot-simulation/strong" {
		t.Errorf("system_fingerprint %q", out.SystemFingerprint)
	}
	if out.Usage.CompletionTokensDetails.ReasoningTokens == 0 || !strings.HasPrefix(out.Choices[0].Message.Content, "<think>") {
		t.Errorf("thinking on: reasoning %d, content %.40q", out.Usage.CompletionTokensDetails.ReasoningTokens, out.Choices[0].Message.Content)
	}
}

func post(t *testing.T, url string, body any, out any) int {
	t.Helper()
	b, _ := json.Marshal(body)
	resp, err := http.Post(url+"/v1/chat/completions", "application/json", strings.NewReader(string(b)))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	if out != nil {
		if err := json.Unmarshal(data, out); err != nil {
			t.Fatalf("decode %s: %v", data, err)
		}
	}
	return resp.StatusCode
}

func TestReadinessStylePrompt(t *testing.T) {
	_, hs := startServer(t, Options{})
	c := client(t, hs.URL, "sim-strong")
	r, err := c.Complete(context.Background(), model.Request{Messages: []contract.Message{{Role: contract.RoleUser, Content: "Say OK."}}, MaxTokens: 1})
	if err != nil {
		t.Fatal(err)
	}
	if r.FinishReason != "length" || r.Usage.Completion != 1 || r.Content != "OK. " {
		t.Errorf("one-token reply: %+v", r)
	}
}

func TestRequestErrors(t *testing.T) {
	_, hs := startServer(t, Options{})
	tests := []struct {
		name string
		body any
		code int
	}{
		{"wrong model", map[string]any{"model": "gpt-x", "messages": []any{map[string]any{"role": "user", "content": "hi"}}}, 404},
		{"no messages", map[string]any{"model": "sim-strong"}, 400},
		{"streaming", map[string]any{"model": "sim-strong", "stream": true, "messages": []any{map[string]any{"role": "user", "content": "hi"}}}, 400},
		{"bad content", map[string]any{"model": "sim-strong", "messages": []any{map[string]any{"role": "user", "content": 7}}}, 400},
		{"parts content", map[string]any{"model": "sim-strong", "messages": []any{map[string]any{"role": "user", "content": []any{map[string]any{"type": "text", "text": "hi"}}}}}, 200},
	}
	for _, tc := range tests {
		if got := post(t, hs.URL, tc.body, nil); got != tc.code {
			t.Errorf("%s: HTTP %d, want %d", tc.name, got, tc.code)
		}
	}
	c := client(t, hs.URL, "not-served")
	_, err := c.Complete(context.Background(), model.Request{Messages: []contract.Message{{Role: contract.RoleUser, Content: "x"}}})
	var ie *model.InfraError
	if !errors.As(err, &ie) || ie.Attempts != 1 || ie.StatusCode != 404 {
		t.Errorf("wrong model: %v", err)
	}
}

// answers asks every prompt with the given concurrency and returns the
// replies in prompt order.
func answers(t *testing.T, c model.Client, prompts [][]contract.Message, concurrency int) []model.Response {
	t.Helper()
	out := make([]model.Response, len(prompts))
	errs := make([]error, len(prompts))
	sem := make(chan struct{}, concurrency)
	var wg sync.WaitGroup
	for i := range prompts {
		wg.Add(1)
		sem <- struct{}{}
		go func(i int) {
			defer wg.Done()
			defer func() { <-sem }()
			out[i], errs[i] = c.Complete(context.Background(), model.Request{Messages: prompts[i], MaxTokens: 16384})
			out[i].Latency = 0
		}(i)
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("prompt %d: %v", i, err)
		}
	}
	return out
}

func testPrompts(ps []envs.Problem, n int) [][]contract.Message {
	var out [][]contract.Message
	for i := 0; i < n && i < len(ps); i++ {
		out = append(out, prompt.Initial(&ps[i]), prompt.Fresh(&ps[i], 2))
	}
	return out
}

func TestReproducibleAtAnyConcurrencyAndUnderFaults(t *testing.T) {
	ps := suite(t)
	prompts := testPrompts(ps, 40)
	_, clean := startServer(t, Options{Seed: 9})
	seq := answers(t, client(t, clean.URL, "sim-strong"), prompts, 1)
	par := answers(t, client(t, clean.URL, "sim-strong"), prompts, 32)
	if diff := cmp.Diff(seq, par); diff != "" {
		t.Errorf("concurrency changed answers:\n%s", diff)
	}
	fs, faulty := startServer(t, Options{Seed: 9, FaultPermille: 300, HangDuration: 5 * time.Millisecond})
	got := answers(t, client(t, faulty.URL, "sim-strong"), prompts, 16)
	retries := 0
	for i := range got {
		retries += got[i].Retries
		got[i].Retries = 0
	}
	if diff := cmp.Diff(seq, got); diff != "" {
		t.Errorf("faults changed answers:\n%s", diff)
	}
	if retries == 0 {
		t.Error("30% faults caused no retries")
	}
	fs.m.mu.Lock()
	faults := 0
	for _, n := range fs.m.faults {
		faults += int(n)
	}
	fs.m.mu.Unlock()
	if faults != retries {
		t.Errorf("server injected %d faults, client retried %d times", faults, retries)
	}
}

func TestMetrics(t *testing.T) {
	ps := suite(t)
	_, hs := startServer(t, Options{})
	c := client(t, hs.URL, "sim-strong")
	r, err := c.Complete(context.Background(), model.Request{Messages: prompt.Initial(&ps[1])})
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.Get(hs.URL + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	text := string(b)
	for _, want := range []string{
		`repot_sim_requests_total{code="200"} 1`,
		fmt.Sprintf("repot_sim_completion_tokens_total %d", r.Usage.Completion),
		fmt.Sprintf("repot_sim_prompt_tokens_total %d", r.Usage.Prompt),
		"repot_sim_inflight_requests 0",
		`repot_sim_faults_total{kind="500"} 0`,
		`vllm:generation_tokens_total{model_name="sim-strong"}`,
	} {
		if !strings.Contains(text, want) {
			t.Errorf("metrics lack %q:\n%s", want, text)
		}
	}
}

func TestNewRejectsBadOptions(t *testing.T) {
	if _, err := New(Options{}); err == nil {
		t.Error("no profile accepted")
	}
	if _, err := New(Options{Profile: Profiles["weak"], FaultPermille: 1001}); err == nil {
		t.Error("fault rate 1001 accepted")
	}
	for _, lat := range []Latency{{Scale: -1}, {Scale: 1, TTFT: -time.Second}, {Scale: 1, DecodeTokensPerSecond: -5}, {Scale: 1, MaxTokensPerSecond: -1}} {
		if _, err := New(Options{Profile: Profiles["weak"], Latency: lat}); err == nil || !strings.Contains(err.Error(), "must not be negative") {
			t.Errorf("latency %+v: err = %v, want a refusal", lat, err)
		}
	}
	if _, err := New(Options{Profile: Profiles["weak"], HangDuration: -time.Second}); err == nil {
		t.Error("negative hang duration accepted")
	}
	if _, err := LookupProfile("nope"); err == nil || !strings.Contains(err.Error(), "strong") {
		t.Errorf("LookupProfile error %v", err)
	}
}
