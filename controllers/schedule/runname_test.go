package schedule

import (
	"testing"
	"time"
)

func mustTime(t *testing.T, s string) time.Time {
	t.Helper()
	v, err := time.Parse(time.RFC3339, s)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func TestRunName(t *testing.T) {
	got := runName("nightly", mustTime(t, "2026-12-01T00:05:00Z"))
	if want := "nightly-29934725"; got != want {
		t.Errorf("runName = %q, want %q", got, want)
	}
}
