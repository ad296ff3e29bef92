// Package model talks to a language model behind an OpenAI-compatible chat
// completions endpoint (vLLM, a hosted API, or the project's simulated
// server). It owns retries: a returned error is an infrastructure error
// (*InfraError) after retries, never a model failure.
package model

import (
	"context"
	"time"

	"repot.dev/repot-operator/contract"
)

// Request is one chat completion request.
type Request struct {
	Messages    []contract.Message
	Temperature float64
	// MaxTokens caps the completion; 0 leaves it to the server.
	MaxTokens int
	// Seed, when not nil, is sent as the request's sampling seed (vLLM and
	// OpenAI honour it): self-consistency gives each sample its own, so
	// that samples at a temperature above 0 are independent and still
	// reproducible.
	Seed *int64
}

// Response is a completed call.
type Response struct {
	Content string
	// FinishReason is the server's finish_reason ("stop", "length", ...).
	FinishReason string
	Usage        contract.Usage
	// Latency is the wall time of the successful attempt.
	Latency time.Duration
	// Retries is how many failed attempts preceded the successful one.
	Retries int
}

// Client completes chat requests. Implementations are safe for concurrent
// use. A returned error is an infrastructure error (*InfraError, or the
// context's error when ctx ended).
type Client interface {
	Complete(ctx context.Context, req Request) (Response, error)
}
