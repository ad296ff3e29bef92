package concurrency

import (
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"repot.dev/repot-operator/contract"
)

// stepClock is a clock the test moves.
type stepClock struct{ t time.Time }

func (c *stepClock) Now() time.Time { return c.t }

func ptrTo(v int64) *int64 { return &v }

func TestAllowanceAdmits(t *testing.T) {
	for _, tc := range []struct {
		name          string
		cap           contract.BudgetCap
		callTokens    int64
		tokens, calls int64 // spent
		inFlight      int
		want          bool
	}{
		{"no cap", contract.BudgetCap{}, 300, 1e9, 1e9, 100, true},
		{"the new call and those in flight fit", contract.BudgetCap{CompletionTokens: ptrTo(1000)}, 300, 100, 0, 2, true},
		{"the new call does not fit beside those in flight", contract.BudgetCap{CompletionTokens: ptrTo(1000)}, 300, 101, 0, 2, false},
		{"alone, below the cap, a call that may not fit goes", contract.BudgetCap{CompletionTokens: ptrTo(1000)}, 300, 950, 0, 0, true},
		{"alone, at the cap", contract.BudgetCap{CompletionTokens: ptrTo(1000)}, 300, 1000, 0, 0, false},
		{"max_tokens unknown: the spending alone", contract.BudgetCap{CompletionTokens: ptrTo(1000)}, 0, 999, 0, 5, true},
		{"max_tokens unknown, at the cap", contract.BudgetCap{CompletionTokens: ptrTo(1000)}, 0, 1000, 0, 5, false},
		{"calls: the new one fits", contract.BudgetCap{ModelCalls: ptrTo(5)}, 300, 0, 3, 1, true},
		{"calls: the new one does not fit", contract.BudgetCap{ModelCalls: ptrTo(5)}, 300, 0, 3, 2, false},
		{"calls: alone at the cap", contract.BudgetCap{ModelCalls: ptrTo(5)}, 300, 0, 5, 0, false},
		{"both: tokens fit, calls do not", contract.BudgetCap{CompletionTokens: ptrTo(1e6), ModelCalls: ptrTo(5)}, 300, 0, 5, 0, false},
	} {
		a := &Allowance{Read: func() (contract.BudgetCap, error) { return tc.cap, nil }, CallTokens: tc.callTokens, Clock: &stepClock{}}
		a.AddSpent(tc.tokens, tc.calls)
		if got := a.admits(tc.inFlight); got != tc.want {
			t.Errorf("%s: admits(%d) = %v, want %v", tc.name, tc.inFlight, got, tc.want)
		}
	}
	var a *Allowance
	if !a.admits(1 << 20) {
		t.Error("a nil allowance held a call back")
	}
}

// The cap is read at most once per Every; a failed read keeps the last
// cap; the wait is told once per cap.
func TestAllowanceReadsAndTells(t *testing.T) {
	clock := &stepClock{t: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	caps := []contract.BudgetCap{{ModelCalls: ptrTo(1)}}
	var errs []error
	reads := 0
	var told []string
	a := &Allowance{Clock: clock, Every: time.Second,
		Read: func() (contract.BudgetCap, error) {
			reads++
			if len(errs) > 0 {
				e := errs[0]
				errs = errs[1:]
				return contract.BudgetCap{}, e
			}
			return caps[len(caps)-1], nil
		},
		OnWait:      func(why string) { told = append(told, why) },
		OnReadError: func(error) {},
	}
	type step struct {
		advance  time.Duration
		spend    bool
		inFlight int
		want     bool
	}
	check := func(name string, s step) {
		t.Helper()
		clock.t = clock.t.Add(s.advance)
		if s.spend {
			a.Spend(10)
		}
		if got := a.admits(s.inFlight); got != s.want {
			t.Errorf("%s: admits = %v, want %v", name, got, s.want)
		}
	}
	check("first call", step{want: true})
	check("one call made: at the cap", step{spend: true, want: false})
	check("again within Every: not read, not told again", step{advance: 500 * time.Millisecond, want: false})
	caps = append(caps, contract.BudgetCap{ModelCalls: ptrTo(2)})
	check("raised, read after Every", step{advance: 500 * time.Millisecond, want: true})
	check("a call in flight: waits again at the same cap, not told again", step{inFlight: 1, want: false})
	check("admitted again", step{want: true})
	errs = []error{errors.New("unreadable")}
	check("a failed read keeps the cap", step{advance: time.Second, spend: true, want: false})
	if reads != 3 {
		t.Errorf("%d reads, want 3", reads)
	}
	want := []string{
		"waiting for the budget: 1 model calls made of this shard's cap of 1, 0 in flight; the operator raises the cap as spec.budget allows",
		"waiting for the budget: 1 model calls made of this shard's cap of 2, 1 in flight; the operator raises the cap as spec.budget allows",
	}
	if d := cmp.Diff(want, told); d != "" {
		t.Errorf("told (-want +got):\n%s", d)
	}
}

// admitted reports whether a waiter was admitted.
func admitted(w *waiter) bool {
	select {
	case <-w.ch:
		return true
	default:
		return false
	}
}

// A gate with an allowance holds waiters its cap cannot cover below its
// limit, and admits them as the cap rises (Recheck) or a call returns.
func TestGateHoldsCallsToTheCap(t *testing.T) {
	capCalls := int64(2)
	// The clock moves a second at each reading: the cap is read at every check.
	a := &Allowance{Read: func() (contract.BudgetCap, error) { return contract.BudgetCap{ModelCalls: ptrTo(capCalls)}, nil }, Clock: &tickClock{}}
	g := NewGate(8)
	g.SetAllowance(a)
	if !g.allowance.admits(0) || !g.allowance.admits(1) {
		t.Fatal("a cap of 2 calls held back the first two")
	}
	g.take()
	g.take() // two calls in flight
	w1, w2 := &waiter{ch: make(chan struct{})}, &waiter{ch: make(chan struct{})}
	g.mu.Lock()
	insert(&g.low, w1)
	insert(&g.low, w2)
	g.mu.Unlock()
	g.Recheck()
	if admitted(w1) || admitted(w2) {
		t.Fatal("admitted past the cap of 2 calls")
	}
	a.Spend(5) // the first call returned: 1 made, 1 in flight
	g.Release()
	if admitted(w1) || g.InFlight() != 1 {
		t.Fatalf("admitted past the cap on release (in flight %d)", g.InFlight())
	}
	capCalls = 3
	g.Recheck()
	if !admitted(w1) || admitted(w2) || g.InFlight() != 2 {
		t.Errorf("after the cap rose to 3: first admitted %v, second %v, in flight %d; want the first alone, 2 in flight", admitted(w1), admitted(w2), g.InFlight())
	}
	if _, blocked := g.Peak(); blocked {
		t.Error("calls held by the budget read as held by the limit")
	}
}

// tickClock moves a second at every reading.
type tickClock struct{ t time.Time }

func (c *tickClock) Now() time.Time {
	c.t = c.t.Add(time.Second)
	return c.t
}
