package concurrency

import (
	"fmt"
	"sync"
	"time"

	"repot.dev/repot-operator/contract"
)

// DefaultAllowanceEvery bounds how often an Allowance reads its cap.
const DefaultAllowanceEvery = time.Second

// Allowance keeps a Gate's admissions within a budget cap
// (contract.BudgetCap, cumulative): a model call is admitted only while
// what the shard spent, with the calls in flight and the new one at
// CallTokens each, stays within the cap's completion tokens, and while the
// calls made, in flight and the new one stay within its model calls.
// Otherwise the call waits (Gate.Recheck admits it once the cap rises).
// One call at a time is admitted while the spending is below the token cap
// even when a call's CallTokens do not fit: otherwise a remainder smaller
// than one call would admit nothing and reach no limit, and the shard
// would wait for good short of its budget.
//
// A nil *Allowance admits every call.
type Allowance struct {
	// Read returns the cap in force: the zero cap for none. After an
	// error the last cap read stays in force.
	Read func() (contract.BudgetCap, error)
	// CallTokens is the most completion tokens one call may spend (its
	// max_tokens); 0 when unknown: a call reserves none.
	CallTokens int64
	// Clock reads the time for Every (default the system clock).
	Clock Clock
	// Every bounds how often Read is called (default
	// DefaultAllowanceEvery).
	Every time.Duration
	// OnWait, when set, is told why calls wait when they start waiting on
	// a cap (once per cap: a shard at its cap waits and starts calls in
	// turn).
	OnWait func(why string)
	// OnReadError, when set, is told of a failed Read.
	OnReadError func(error)

	mu      sync.Mutex
	cap     contract.BudgetCap
	readAt  time.Time
	read    bool
	tokens  int64 // completion tokens spent, earlier sessions' included
	calls   int64 // model calls made, earlier sessions' included
	waiting bool
	toldCap string // the cap of the last wait told
}

// AddSpent counts spending made outside the gate's calls: the earlier
// sessions' records (summary.Spent of a resume's records).
func (a *Allowance) AddSpent(tokens, calls int64) {
	if a == nil {
		return
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	a.tokens += tokens
	a.calls += calls
}

// Spend counts a call that returned with completion tokens (call it before
// the call's Gate.Release, so the slot it frees is handed on with it
// counted).
func (a *Allowance) Spend(completionTokens int64) { a.AddSpent(completionTokens, 1) }

// admits reports whether a call may start with inFlight other calls in
// flight.
func (a *Allowance) admits(inFlight int) bool {
	if a == nil {
		return true
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	a.refresh()
	why := a.over(int64(inFlight))
	if why != "" && !a.waiting && a.cap.String() != a.toldCap && a.OnWait != nil {
		a.toldCap = a.cap.String()
		a.OnWait(why)
	}
	a.waiting = why != ""
	return why == ""
}

// over says why a call cannot start with inFlight others in flight, ""
// when it can.
func (a *Allowance) over(inFlight int64) string {
	if c := a.cap.CompletionTokens; c != nil {
		need := a.tokens + (inFlight+1)*a.CallTokens
		if a.tokens >= *c || (need > *c && inFlight > 0) {
			return fmt.Sprintf("waiting for the budget: %d completion tokens spent of this shard's cap of %d, %d call(s) in flight at up to %d each; the operator raises the cap as spec.budget allows",
				a.tokens, *c, inFlight, a.CallTokens)
		}
	}
	if c := a.cap.ModelCalls; c != nil && a.calls+inFlight+1 > *c {
		return fmt.Sprintf("waiting for the budget: %d model calls made of this shard's cap of %d, %d in flight; the operator raises the cap as spec.budget allows",
			a.calls, *c, inFlight)
	}
	return ""
}

// refresh reads the cap when Every has passed since the last read.
func (a *Allowance) refresh() {
	if a.Read == nil {
		return
	}
	if a.Clock == nil {
		a.Clock = systemClock{}
	}
	every := a.Every
	if every <= 0 {
		every = DefaultAllowanceEvery
	}
	now := a.Clock.Now()
	if a.read && now.Sub(a.readAt) < every {
		return
	}
	a.read, a.readAt = true, now
	c, err := a.Read()
	if err != nil {
		if a.OnReadError != nil {
			a.OnReadError(err)
		}
		return
	}
	a.cap = c
}
