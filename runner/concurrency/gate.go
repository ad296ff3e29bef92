package concurrency

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
//
// Its limit can move while calls are in flight (SetLimit: the adaptive
// concurrency controller's output). A lower limit takes effect as calls
// end: none is cut.
type Gate struct {
	mu        sync.Mutex
	capacity  int
	inFlight  int
	maxFlight int
	// peak and blocked describe the interval since the last Peak call: the
	// most calls in flight, and whether a call had to wait.
	peak      int
	blocked   bool
	seq       uint64
	high, low []*waiter
	// allowance, when set, holds admissions within a budget cap.
	allowance *Allowance
}

// waiter is a call waiting for a slot.
type waiter struct {
	ch   chan struct{}
	prio int
	seq  uint64
}

// NewGate returns a gate admitting at most n calls at once (n < 1 means 1).
func NewGate(n int) *Gate { return &Gate{capacity: max(1, n)} }

// SetAllowance holds the gate's admissions within a budget cap as well
// (nil: none). Set it before the first call; a cap that rises admits the
// waiting calls on the next Recheck (or Release).
func (g *Gate) SetAllowance(a *Allowance) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.allowance = a
}

// Recheck admits the waiting calls the limit and the allowance admit now
// (the allowance's cap may have risen).
func (g *Gate) Recheck() {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.admitWaiters()
}

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
	if g.inFlight < g.capacity && len(g.high) == 0 && len(g.low) == 0 && g.allowance.admits(g.inFlight) {
		g.take()
		g.mu.Unlock()
		return nil
	}
	// Only the limit blocks for the controller (Peak): a call waiting on
	// the budget says nothing of the server.
	g.blocked = g.blocked || g.inFlight >= g.capacity
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

// Release frees a slot, handing it to the next waiter if any (and the
// limit and the allowance admit it).
func (g *Gate) Release() {
	g.mu.Lock()
	defer g.mu.Unlock()
	// A lowered limit makes the slot go away: admitWaiters admits none.
	g.inFlight--
	g.admitWaiters()
}

// admitWaiters admits waiters, follow-ups first, while the limit and the
// allowance admit another call. g.mu is held.
func (g *Gate) admitWaiters() {
	for g.inFlight < g.capacity && len(g.high)+len(g.low) > 0 && g.allowance.admits(g.inFlight) {
		var next *waiter
		if len(g.high) > 0 {
			next, g.high = g.high[0], g.high[1:]
		} else {
			next, g.low = g.low[0], g.low[1:]
		}
		g.take()
		close(next.ch)
	}
}

// MaxInFlight is the largest number of calls that were in flight at once.
func (g *Gate) MaxInFlight() int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.maxFlight
}

// Limit is the number of calls the gate admits at once now.
func (g *Gate) Limit() int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.capacity
}

// SetLimit changes the number of calls admitted at once (n < 1 means 1).
// Raising it admits waiters at once; lowering it cuts no call in flight:
// the slots above the new limit go away as their calls end.
func (g *Gate) SetLimit(n int) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.capacity = max(1, n)
	g.admitWaiters()
}

// Peak returns the most calls in flight since the previous Peak call (or
// since the gate was made) and whether a call had to wait for a slot in
// that time, and starts a new interval. A controller raises the limit only
// when the limit was what held calls back.
func (g *Gate) Peak() (inFlight int, blocked bool) {
	g.mu.Lock()
	defer g.mu.Unlock()
	inFlight, blocked = g.peak, g.blocked
	g.peak, g.blocked = g.inFlight, len(g.high)+len(g.low) > 0 && g.inFlight >= g.capacity
	return inFlight, blocked
}

// InFlight is the number of calls in flight now.
func (g *Gate) InFlight() int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.inFlight
}

func (g *Gate) take() {
	g.inFlight++
	g.maxFlight = max(g.maxFlight, g.inFlight)
	g.peak = max(g.peak, g.inFlight)
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
