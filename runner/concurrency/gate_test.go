package concurrency

import (
	"context"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// waiting reports how many waiters the gate holds.
func waiting(g *Gate) int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return len(g.high) + len(g.low)
}

// waitFor polls until cond holds (the waiters are goroutines).
func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	for i := 0; i < 2000; i++ {
		if cond() {
			return
		}
		time.Sleep(time.Millisecond)
	}
	t.Fatal("condition never held")
}

func TestGateFollowUpsFirst(t *testing.T) {
	g := NewGate(1)
	ctx := context.Background()
	if err := g.Acquire(ctx, false); err != nil {
		t.Fatal(err)
	}
	order := make(chan string, 3)
	enqueue := func(name string, followUp bool, before int) {
		go func() {
			if err := g.Acquire(ctx, followUp); err != nil {
				t.Error(err)
				return
			}
			order <- name
		}()
		waitFor(t, func() bool { return waiting(g) == before+1 })
	}
	enqueue("first-a", false, 0)
	enqueue("first-b", false, 1)
	enqueue("repair", true, 2)
	var got []string
	for i := 0; i < 3; i++ {
		g.Release()
		got = append(got, <-order)
	}
	want := []string{"repair", "first-a", "first-b"}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("admission order %v, want %v", got, want)
		}
	}
	g.Release()
	if g.inFlight != 0 || g.MaxInFlight() != 1 {
		t.Errorf("inFlight %d max %d, want 0 and 1", g.inFlight, g.MaxInFlight())
	}
}

func TestGateCapacity(t *testing.T) {
	g := NewGate(3)
	for i := 0; i < 3; i++ {
		if err := g.Acquire(context.Background(), false); err != nil {
			t.Fatal(err)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	if err := g.Acquire(ctx, true); err == nil {
		t.Fatal("a fourth call got a slot of a gate of 3")
	}
	if waiting(g) != 0 {
		t.Errorf("a cancelled waiter stayed queued")
	}
	g.Release()
	if err := g.Acquire(context.Background(), false); err != nil {
		t.Fatal(err)
	}
	if g.MaxInFlight() != 3 {
		t.Errorf("MaxInFlight = %d, want 3", g.MaxInFlight())
	}
}

func TestGateCancelAfterHandOverReturnsSlot(t *testing.T) {
	g := NewGate(1)
	_ = g.Acquire(context.Background(), false)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error)
	go func() { done <- g.Acquire(ctx, false) }()
	waitFor(t, func() bool { return waiting(g) == 1 })
	// Hand the slot over and cancel at once: whichever wins, no slot leaks.
	g.Release()
	cancel()
	if err := <-done; err == nil {
		g.Release()
	}
	if err := g.Acquire(context.Background(), false); err != nil {
		t.Fatal(err)
	}
	g.Release()
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.inFlight != 0 {
		t.Errorf("inFlight = %d after all releases, want 0", g.inFlight)
	}
}

func TestGatePriorityOrder(t *testing.T) {
	g := NewGate(1)
	if err := g.Acquire(context.Background(), false); err != nil {
		t.Fatal(err)
	}
	type arrival struct {
		name     string
		followUp bool
		prio     int
	}
	arrivals := []arrival{
		{"first-short", false, 10},
		{"first-long", false, 900},
		{"first-short-2", false, 10},
		{"repair-short", true, 5},
		{"first-unset", false, 0},
		{"repair-long", true, 700},
		{"first-mid", false, 300},
	}
	order := make(chan string, len(arrivals))
	for i, a := range arrivals {
		go func() {
			if err := g.Acquire(WithPriority(context.Background(), a.prio), a.followUp); err != nil {
				t.Error(err)
				return
			}
			order <- a.name
		}()
		waitFor(t, func() bool { return waiting(g) == i+1 })
	}
	var got []string
	for range arrivals {
		g.Release()
		got = append(got, <-order)
	}
	want := []string{"repair-long", "repair-short", "first-long", "first-mid", "first-short", "first-short-2", "first-unset"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("admission order (-want +got):\n%s", diff)
	}
}

func TestGateSetLimit(t *testing.T) {
	g := NewGate(2)
	ctx := context.Background()
	for i := 0; i < 2; i++ {
		if err := g.Acquire(ctx, false); err != nil {
			t.Fatal(err)
		}
	}
	admitted := make(chan int, 3)
	for i := 0; i < 3; i++ {
		go func() {
			if err := g.Acquire(ctx, false); err != nil {
				t.Error(err)
				return
			}
			admitted <- 1
		}()
	}
	waitFor(t, func() bool { return waiting(g) == 3 })
	if peak, blocked := g.Peak(); peak != 2 || !blocked {
		t.Errorf("Peak() = %d, %v; want 2, true", peak, blocked)
	}
	// Raising the limit admits two waiters at once.
	g.SetLimit(4)
	<-admitted
	<-admitted
	if g.InFlight() != 4 || waiting(g) != 1 || g.Limit() != 4 {
		t.Fatalf("after raising: in flight %d, waiting %d, limit %d; want 4, 1, 4", g.InFlight(), waiting(g), g.Limit())
	}
	// Lowering it cuts nothing: released slots go away until the calls in
	// flight are under the new limit; only then is the waiter admitted.
	g.SetLimit(2)
	g.Release()
	g.Release()
	if g.InFlight() != 2 || waiting(g) != 1 {
		t.Fatalf("after lowering and two releases: in flight %d, waiting %d; want 2, 1", g.InFlight(), waiting(g))
	}
	g.Release()
	<-admitted
	if g.InFlight() != 2 || waiting(g) != 0 {
		t.Errorf("the waiter took the freed slot: in flight %d, waiting %d; want 2, 0", g.InFlight(), waiting(g))
	}
	if peak, blocked := g.Peak(); peak != 4 || !blocked {
		t.Errorf("Peak() = %d, %v; want 4, true", peak, blocked)
	}
	g.Release()
	g.Release()
	if peak, blocked := g.Peak(); peak != 2 || blocked {
		t.Errorf("Peak() of a quiet interval = %d, %v; want 2 (in flight at its start), false", peak, blocked)
	}
	g.SetLimit(0)
	if g.Limit() != 1 {
		t.Errorf("SetLimit(0): limit %d, want 1", g.Limit())
	}
}
