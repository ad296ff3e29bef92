package model

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/http"
	"strings"
	"time"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"

	"repot.dev/repot-operator/contract"
)

// OpenAI is a Client for any OpenAI-compatible chat completions endpoint,
// built on github.com/openai/openai-go/v3 with that library's own retries
// disabled; this type does the retrying (see RetryPolicy and classify).
type OpenAI struct {
	cfg    Config
	retry  RetryPolicy
	client openai.Client
	http   *http.Client
}

// Endpoint is the API root and the served model id the client calls; the
// engine reads the server's metrics from there.
func (c *OpenAI) Endpoint() (baseURL, model string) { return c.cfg.BaseURL, c.cfg.Model }

// HTTPClient is the HTTP client the model calls go through: the server's
// other pages (its /metrics) are read through the same transport, so they
// resolve and dial the server as the calls do.
func (c *OpenAI) HTTPClient() *http.Client { return c.http }

// New returns a client for cfg.
func New(cfg Config) (*OpenAI, error) {
	if cfg.BaseURL == "" {
		return nil, errors.New("model: base URL is required")
	}
	if err := contract.CheckBaseURL(cfg.BaseURL); err != nil {
		return nil, fmt.Errorf("model: base URL %w", err)
	}
	if cfg.Model == "" {
		return nil, errors.New("model: model name is required")
	}
	if cfg.Timeout == 0 {
		cfg.Timeout = DefaultTimeout
	}
	if cfg.Clock == nil {
		cfg.Clock = SystemClock
	}
	if cfg.Sleep == nil {
		cfg.Sleep = SleepContext
	}
	if cfg.Rand == nil {
		cfg.Rand = rand.Float64
	}
	hc := cfg.HTTPClient
	if hc == nil {
		hc = &http.Client{Transport: NewTransport()}
	}
	key := cfg.APIKey
	if key == "" {
		key = "none" // OpenAI-compatible servers without auth ignore it.
	}
	base := strings.TrimSuffix(cfg.BaseURL, "/") + "/"
	c := openai.NewClient(
		option.WithBaseURL(base),
		option.WithAPIKey(key),
		option.WithHTTPClient(hc),
		option.WithMaxRetries(0),
	)
	return &OpenAI{cfg: cfg, retry: cfg.Retry.orDefault(), client: c, http: hc}, nil
}

// SleepContext waits d or until ctx ends, returning ctx's error in the
// latter case (and at once when d <= 0 and ctx has ended). It is the
// default sleeper of the client, the runner and the readiness gate.
func SleepContext(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// Complete sends req, retrying retryable failures with exponential backoff
// and jitter, honouring Retry-After. The error, if any, is an *InfraError.
func (c *OpenAI) Complete(ctx context.Context, req Request) (Response, error) {
	params := c.params(req)
	var resp Response
	attempts, last, stopped := c.withRetries(ctx, func() *attemptError {
		var aerr *attemptError
		resp, aerr = c.attempt(ctx, params)
		return aerr
	})
	switch {
	case last == nil:
		resp.Retries = attempts - 1
		return resp, nil
	case stopped != nil:
		return Response{}, &InfraError{Cause: stopped, Attempts: attempts, StatusCode: last.status}
	default:
		return Response{}, &InfraError{Cause: last.err, Attempts: attempts, StatusCode: last.status, Retryable: last.retryable}
	}
}

// withRetries calls try until it succeeds, fails in a way classify does not
// retry, or the RetryPolicy's attempts are spent, waiting the policy's
// backoff (or the server's Retry-After) between attempts with the client's
// sleeper. It returns the attempts made, the last failure (nil after a
// success), and ctx's or the sleeper's error when they cut the retries
// short.
func (c *OpenAI) withRetries(ctx context.Context, try func() *attemptError) (attempts int, last *attemptError, stopped error) {
	for attempts = 1; ; attempts++ {
		if last = try(); last == nil {
			return attempts, nil, nil
		}
		if err := ctx.Err(); err != nil {
			return attempts, last, err
		}
		if !last.retryable || attempts >= c.retry.MaxAttempts {
			return attempts, last, nil
		}
		if err := c.cfg.Sleep(ctx, c.retry.Backoff(attempts, c.cfg.Rand(), last.retryAfter)); err != nil {
			return attempts, last, err
		}
	}
}

// params builds the request body: messages (with the system prefix),
// temperature, max_tokens, the seed when the request has one, and the
// extra body.
func (c *OpenAI) params(req Request) openai.ChatCompletionNewParams {
	msgs := withSystemPrefix(req.Messages, c.cfg.SystemPrefix)
	p := openai.ChatCompletionNewParams{
		Model:       c.cfg.Model,
		Messages:    make([]openai.ChatCompletionMessageParamUnion, 0, len(msgs)),
		Temperature: openai.Float(req.Temperature),
	}
	if req.Seed != nil {
		p.Seed = openai.Int(*req.Seed)
	}
	if req.MaxTokens > 0 {
		if c.cfg.MaxCompletionTokens {
			p.MaxCompletionTokens = openai.Int(int64(req.MaxTokens))
		} else {
			p.MaxTokens = openai.Int(int64(req.MaxTokens))
		}
	}
	for _, m := range msgs {
		switch m.Role {
		case contract.RoleSystem:
			p.Messages = append(p.Messages, openai.SystemMessage(m.Content))
		case contract.RoleAssistant:
			p.Messages = append(p.Messages, openai.AssistantMessage(m.Content))
		default:
			p.Messages = append(p.Messages, openai.UserMessage(m.Content))
		}
	}
	if len(c.cfg.ExtraBody) > 0 {
		p.SetExtraFields(c.cfg.ExtraBody)
	}
	return p
}

// withSystemPrefix prepends prefix to the first system message, or adds a
// system message holding only the prefix when there is none.
func withSystemPrefix(msgs []contract.Message, prefix string) []contract.Message {
	if prefix == "" {
		return msgs
	}
	out := make([]contract.Message, 0, len(msgs)+1)
	for i, m := range msgs {
		if m.Role == contract.RoleSystem {
			out = append(out, msgs[:i]...)
			m.Content = prefix + "\n" + m.Content
			out = append(out, m)
			return append(out, msgs[i+1:]...)
		}
	}
	out = append(out, contract.Message{Role: contract.RoleSystem, Content: prefix})
	return append(out, msgs...)
}

// attempt makes one HTTP call under the per-attempt timeout.
func (c *OpenAI) attempt(ctx context.Context, params openai.ChatCompletionNewParams) (Response, *attemptError) {
	actx, cancel := context.WithTimeout(ctx, c.cfg.Timeout)
	defer cancel()
	start := c.cfg.Clock.Now()
	cc, err := c.client.Chat.Completions.New(actx, params)
	latency := c.cfg.Clock.Now().Sub(start)
	if err != nil {
		return Response{}, classify(ctx, err, c.cfg.Clock.Now())
	}
	if len(cc.Choices) == 0 {
		return Response{}, &attemptError{err: errors.New("server returned no choices"), retryable: true}
	}
	ch := cc.Choices[0]
	u := cc.Usage
	return Response{
		Content:      ch.Message.Content,
		FinishReason: ch.FinishReason,
		Usage: contract.Usage{
			Prompt:     int(u.PromptTokens),
			Completion: int(u.CompletionTokens),
			Cached:     int(u.PromptTokensDetails.CachedTokens),
			Reasoning:  int(u.CompletionTokensDetails.ReasoningTokens),
		},
		Latency: latency,
	}, nil
}
