package controllers

import (
	"context"
	"errors"
	"testing"
	"time"
)

func TestKueueWatch(t *testing.T) {
	answers := []struct {
		ok  bool
		err error
	}{{false, nil}, {false, errors.New("discovery: connection refused")}, {true, nil}}
	calls := 0
	w := KueueWatch{Interval: time.Millisecond, Served: func() (bool, error) {
		a := answers[min(calls, len(answers)-1)]
		calls++
		return a.ok, a.err
	}}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := w.Start(ctx); !errors.Is(err, ErrKueueInstalled) {
		t.Fatalf("Start = %v, want ErrKueueInstalled", err)
	}
	if calls != 3 {
		t.Errorf("%d look-ups, want 3 (not served, an error, served)", calls)
	}
	if w.NeedLeaderElection() {
		t.Error("a replica that is not the leader must restart too")
	}
}

func TestKueueWatchStopsWithItsContext(t *testing.T) {
	w := KueueWatch{Interval: time.Millisecond, Served: func() (bool, error) { return false, nil }}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- w.Start(ctx) }()
	time.Sleep(20 * time.Millisecond)
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("Start = %v after its context ended, want nil", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Start did not return after its context ended")
	}
}
