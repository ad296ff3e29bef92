package runner

import (
	"context"
	"sync"
)

// Gate bounds the number of model calls in flight. Follow-up calls (a
// repair or a fresh retry of a run that already made its first call) are
// admitted before waiting first calls, so that a repair is issued as soon as
// its replay finishes and runs complete rather than pile up half-done.
// Within a priority, waiters are admitted in arrival order.
type Gate struct {
	mu        sync.Mutex
	capacity  int
	inFlight  int
	maxFlight int
	high, low []chan struct{}
}

// NewGate returns a gate admitting at most n calls at once (n < 1 means 1).
func NewGate(n int) *Gate { return &Gate{capacity: max(1, n)} }

// Acquire waits for a slot. It returns ctx's error, holding no slot, when
// ctx ends first.
func (g *Gate) Acquire(ctx context.Context, followUp bool) error {
	g.mu.Lock()
	if g.inFlight < g.capacity && len(g.high) == 0 && len(g.low) == 0 {
		g.take()
		g.mu.Unlock()
		return nil
	}
	ch := make(chan struct{})
	if followUp {
		g.high = append(g.high, ch)
	} else {
		g.low = append(g.low, ch)
	}
	g.mu.Unlock()
	select {
	case <-ch:
		return nil
	case <-ctx.Done():
		g.mu.Lock()
		removed := remove(&g.high, ch) || remove(&g.low, ch)
		g.mu.Unlock()
		if !removed {
			// The slot was handed over while ctx ended: give it back.
			g.Release()
		}
		return ctx.Err()
	}
}

// Release frees a slot, handing it to the next waiter if any.
func (g *Gate) Release() {
	g.mu.Lock()
	defer g.mu.Unlock()
	var next chan struct{}
	switch {
	case len(g.high) > 0:
		next, g.high = g.high[0], g.high[1:]
	case len(g.low) > 0:
		next, g.low = g.low[0], g.low[1:]
	default:
		g.inFlight--
		return
	}
	// The slot passes to next: inFlight is unchanged.
	close(next)
}

// MaxInFlight is the largest number of calls that were in flight at once.
func (g *Gate) MaxInFlight() int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.maxFlight
}

func (g *Gate) take() {
	g.inFlight++
	g.maxFlight = max(g.maxFlight, g.inFlight)
}

func remove(q *[]chan struct{}, ch chan struct{}) bool {
	for i, c := range *q {
		if c == ch {
			*q = append((*q)[:i], (*q)[i+1:]...)
			return true
		}
	}
	return false
}
