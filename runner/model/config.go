package model

import (
	"context"
	"net/http"
	"time"
)

// DisableThinkingBody is the extra request body that turns thinking off in
// vLLM chat templates that honour it (others ignore unknown kwargs).
func DisableThinkingBody() map[string]any {
	return map[string]any{"chat_template_kwargs": map[string]any{"enable_thinking": false}}
}

// Config configures an OpenAI-compatible client.
type Config struct {
	// BaseURL is the API root, e.g. "http://127.0.0.1:8000/v1".
	BaseURL string
	// Model is the served model id sent in each request.
	Model string
	// APIKey is sent as a bearer token; empty sends a placeholder key.
	APIKey string
	// ExtraBody holds extra top-level JSON fields for every request (e.g.
	// chat_template_kwargs).
	ExtraBody map[string]any
	// SystemPrefix is prepended (with a newline) to the system message, or
	// sent as its own system message when the request has none. Use
	// contract.NoThinkPrefix when thinking is disabled.
	SystemPrefix string
	// MaxCompletionTokens sends the completion cap as max_completion_tokens
	// (required by some hosted reasoning models) instead of max_tokens.
	MaxCompletionTokens bool
	// Retry is the retry policy; the zero value means DefaultRetryPolicy.
	Retry RetryPolicy
	// Timeout bounds each attempt (not the whole call with retries); 0 means
	// DefaultTimeout.
	Timeout time.Duration
	// Clock measures latency; nil means the system clock.
	Clock Clock
	// Sleep waits between attempts; nil means a timer that honours ctx.
	Sleep func(ctx context.Context, d time.Duration) error
	// Rand returns numbers in [0,1) for backoff jitter; nil means math/rand.
	Rand func() float64
	// HTTPClient overrides the HTTP client; nil builds one on NewTransport.
	HTTPClient *http.Client
}

// DefaultTimeout bounds one attempt. Long generations (16k tokens) at a busy
// server can take minutes.
const DefaultTimeout = 20 * time.Minute

// Clock tells the time.
type Clock interface {
	Now() time.Time
}

type systemClock struct{}

func (systemClock) Now() time.Time { return time.Now() }

// SystemClock is the real clock.
var SystemClock Clock = systemClock{}
