package model

import (
	"math"
	"time"
)

// RetryPolicy says how often and how long to retry retryable failures (408,
// 429, 5xx, connection errors, per-attempt timeouts).
type RetryPolicy struct {
	// MaxAttempts counts the first attempt; 1 disables retries.
	MaxAttempts int
	// Initial is the first backoff; it doubles per retry up to Max.
	Initial time.Duration
	// Max caps one backoff and a server's Retry-After.
	Max time.Duration
	// Jitter is the fraction of each backoff drawn at random (0..1): the wait
	// is backoff*(1-Jitter) + backoff*Jitter*rand.
	Jitter float64
}

// DefaultRetryPolicy retries up to 8 attempts, 1s doubling to 60s, half jitter.
var DefaultRetryPolicy = RetryPolicy{MaxAttempts: 8, Initial: time.Second, Max: time.Minute, Jitter: 0.5}

func (p RetryPolicy) orDefault() RetryPolicy {
	if p.MaxAttempts == 0 {
		return DefaultRetryPolicy
	}
	return p
}

// Backoff is the wait before retry number retry (1-based), given a random
// number r in [0,1) and the server's Retry-After (0 when absent). A
// Retry-After longer than the computed backoff wins, capped at Max.
func (p RetryPolicy) Backoff(retry int, r float64, retryAfter time.Duration) time.Duration {
	b := float64(p.Initial) * math.Pow(2, float64(retry-1))
	if p.Max > 0 && b > float64(p.Max) {
		b = float64(p.Max)
	}
	j := p.Jitter
	if j < 0 {
		j = 0
	}
	if j > 1 {
		j = 1
	}
	d := time.Duration(b*(1-j) + b*j*r)
	if retryAfter > d {
		d = retryAfter
	}
	if p.Max > 0 && d > p.Max {
		d = p.Max
	}
	return d
}
