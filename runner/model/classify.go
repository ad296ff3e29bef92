package model

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/openai/openai-go/v3"
)

// attemptError is one failed attempt and whether it may be retried.
type attemptError struct {
	err        error
	status     int
	retryable  bool
	retryAfter time.Duration
}

// classify decides whether a failed attempt is retryable: HTTP 408, 429 and
// 5xx are; other statuses (400, 401, 403, 404, 422, ...) are not; transport
// failures (connection refused or reset, EOF, a per-attempt timeout, a
// malformed body) are. When the caller's ctx is done nothing is retried.
func classify(ctx context.Context, err error, now time.Time) *attemptError {
	if ctx.Err() != nil {
		return &attemptError{err: ctx.Err()}
	}
	var apiErr *openai.Error
	if errors.As(err, &apiErr) {
		st := apiErr.StatusCode
		a := &attemptError{err: fmt.Errorf("HTTP %d: %s", st, apiMessage(apiErr)), status: st}
		a.retryable = st == http.StatusRequestTimeout || st == http.StatusTooManyRequests || st >= 500
		if apiErr.Response != nil {
			a.retryAfter = retryAfter(apiErr.Response.Header, now)
		}
		return a
	}
	if errors.Is(err, context.DeadlineExceeded) {
		return &attemptError{err: fmt.Errorf("attempt timed out: %w", err), retryable: true}
	}
	return &attemptError{err: err, retryable: true}
}

func apiMessage(e *openai.Error) string {
	if e.Message != "" {
		return e.Message
	}
	return http.StatusText(e.StatusCode)
}

// retryAfter reads retry-after-ms, or Retry-After as seconds or an HTTP date
// (relative to now); 0 when absent or unreadable.
func retryAfter(h http.Header, now time.Time) time.Duration {
	if v := h.Get("Retry-After-Ms"); v != "" {
		if ms, err := strconv.ParseFloat(strings.TrimSpace(v), 64); err == nil && ms > 0 {
			return time.Duration(ms * float64(time.Millisecond))
		}
	}
	if v := h.Get("Retry-After"); v != "" {
		if s, err := strconv.ParseFloat(strings.TrimSpace(v), 64); err == nil && s > 0 {
			return time.Duration(s * float64(time.Second))
		}
		if t, err := http.ParseTime(v); err == nil && t.After(now) {
			return t.Sub(now)
		}
	}
	return 0
}
