package runner

import (
	"context"
	"sync"
)

// Gate bounds the number of model calls in flight. Follow-up calls (a
// repair or a fresh retry of a run that already made its first call) are
// admitted before waiting first calls, so that a repair is issued as soon as
// its replay finishes and runs complete rather than pile up half-done.
// Within each class, waiters with a higher priority (WithPriority: the
// run's expected reply length, so the longest replies start first) are
// admitted first, and equal priorities in arrival order.
type Gate struct {
	mu        sync.Mutex
	capacity  int
	inFlight  int
	maxFlight int
	seq       uint64
	high, low []*waiter
}

// waiter is a call waiting for a slot.
type waiter struct {
	ch   chan struct{}
	prio int
	seq  uint64
}

// NewGate returns a gate admitting at most n calls at once (n < 1 means 1).
func NewGate(n int) *Gate { return &Gate{capacity: max(1, n)} }

type priorityKey struct{}

// WithPriority returns ctx carrying the priority of the calls made under it
// at a Gate (higher first; 0 when unset).
func WithPriority(ctx context.Context, prio int) context.Context {
	return context.WithValue(ctx, priorityKey{}, prio)
}

func priorityOf(ctx context.Context) int {
	p, _ := ctx.Value(priorityKey{}).(int)
	return p
}

// Acquire waits for a slot. It returns ctx's error, holding no slot, when
// ctx ends first.
func (g *Gate) Acquire(ctx context.Context, followUp bool) error {
	g.mu.Lock()
	if g.inFlight < g.capacity && len(g.high) == 0 && len(g.low) == 0 {
		g.take()
		g.mu.Unlock()
		return nil
	}
	g.seq++
	w := &waiter{ch: make(chan struct{}), prio: priorityOf(ctx), seq: g.seq}
	if followUp {
		insert(&g.high, w)
	} else {
		insert(&g.low, w)
	}
	g.mu.Unlock()
	select {
	case <-w.ch:
		return nil
	case <-ctx.Done():
		g.mu.Lock()
		removed := remove(&g.high, w) || remove(&g.low, w)
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
	var next *waiter
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
	close(next.ch)
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

// insert places w in q, which is kept in admission order: priority
// descending, then arrival.
func insert(q *[]*waiter, w *waiter) {
	i := len(*q)
	for i > 0 && (*q)[i-1].prio < w.prio {
		i--
	}
	*q = append(*q, nil)
	copy((*q)[i+1:], (*q)[i:])
	(*q)[i] = w
}

func remove(q *[]*waiter, w *waiter) bool {
	for i, c := range *q {
		if c == w {
			*q = append((*q)[:i], (*q)[i+1:]...)
			return true
		}
	}
	return false
}
